"""Each architecture effect against a hand calculation: MoE (memory = all experts, compute = active ones), MLA's
latent KV cache, sliding-window and hybrid attention, head_dim != hidden/heads, tied embeddings, vision towers and
cross-attention, native quantisation (MXFP4, FP8), quantised bases for adapters and GGUF bits per weight."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.defaults import complete
from core.estimator import GIB, QUANT_BYTES, estimate_memory, kv_bytes_per_token, kv_cache_bytes
from core.models import SWA_BATCH_TOKENS, arch_from_config, count_params, get_model
from core.parser import ParseError, parse_workload
from core.workload import Engine, Method, Quant, Workload

REPO = Path(__file__).resolve().parents[2]


def w(text: str) -> Workload:
    return complete(parse_workload(text))[0]


# --- MoE -----------------------------------------------------------------------------------------------------------

def test_moe_memory_counts_every_expert_compute_the_active_ones() -> None:
    a = get_model("qwen3-30b-a3b")
    # by hand (config.json): 48 layers; attention q 2048x4096, k/v 2048x512, o 4096x2048; 128 experts of
    # 3 x 2048 x 768, 8 per token; router 2048x128; embeddings 151936 x 2048 twice
    attn = 2048 * 4096 * 2 + 2048 * 512 * 2
    expert = 3 * 2048 * 768
    common = 48 * (attn + 2048 * 128 + 2 * 2048) + 2048 + 2 * 151936 * 2048
    total, active = common + 48 * 128 * expert, common + 48 * 8 * expert
    assert count_params(a) == (pytest.approx(total / 1e9), pytest.approx(active / 1e9))
    inf = w("Qwen3-30B-A3B inference")
    assert inf.params_b == pytest.approx(total / 1e9, rel=1e-3)
    assert inf.active_params_b == pytest.approx(active / 1e9, rel=1e-3)
    assert estimate_memory(inf).breakdown.weights == pytest.approx(total * 2 / GIB, rel=1e-3)
    # compute and time follow the active parameters (what core.timecost reads), a tenth of the total here
    assert w("Qwen3-30B-A3B lora").active_params_b < w("Qwen3-32B lora").active_params_b / 5


def test_shared_experts_and_dense_layers_deepseek_v3() -> None:
    a = get_model("deepseek-v3")
    # 61 layers, the first 3 dense (MLP 18432); 58 MoE layers: 256 routed + 1 shared expert of 2048, 8 routed active
    assert (a.experts, a.experts_active, a.moe_layers, a.dense_intermediate, a.shared_intermediate) == \
        (256, 8, 58, 18432, 2048)
    assert a.params_b == pytest.approx(671, rel=0.01) and a.active_params_b == pytest.approx(37, rel=0.03)


# --- MLA -----------------------------------------------------------------------------------------------------------

def test_mla_caches_the_latent_not_full_heads() -> None:
    v3 = get_model("deepseek-v3")
    # by hand: per token and layer the 512-wide latent + the 64-wide rope key, 2 bytes each, 61 layers
    per_token = 61 * (512 + 64) * 2
    assert kv_bytes_per_token(v3, "bf16") == per_token
    assert kv_cache_bytes(v3, 32768, "bf16") == per_token * 32768
    full_heads = 2 * 61 * 128 * (128 + 64) * 2  # what caching every head's K and V would take
    assert kv_bytes_per_token(v3) < full_heads / 50
    est = estimate_memory(w("DeepSeek-V3 inference 32k, 4 users on 8 H200"))
    assert est.breakdown.kv_cache == pytest.approx(per_token * 32768 * 4 / GIB, rel=1e-6)  # replicated by TP
    k2 = get_model("kimi-k2")
    assert k2.attention == "mla" and kv_bytes_per_token(k2, "fp8") == 61 * 576 * 1


def test_gigachat_20b_is_a_gqa_deepseek_moe_not_mla() -> None:
    # llama.cpp loads GigaChat-20B-A3B as LLM_ARCH_DEEPSEEK (v1 MoE, grouped-query attention): its cache is K and V
    # of 8 heads x 128 on 28 layers, 3.6x the 576-wide latent the earlier MLA guess gave per layer
    g = get_model("gigachat-20b-a3b")
    assert (g.attention, g.layers, g.heads, g.kv_heads, g.experts, g.experts_active) == ("gqa", 28, 16, 8, 64, 6)
    assert kv_bytes_per_token(g, "bf16") == 28 * 2 * 8 * 128 * 2
    assert g.max_context == 131072


def test_tensor_parallel_replicates_mla_down_projections_and_routers() -> None:
    # vLLM keeps MLA's q_a / kv_a projections and the MoE routers whole on every rank. DeepSeek-R1 FP8 on 8 GPUs:
    # 61 layers x 7168 x (1536 + 512 + 64) in FP8, 58 MoE layers x 7168 x 256 router in 16-bit, on each GPU; the
    # rest (16-bit embeddings, FP8 everything else) split 8 ways. Gaudi's vLLM printed 79.41 GiB per device
    # (bench/data/measured_components.json); by hand 79.25.
    r1 = get_model("deepseek-r1")
    load = w("DeepSeek-R1 inference on 8 H200")
    assert load.quant is Quant.FP8 and load.gpus == 8 and load.strategy.value == "tp"
    embed = 2 * 129280 * 7168
    total = (r1.params_b * 1e9 - embed) * 1.0 + embed * 2.0
    replicated = 61 * 7168 * (1536 + 512 + 64) * 1.0 + 58 * 7168 * 256 * 2.0
    by_hand = ((total - replicated) / 8 + replicated) / GIB
    assert estimate_memory(load).breakdown.weights == pytest.approx(by_hand, rel=1e-9)
    assert 79.0 < by_hand < 79.41
    # a dense model has nothing replicated: its weights split exactly
    dense = w("llama-3.1-70b inference on 4 H100")
    assert dense.strategy.value == "tp"
    assert estimate_memory(dense).breakdown.weights == pytest.approx(
        estimate_memory(w("llama-3.1-70b inference")).breakdown.weights / 4, rel=1e-12)


# --- sliding window / hybrid -------------------------------------------------------------------------------------

def test_gemma3_hybrid_local_global_kv_by_hand() -> None:
    g = get_model("gemma-3-27b")
    # 62 layers: every 6th global (10), 52 local with a 1024-token window; K+V of 16 heads x 128, 2 bytes.
    # A local layer keeps its window plus the batch being evaluated (512 tokens, llama.cpp's n_ubatch).
    per_layer_token = 2 * 16 * 128 * 2
    assert (g.attention, g.window, g.local_layers, g.layers) == ("hybrid", 1024, 52, 62)
    assert SWA_BATCH_TOKENS == 512
    ctx = 131072
    assert kv_cache_bytes(g, ctx) == per_layer_token * (10 * ctx + 52 * (1024 + 512))
    assert kv_cache_bytes(g, 1536) == per_layer_token * 62 * 1536  # up to window + batch every layer holds all
    assert kv_cache_bytes(g, 4096) == per_layer_token * (10 * 4096 + 52 * 1536)
    # per-token cost at a long context is about the global layers' only
    assert kv_bytes_per_token(g, context=ctx) == pytest.approx(per_layer_token * (10 + 52 * 1536 / ctx))
    assert kv_bytes_per_token(g) == per_layer_token * 62  # no context: the upper bound
    est = estimate_memory(w("gemma-3-27b inference 128k"))
    assert est.breakdown.kv_cache == pytest.approx(kv_cache_bytes(g, ctx) / GIB)


def test_gemma2_alternating_and_mistral_sliding_and_gpt_oss() -> None:
    g2 = get_model("gemma-2-9b")
    assert (g2.attention, g2.window, g2.local_layers) == ("hybrid", 4096, 21)
    assert kv_cache_bytes(g2, 8192) == 2 * 8 * 256 * 2 * (21 * 8192 + 21 * (4096 + 512))
    m = get_model("mistral-7b")  # v0.1: every layer slides over 4096 tokens
    assert m.attention == "sliding" and kv_cache_bytes(m, 32768) == kv_cache_bytes(m, 4096 + 512)
    assert get_model("mistral-7b-v0.3").attention == "gqa"
    oss = get_model("gpt-oss-120b")
    assert (oss.attention, oss.window, oss.local_layers, oss.head_dim) == ("hybrid", 128, 18, 64)
    assert kv_cache_bytes(oss, 65536) == 2 * 8 * 64 * 2 * (18 * 65536 + 18 * (128 + 512))


def test_sliding_window_from_a_config_json() -> None:
    cfg = {"model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4,
           "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
           "sliding_window": 512, "layer_types": ["sliding_attention"] * 5 + ["full_attention"]}
    a = arch_from_config(cfg, "x")
    assert (a.window, a.local_layers, a.attention) == (512, 5, "hybrid")  # what layer_types says, not 26
    qwen = arch_from_config({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
                             "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
                             "vocab_size": 151936, "sliding_window": 32768, "use_sliding_window": False}, "q")
    assert qwen.window == 0 and qwen.attention == "gqa"


# --- head_dim, tied embeddings, towers -----------------------------------------------------------------------------

def test_head_dim_that_is_not_hidden_over_heads() -> None:
    q = get_model("qwen3-0.6b")  # hidden 1024, 16 heads, head_dim 128 (not 64)
    assert (q.hidden, q.heads, q.head_dim, q.kv_heads, q.layers) == (1024, 16, 128, 8, 28)
    assert kv_bytes_per_token(q) == 2 * 28 * 8 * 128 * 2
    g = get_model("gemma-7b")  # hidden 3072, 16 heads of 256
    assert g.head_dim == 256 and g.q_dim == 4096 != g.hidden


def test_lora_on_a_gelu_mlp_adapts_the_matrices_it_has() -> None:
    """GPT-NeoX, Falcon and Phi-2 have a two-matrix MLP (no gate): "all-linear" is q, k, v, o, up and down (this
    was a KeyError traceback for every one of them)."""
    from core.estimator import adapter_params
    from core.models import MODELS

    a = get_model("pythia-1b")  # hidden 2048, 16 layers, 8 heads of 256, MLP 8192
    assert a.mlp_matrices == 2
    per_layer = 4 * (2048 + 2048) + (2048 + 8192) * 2  # q, k, v, o; up and down
    assert adapter_params(a, 16, "all-linear") == 16 * per_layer * 16
    for arch in (m for m in MODELS if m.mlp_matrices == 2):
        lora = w(f"{arch.id} lora ctx 256")
        assert estimate_memory(lora).trainable_params_b * 1e9 == pytest.approx(
            adapter_params(arch, 16, "all-linear")), arch.id


def test_tied_embeddings_counted_once() -> None:
    a = get_model("llama-3.2-1b")
    emb = 128256 * 2048
    assert a.tied_embeddings and a.embedding_params_b == pytest.approx(emb / 1e9)
    assert a.params_b == pytest.approx(1.236, rel=0.005)  # an untied count would be 1.50


def test_vision_tower_counts_and_cross_attention_caches_no_text() -> None:
    v = get_model("llama-3.2-11b-vision")
    assert v.vision_params_b > 0.5 and v.params_b == pytest.approx(10.67)
    assert v.cross_layers == 8 and v.kv_layers == 32
    assert kv_bytes_per_token(v) == 2 * 32 * 8 * 128 * 2  # the 8 cross-attention layers hold the image only
    g = get_model("gemma-3-27b")
    assert g.vision_params_b == pytest.approx(0.42, rel=0.05)


# --- native quantisation and quantised bases --------------------------------------------------------------------

def test_gpt_oss_mxfp4_experts_by_default() -> None:
    inf = w("gpt-oss-120b inference")
    assert inf.quant is Quant.MXFP4
    a = inf.arch
    experts = 36 * 128 * 3 * 2880 * 2880  # the routed experts: 4.25 bits each
    by_hand = experts * 4.25 / 8 + (a.params_b * 1e9 - experts) * 2
    assert estimate_memory(inf).breakdown.weights == pytest.approx(by_hand / GIB, rel=1e-6)
    assert 58 < by_hand / GIB < 64  # the ~61 GiB checkpoint that fits one 80 GB card
    assert w("gpt-oss-120b inference unquantized").quant is Quant.NONE  # the user says otherwise
    assert w("gpt-oss-20b lora").quant is Quant.NONE  # adapters train on the dequantised bf16 weights


def test_deepseek_v3_fp8_weights_by_default() -> None:
    inf = w("DeepSeek-V3 inference")
    assert inf.quant is Quant.FP8
    a = inf.arch
    by_hand = (a.params_b - a.embedding_params_b) * 1e9 * 1.0 + a.embedding_params_b * 1e9 * 2
    assert estimate_memory(inf).breakdown.weights == pytest.approx(by_hand / GIB, rel=1e-6)


@pytest.mark.parametrize(("phrase", "quant"), [
    ("Qwen2.5-7B lora gptq", Quant.GPTQ_INT4), ("Qwen2.5-7B qlora gptq", Quant.GPTQ_INT4),
    ("Qwen2.5-7B qlora gptq int8", Quant.GPTQ_INT8), ("Qwen2.5-7B qlora awq", Quant.AWQ),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 QLoRA", Quant.GPTQ_INT4), ("Qwen2.5-7B lora int8", Quant.INT8),
    ("Qwen2.5-7B lora nf4", Quant.NF4), ("Qwen2.5-7B qlora", Quant.NF4),
])
def test_adapters_on_quantised_bases(phrase: str, quant: Quant) -> None:
    wl = w(phrase)
    assert wl.quant is quant and wl.method in (Method.LORA, Method.QLORA)
    a = wl.arch
    # base: quantised linears, 16-bit embeddings (bnb bases: what their block scales cost)
    by_hand = (a.params_b - a.embedding_params_b) * 1e9 * QUANT_BYTES[quant] + a.embedding_params_b * 1e9 * 2
    if quant in (Quant.NF4, Quant.INT8):  # the default HF Trainer + PEFT casts what is not quantised to fp32
        assert wl.engine is Engine.HF_PEFT
        by_hand += (a.embedding_params_b * 1e9 + (2 * a.layers + 1) * a.hidden) * 2
    assert estimate_memory(wl).breakdown.weights == pytest.approx(by_hand / GIB, rel=1e-6)


def test_gguf_at_real_bits_per_weight() -> None:
    assert QUANT_BYTES[Quant.Q4_K_M] * 8 == pytest.approx(4.85, abs=0.06)  # not 4
    wl = w("Llama-3.1-8B inference q4_k_m")
    assert estimate_memory(wl).breakdown.weights == pytest.approx(8.03e9 * QUANT_BYTES[Quant.Q4_K_M] / GIB, rel=0.01)
    for q in ("q2_k", "q3_k_m", "q4_0", "q4_k_s", "q5_k_s", "q5_k_m", "q6_k", "q8_0"):
        assert w(f"llama-3.1-8b inference {q}").quant.value == q
    with pytest.raises(ParseError):
        w("7B lora gguf")  # a GGUF file is for llama.cpp inference only


# --- --config naming -------------------------------------------------------------------------------------------

def test_config_file_names_its_model(tmp_path: Path) -> None:
    cfg = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "tie_word_embeddings": True}
    folder = tmp_path / "configs"
    folder.mkdir()
    named = folder / "config.json"
    named.write_text(json.dumps({**cfg, "_name_or_path": "acme/tiny-1b"}))
    plain = folder / "my-model.json"
    plain.write_text(json.dumps(cfg))
    for path, name in ((named, "acme/tiny-1b"), (plain, "my-model")):
        out = subprocess.run([sys.executable, "-m", "gpuradar.cli", "estimate", "lora", "--config", str(path),
                              "--json"], capture_output=True, text=True, cwd=REPO, timeout=120)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["workload"]["model"] == name and data["workload"]["model_source"] == "config"


# --- images for vision models ------------------------------------------------------------------------------------

def test_images_are_tokens_of_the_sequence() -> None:
    g = get_model("gemma-3-27b")
    assert g.image_tokens == 256  # config.json: mm_tokens_per_image
    wl = w("gemma-3-27b inference ctx 8k, 4 images")
    assert wl.images == 4 and wl.seq_len == 8192 + 4 * 256
    assert kv_cache_bytes(g, wl.seq_len) < kv_cache_bytes(g, 8192) * 1.2  # mostly local layers: a small increase
    # Qwen2.5-VL: a 1024 x 1024 image, 14-pixel patches merged 2 x 2: (1024 // 14)^2 // 4
    assert get_model("qwen2.5-vl-7b").image_tokens == (1024 // 14) ** 2 // 4
    # Llama 3.2 Vision: 560-pixel tiles of 14-pixel patches plus a class token, up to 4 tiles
    assert get_model("llama-3.2-11b-vision").image_tokens == ((560 // 14) ** 2 + 1) * 4
    lora = w("Qwen2.5-VL-7B lora ctx 1024, 2 изображения")
    assert lora.seq_len == 1024 + 2 * 1332 and lora.method is Method.LORA
    with pytest.raises(ParseError):
        w("llama-3.1-8b inference 2 images")  # a text-only model has no tower for them
