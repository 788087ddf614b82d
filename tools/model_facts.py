"""Architectures litgpt's configs do not carry, as the keys of their Hugging Face config.json files.

Each entry: `repo` (the Hub repository whose config.json the numbers are from: also the `source` of the catalog
entry), `config` (the config.json keys the estimator reads), `params_b` / `active_b` (the model card's or the
safetensors index's count, when stated: the generator checks its own count against them), `aliases`.
`same_as` makes an entry that shares another's architecture (fine-tunes, distills, releases). `source` replaces the
config.json address when the numbers come from elsewhere (a paper, an engine's loader).
Read by `tools/gen_models.py`; nothing here is imported at run time.
"""

from __future__ import annotations

from typing import Any

HF = "https://huggingface.co/{repo}/blob/main/config.json"


def llama(h: int, layers: int, heads: int, kv: int, inter: int, vocab: int, **kw: Any) -> dict[str, Any]:
    return {"model_type": "llama", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv, "intermediate_size": inter, "vocab_size": vocab, **kw}


def mla(h: int, layers: int, heads: int, q_lora: int | None, inter: int, moe_i: int, routed: int, shared: int,
        top: int, dense: int, vocab: int, **kw: Any) -> dict[str, Any]:
    """DeepSeek V2/V3-style config (MLA + fine-grained MoE): kv_lora_rank 512, rope 64, nope 128, v 128."""
    return {"model_type": "deepseek_v3", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": heads, "q_lora_rank": q_lora, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 128, "v_head_dim": 128, "intermediate_size": inter, "moe_intermediate_size": moe_i,
            "n_routed_experts": routed, "n_shared_experts": shared, "num_experts_per_tok": top,
            "first_k_dense_replace": dense, "vocab_size": vocab, **kw}


VISION_SIGLIP = {"hidden_size": 1152, "num_hidden_layers": 27, "intermediate_size": 4304, "hidden_act": "gelu",
                 "image_size": 896, "patch_size": 14}
VISION_QWEN25 = {"hidden_size": 1280, "depth": 32, "intermediate_size": 3420, "hidden_act": "silu",
                 "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2}
VISION_QWEN2 = {"embed_dim": 1280, "depth": 32, "mlp_ratio": 4, "hidden_act": "quick_gelu", "patch_size": 14,
                "spatial_merge_size": 2}
VISION_MLLAMA = {"hidden_size": 1280, "num_hidden_layers": 32, "num_global_layers": 8, "intermediate_size": 5120,
                 "hidden_act": "gelu", "image_size": 560, "patch_size": 14, "max_num_tiles": 4}
VISION_LLAMA4 = {"hidden_size": 1408, "num_hidden_layers": 34, "intermediate_size": 5632, "hidden_act": "gelu",
                 "image_size": 336, "patch_size": 14, "pixel_shuffle_ratio": 0.5}
VISION_PIXTRAL = {"hidden_size": 1024, "num_hidden_layers": 24, "intermediate_size": 4096, "hidden_act": "silu",
                  "image_size": 1024, "patch_size": 16}
VISION_CLIP_L = {"hidden_size": 1024, "num_hidden_layers": 24, "intermediate_size": 4096, "hidden_act": "quick_gelu",
                 "image_size": 336, "patch_size": 14}


def qwen2(h: int, layers: int, heads: int, kv: int, inter: int, vocab: int = 152064, **kw: Any) -> dict[str, Any]:
    return {"model_type": "qwen2", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv, "intermediate_size": inter, "vocab_size": vocab, **kw}


FACTS: list[dict[str, Any]] = [
    # --- Meta Llama 3.2 Vision, Llama 4 ---
    {"repo": "meta-llama/Llama-3.2-11B-Vision-Instruct", "params_b": 10.67, "aliases": ["llama 3.2 11b vision"],
     "config": {"model_type": "mllama", "vision_config": VISION_MLLAMA, "text_config": llama(
         4096, 40, 32, 8, 14336, 128256, cross_attention_layers=[3, 8, 13, 18, 23, 28, 33, 38])}},
    {"repo": "meta-llama/Llama-3.2-90B-Vision-Instruct", "params_b": 88.6, "aliases": ["llama 3.2 90b vision"],
     "config": {"model_type": "mllama", "vision_config": VISION_MLLAMA, "text_config": llama(
         8192, 100, 64, 8, 28672, 128256, cross_attention_layers=list(range(3, 100, 5)))}},
    {"repo": "meta-llama/Llama-4-Scout-17B-16E-Instruct", "params_b": 108.6, "active_b": 17.0,
     "aliases": ["llama 4 scout", "llama-4-scout", "llama4 scout", "llama 4 scout 17b", "llama-4-scout-17b"],
     "config": {"model_type": "llama4", "vision_config": VISION_LLAMA4, "text_config": {
         "model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 40,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
         "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "vocab_size": 202048,
         "attention_chunk_size": 8192, "no_rope_layer_interval": 4, "max_position_embeddings": 10485760}}},
    {"repo": "meta-llama/Llama-4-Maverick-17B-128E-Instruct", "params_b": 401.6, "active_b": 17.0,
     "aliases": ["llama 4 maverick", "llama-4-maverick", "llama4 maverick", "llama-4-maverick-17b"],
     "config": {"model_type": "llama4", "vision_config": VISION_LLAMA4, "text_config": {
         "model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 40,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
         "num_local_experts": 128, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "vocab_size": 202048,
         "attention_chunk_size": 8192, "no_rope_layer_interval": 4, "max_position_embeddings": 1048576}}},

    # --- Qwen 1.5 / 2 / 2.5-VL / 3 extras ---
    {"repo": "Qwen/Qwen1.5-0.5B", "params_b": 0.46, "config": qwen2(1024, 24, 16, 16, 2816, 151936,
                                                                      tie_word_embeddings=True)},
    {"repo": "Qwen/Qwen1.5-1.8B", "params_b": 1.84, "config": qwen2(2048, 24, 16, 16, 5504, 151936)},
    {"repo": "Qwen/Qwen1.5-4B", "params_b": 3.95, "config": qwen2(2560, 40, 20, 20, 6912, 151936)},
    {"repo": "Qwen/Qwen1.5-7B", "params_b": 7.72, "config": qwen2(4096, 32, 32, 32, 11008, 151936)},
    {"repo": "Qwen/Qwen1.5-14B", "params_b": 14.17, "config": qwen2(5120, 40, 40, 40, 13696, 152064)},
    {"repo": "Qwen/Qwen1.5-32B", "params_b": 32.51, "config": qwen2(5120, 64, 40, 8, 27392, 152064)},
    {"repo": "Qwen/Qwen1.5-72B", "params_b": 72.29, "config": qwen2(8192, 80, 64, 64, 24576, 152064)},
    {"repo": "Qwen/Qwen1.5-110B", "params_b": 111.2, "config": qwen2(8192, 80, 64, 8, 49152, 152064)},
    {"repo": "Qwen/Qwen1.5-MoE-A2.7B", "params_b": 14.3, "active_b": 2.7, "config": {
        "model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
        "num_key_value_heads": 16, "intermediate_size": 5632, "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4, "vocab_size": 151936}},
    {"repo": "Qwen/Qwen2-0.5B", "params_b": 0.49, "config": qwen2(896, 24, 14, 2, 4864, 151936,
                                                                    tie_word_embeddings=True)},
    {"repo": "Qwen/Qwen2-1.5B", "params_b": 1.54, "config": qwen2(1536, 28, 12, 2, 8960, 151936,
                                                                    tie_word_embeddings=True)},
    {"repo": "Qwen/Qwen2-7B", "params_b": 7.62, "config": qwen2(3584, 28, 28, 4, 18944)},
    {"repo": "Qwen/Qwen2-72B", "params_b": 72.71, "config": qwen2(8192, 80, 64, 8, 29568)},
    {"repo": "Qwen/Qwen2-57B-A14B", "params_b": 57.4, "active_b": 14.0, "config": {
        "model_type": "qwen2_moe", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
        "num_key_value_heads": 4, "intermediate_size": 18944, "moe_intermediate_size": 2560,
        "shared_expert_intermediate_size": 20480, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 151936}},
    {"repo": "Qwen/Qwen2-VL-2B-Instruct", "params_b": 2.21, "config": {
        "model_type": "qwen2_vl", **qwen2(1536, 28, 12, 2, 8960, 151936, tie_word_embeddings=True),
        "vision_config": {**VISION_QWEN2, "out_hidden_size": 1536}}},
    {"repo": "Qwen/Qwen2-VL-7B-Instruct", "params_b": 8.29, "config": {
        "model_type": "qwen2_vl", **qwen2(3584, 28, 28, 4, 18944),
        "vision_config": {**VISION_QWEN2, "out_hidden_size": 3584}}},
    {"repo": "Qwen/Qwen2-VL-72B-Instruct", "params_b": 73.4, "config": {
        "model_type": "qwen2_vl", **qwen2(8192, 80, 64, 8, 29568),
        "vision_config": {**VISION_QWEN2, "out_hidden_size": 8192}}},
    {"repo": "Qwen/Qwen2.5-VL-3B-Instruct", "params_b": 3.75, "config": {
        "model_type": "qwen2_5_vl", **qwen2(2048, 36, 16, 2, 11008, 151936, tie_word_embeddings=True),
        "vision_config": {**VISION_QWEN25, "out_hidden_size": 2048}}},
    {"repo": "Qwen/Qwen2.5-VL-7B-Instruct", "params_b": 8.29, "config": {
        "model_type": "qwen2_5_vl", **qwen2(3584, 28, 28, 4, 18944), "vision_config": VISION_QWEN25}},
    {"repo": "Qwen/Qwen2.5-VL-32B-Instruct", "params_b": 33.5, "config": {
        "model_type": "qwen2_5_vl", **qwen2(5120, 64, 40, 8, 27648), "vision_config": {**VISION_QWEN25,
                                                                                      "out_hidden_size": 5120}}},
    {"repo": "Qwen/Qwen2.5-VL-72B-Instruct", "params_b": 73.4, "config": {
        "model_type": "qwen2_5_vl", **qwen2(8192, 80, 64, 8, 29568), "vision_config": {**VISION_QWEN25,
                                                                                      "out_hidden_size": 8192}}},
    {"repo": "Qwen/Qwen3-Coder-480B-A35B-Instruct", "params_b": 480.0, "active_b": 35.0,
     "aliases": ["qwen3 coder 480b"], "config": {
         "model_type": "qwen3_moe", "hidden_size": 6144, "num_hidden_layers": 62, "num_attention_heads": 96,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "moe_intermediate_size": 2560,
         "num_experts": 160, "num_experts_per_tok": 8, "vocab_size": 151936}},
    {"repo": "Qwen/Qwen3-Coder-30B-A3B-Instruct", "same_as": "qwen3-30b-a3b", "aliases": ["qwen3 coder 30b"]},
    {"repo": "Qwen/Qwen2.5-Math-1.5B", "same_as": "qwen2.5-1.5b"},
    {"repo": "Qwen/Qwen2.5-Math-7B", "same_as": "qwen2.5-7b"},

    # --- Gemma 3 with its SigLIP tower (litgpt has the text part) ---
    {"repo": "google/gemma-3-4b-it", "params_b": 4.3, "config": {
        "model_type": "gemma3", "mm_tokens_per_image": 256, "vision_config": VISION_SIGLIP, "text_config": {
            "model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34, "num_attention_heads": 8,
            "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 10240, "vocab_size": 262208,
            "sliding_window": 1024, "sliding_window_pattern": 6, "hidden_activation": "gelu_pytorch_tanh"}}},
    {"repo": "google/gemma-3-12b-it", "params_b": 12.2, "config": {
        "model_type": "gemma3", "mm_tokens_per_image": 256, "vision_config": VISION_SIGLIP, "text_config": {
            "model_type": "gemma3_text", "hidden_size": 3840, "num_hidden_layers": 48, "num_attention_heads": 16,
            "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 15360, "vocab_size": 262208,
            "sliding_window": 1024, "sliding_window_pattern": 6, "hidden_activation": "gelu_pytorch_tanh"}}},
    {"repo": "google/gemma-3-27b-it", "params_b": 27.4, "config": {
        "model_type": "gemma3", "mm_tokens_per_image": 256, "vision_config": VISION_SIGLIP, "text_config": {
            "model_type": "gemma3_text", "hidden_size": 5376, "num_hidden_layers": 62, "num_attention_heads": 32,
            "num_key_value_heads": 16, "head_dim": 128, "intermediate_size": 21504, "vocab_size": 262208,
            "sliding_window": 1024, "sliding_window_pattern": 6, "hidden_activation": "gelu_pytorch_tanh"}}},
    # google/gemma-3-270m config.json; its KV layout (3 global + 15 sliding layers, 1 KV head x 256, window 512) is
    # what llama-server allocated in unsloth PR #5225's measurements (bench/data/measured_components.json).
    {"repo": "google/gemma-3-270m", "params_b": 0.268, "aliases": ["gemma-3-270m-it"], "config": {
        "model_type": "gemma3_text", "hidden_size": 640, "num_hidden_layers": 18, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 2048, "vocab_size": 262144,
        "sliding_window": 512, "sliding_window_pattern": 6, "max_position_embeddings": 32768}},
    {"repo": "google/gemma-3-1b-it", "params_b": 1.0, "config": {
        "model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 26, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912, "vocab_size": 262144,
        "sliding_window": 512, "sliding_window_pattern": 6}},

    # --- Mistral ---
    {"repo": "mistralai/Mistral-Nemo-Instruct-2407", "params_b": 12.25, "id": "mistral-nemo-12b",
     "aliases": ["mistral nemo", "mistral-nemo", "nemo 12b", "mistral nemo 12b", "mistral-nemo-base-2407"],
     "config": {"model_type": "mistral", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336, "vocab_size": 131072}},
    {"repo": "mistralai/Mistral-Small-Instruct-2409", "params_b": 22.2, "id": "mistral-small-22b-2409",
     "aliases": ["mistral small 22b", "mistral-small-22b", "mistral small 2409"],
     "config": {"model_type": "mistral", "hidden_size": 6144, "num_hidden_layers": 56, "num_attention_heads": 48,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 16384, "vocab_size": 32768}},
    {"repo": "mistralai/Codestral-22B-v0.1", "same_as": "mistral-small-22b-2409", "aliases": ["codestral"]},
    {"repo": "mistralai/Mistral-Small-24B-Instruct-2501", "params_b": 23.57, "id": "mistral-small-24b-2501",
     "aliases": ["mistral small 24b", "mistral-small-24b", "mistral small 3", "mistral-small-3",
                 "mistral small 3 24b", "mistral-small-24b-base-2501"],
     "config": {"model_type": "mistral", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 32768, "vocab_size": 131072}},
    {"repo": "mistralai/Mistral-Small-3.1-24B-Instruct-2503", "params_b": 24.0,
     "aliases": ["mistral small 3.1", "mistral-small-3.1", "mistral small 3.2", "mistral-small-3.2",
                 "mistral-small-3.2-24b-instruct-2506", "mistral small 3.1 24b", "mistral small 3.2 24b",
                 "magistral small", "magistral-small-2506", "magistral-small-2509"],
     "config": {"model_type": "mistral3", "vision_config": VISION_PIXTRAL, "text_config": {
         "model_type": "mistral", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 32768, "vocab_size": 131072}}},
    {"repo": "mistralai/Devstral-Small-2505", "same_as": "mistral-small-24b-2501",
     "aliases": ["devstral", "devstral small", "devstral-small-2507"]},
    {"repo": "mistralai/Pixtral-12B-2409", "params_b": 12.7, "aliases": ["pixtral", "pixtral 12b"],
     "config": {"model_type": "llava", "vision_config": VISION_PIXTRAL, "text_config": {
         "model_type": "mistral", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336, "vocab_size": 131072}}},
    {"repo": "mistralai/Ministral-8B-Instruct-2410", "params_b": 8.02, "aliases": ["ministral 8b", "ministral"],
     "config": {"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 131072}},

    # --- Microsoft Phi ---
    {"repo": "microsoft/Phi-3-medium-4k-instruct", "params_b": 13.96,
     "aliases": ["phi-3-medium", "phi 3 medium", "phi3 medium", "phi-3-medium-128k-instruct", "phi-3 14b"],
     "config": {"model_type": "phi3", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 40,
                "num_key_value_heads": 10, "intermediate_size": 17920, "vocab_size": 32064}},
    {"repo": "microsoft/Phi-3-small-8k-instruct", "params_b": 7.39,
     "aliases": ["phi-3-small", "phi 3 small", "phi3 small", "phi-3-small-128k-instruct", "phi-3 7b"],
     "config": {"model_type": "phi3small", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 100352,
                "hidden_act": "gegelu"}},
    {"repo": "microsoft/Phi-3.5-MoE-instruct", "params_b": 41.9, "active_b": 6.6,
     "aliases": ["phi-3.5-moe", "phi 3.5 moe", "phi3.5 moe", "phi-3.5 moe"],
     "config": {"model_type": "phimoe", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "intermediate_size": 6400, "num_local_experts": 16,
                "num_experts_per_tok": 2, "vocab_size": 32064}},
    {"repo": "microsoft/Phi-3.5-vision-instruct", "params_b": 4.15,
     "aliases": ["phi-3.5-vision", "phi 3.5 vision", "phi-3-vision", "phi-3-vision-128k-instruct"],
     "config": {"model_type": "phi3_v", "hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 32064,
                "vision_config": VISION_CLIP_L}},

    # --- DeepSeek ---
    {"repo": "deepseek-ai/DeepSeek-V2", "params_b": 235.7, "active_b": 21.0,
     "aliases": ["deepseek v2", "deepseek-v2-chat", "deepseek v2.5", "deepseek-v2.5", "deepseek-v2.5-1210",
                 "deepseek-coder-v2", "deepseek coder v2", "deepseek-coder-v2-instruct"],
     "config": mla(5120, 60, 128, 1536, 12288, 1536, 160, 2, 6, 1, 102400, model_type="deepseek_v2")},
    {"repo": "deepseek-ai/DeepSeek-V2-Lite", "params_b": 15.7, "active_b": 2.4,
     "aliases": ["deepseek v2 lite", "deepseek-v2-lite-chat", "deepseek-coder-v2-lite", "deepseek coder v2 lite",
                 "deepseek-coder-v2-lite-instruct"],
     "config": mla(2048, 27, 16, None, 10944, 1408, 64, 2, 6, 1, 102400, model_type="deepseek_v2")},
    {"repo": "deepseek-ai/DeepSeek-V3", "params_b": 671.0, "active_b": 37.0,
     "aliases": ["deepseek v3", "deepseek-v3-0324", "deepseek v3.1", "deepseek-v3.1", "deepseek-v3.1-terminus",
                 "deepseek v3.2", "deepseek-v3.2-exp", "deepseek-v3-base", "deepseek 671b"],
     "config": mla(7168, 61, 128, 1536, 18432, 2048, 256, 1, 8, 3, 129280,
                   quantization_config={"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})},
    {"repo": "deepseek-ai/DeepSeek-R1", "params_b": 671.0, "active_b": 37.0,
     "aliases": ["deepseek r1", "deepseek-r1-0528", "deepseek-r1-zero"],
     "config": mla(7168, 61, 128, 1536, 18432, 2048, 256, 1, 8, 3, 129280,
                   quantization_config={"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})},
    {"repo": "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "same_as": "qwen2.5-1.5b", "params_b": 1.78,
     "note": "built on Qwen2.5-Math-1.5B (untied embeddings)",
     "config": qwen2(1536, 28, 12, 2, 8960, 151936)},
    {"repo": "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "same_as": "qwen2.5-7b"},
    {"repo": "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "same_as": "qwen2.5-14b"},
    {"repo": "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "same_as": "qwen2.5-32b"},
    {"repo": "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "same_as": "llama-3.1-8b"},
    {"repo": "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "same_as": "llama-3.3-70b"},
    {"repo": "deepseek-ai/deepseek-llm-7b-base", "params_b": 6.91, "aliases": ["deepseek llm 7b", "deepseek 7b"],
     "config": llama(4096, 30, 32, 32, 11008, 102400)},
    {"repo": "deepseek-ai/deepseek-llm-67b-base", "params_b": 67.4, "aliases": ["deepseek llm 67b", "deepseek 67b"],
     "config": llama(8192, 95, 64, 8, 22016, 102400)},
    {"repo": "deepseek-ai/deepseek-coder-6.7b-instruct", "params_b": 6.74, "aliases": ["deepseek coder 6.7b"],
     "config": llama(4096, 32, 32, 32, 11008, 32256)},
    {"repo": "deepseek-ai/deepseek-coder-33b-instruct", "params_b": 33.3, "aliases": ["deepseek coder 33b"],
     "config": llama(7168, 62, 56, 8, 19200, 32256)},

    # --- OpenAI gpt-oss (MXFP4 experts, alternating 128-token sliding window) ---
    {"repo": "openai/gpt-oss-20b", "params_b": 20.9, "active_b": 3.6, "aliases": ["gpt oss 20b", "gptoss 20b"],
     "config": {"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
                "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "num_local_experts": 32,
                "experts_per_token": 4, "vocab_size": 201088, "sliding_window": 128, "attention_bias": True,
                "layer_types": ["sliding_attention", "full_attention"] * 12,
                "quantization_config": {"quant_method": "mxfp4"}}},
    {"repo": "openai/gpt-oss-120b", "params_b": 116.8, "active_b": 5.1, "aliases": ["gpt oss 120b", "gptoss 120b"],
     "config": {"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64,
                "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880, "num_local_experts": 128,
                "experts_per_token": 4, "vocab_size": 201088, "sliding_window": 128, "attention_bias": True,
                "layer_types": ["sliding_attention", "full_attention"] * 18,
                "quantization_config": {"quant_method": "mxfp4"}}},

    # --- Moonshot Kimi K2 (DeepSeek V3 architecture, 384 experts, FP8 weights) ---
    {"repo": "moonshotai/Kimi-K2-Instruct", "params_b": 1026.0, "active_b": 32.0,
     "aliases": ["kimi k2", "kimi-k2", "kimi k2 instruct", "kimi-k2-instruct-0905", "kimi-k2-base", "kimi k2 0905",
                 "kimi-k2-thinking"],
     "config": mla(7168, 61, 64, 1536, 18432, 2048, 384, 1, 8, 1, 163840,
                   quantization_config={"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})},

    # --- Zhipu GLM ---
    {"repo": "THUDM/glm-4-9b-chat", "params_b": 9.4, "aliases": ["glm-4-9b", "glm 4 9b", "glm4 9b", "glm-4-9b-0414"],
     "config": {"model_type": "chatglm", "hidden_size": 4096, "num_layers": 40, "num_attention_heads": 32,
                "multi_query_group_num": 2, "ffn_hidden_size": 13696, "padded_vocab_size": 151552,
                "add_qkv_bias": True}},
    {"repo": "THUDM/GLM-4-32B-0414", "params_b": 32.6, "aliases": ["glm-4-32b", "glm 4 32b", "glm-z1-32b-0414"],
     "config": {"model_type": "glm4", "hidden_size": 6144, "num_hidden_layers": 61, "num_attention_heads": 48,
                "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 23040, "vocab_size": 151552}},
    {"repo": "zai-org/GLM-4.5", "params_b": 355.0, "active_b": 32.0,
     "aliases": ["glm 4.5", "glm-4.5", "glm4.5", "glm-4.6", "glm 4.6", "glm-4.5-base"],
     "config": {"model_type": "glm4_moe", "hidden_size": 5120, "num_hidden_layers": 92, "num_attention_heads": 96,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "moe_intermediate_size": 1536,
                "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8,
                "first_k_dense_replace": 3, "vocab_size": 151552, "attention_bias": True}},
    {"repo": "zai-org/GLM-4.5-Air", "params_b": 106.0, "active_b": 12.0,
     "aliases": ["glm 4.5 air", "glm-4.5-air", "glm4.5 air", "glm-4.5-air-base"],
     "config": {"model_type": "glm4_moe", "hidden_size": 4096, "num_hidden_layers": 46, "num_attention_heads": 96,
                "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 10944, "moe_intermediate_size": 1408,
                "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8,
                "first_k_dense_replace": 1, "vocab_size": 151552, "attention_bias": True}},

    # --- 01.AI Yi ---
    {"repo": "01-ai/Yi-1.5-6B", "params_b": 6.06, "aliases": ["yi 1.5 6b", "yi-6b", "yi 6b"],
     "config": llama(4096, 32, 32, 4, 11008, 64000)},
    {"repo": "01-ai/Yi-1.5-9B", "params_b": 8.83, "aliases": ["yi 1.5 9b", "yi-9b", "yi 9b"],
     "config": llama(4096, 48, 32, 4, 11008, 64000)},
    {"repo": "01-ai/Yi-1.5-34B", "params_b": 34.39, "id": "yi-34b",
     "aliases": ["yi 1.5 34b", "yi-34b", "yi 34b", "yi-34b-chat", "yi-34b-200k"],
     "config": llama(7168, 60, 56, 8, 20480, 64000)},

    # --- Cohere Command R family ---
    {"repo": "CohereForAI/c4ai-command-r-v01", "params_b": 35.0,
     "aliases": ["command r", "command-r", "command-r 35b", "command r v01"],
     "config": {"model_type": "cohere", "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64,
                "num_key_value_heads": 64, "intermediate_size": 22528, "vocab_size": 256000,
                "tie_word_embeddings": True}},
    {"repo": "CohereForAI/c4ai-command-r-08-2024", "params_b": 32.3,
     "aliases": ["command r 08-2024", "command-r-08-2024", "command r 32b"],
     "config": {"model_type": "cohere", "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64,
                "num_key_value_heads": 8, "intermediate_size": 24576, "vocab_size": 256000,
                "tie_word_embeddings": True}},
    {"repo": "CohereForAI/c4ai-command-r-plus", "params_b": 103.8,
     "aliases": ["command r+", "command r plus", "command-r-plus", "command-r+", "command-r-plus-08-2024",
                 "c4ai-command-r-plus-08-2024"],
     "config": {"model_type": "cohere", "hidden_size": 12288, "num_hidden_layers": 64, "num_attention_heads": 96,
                "num_key_value_heads": 8, "intermediate_size": 33792, "vocab_size": 256000,
                "tie_word_embeddings": True}},
    {"repo": "CohereForAI/c4ai-command-r7b-12-2024", "params_b": 8.03,
     "aliases": ["command r7b", "command-r7b", "command r 7b"],
     "config": {"model_type": "cohere2", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 256000,
                "tie_word_embeddings": True, "sliding_window": 4096, "sliding_window_pattern": 4}},
    {"repo": "CohereForAI/c4ai-command-a-03-2025", "params_b": 111.0, "aliases": ["command a", "command-a"],
     "config": {"model_type": "cohere2", "hidden_size": 12288, "num_hidden_layers": 64, "num_attention_heads": 96,
                "num_key_value_heads": 8, "intermediate_size": 36864, "vocab_size": 256000,
                "tie_word_embeddings": True, "sliding_window": 4096, "sliding_window_pattern": 4}},

    # --- SmolLM3, OLMo 2 extras ---
    {"repo": "HuggingFaceTB/SmolLM3-3B", "params_b": 3.08, "aliases": ["smollm3", "smollm 3", "smollm3 3b"],
     "config": llama(2048, 36, 16, 4, 11008, 128256, tie_word_embeddings=True)},
    {"repo": "allenai/OLMo-2-0325-32B", "params_b": 32.2, "aliases": ["olmo 2 32b", "olmo-2-32b", "olmo2 32b"],
     "config": {"model_type": "olmo2", "hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 40,
                "num_key_value_heads": 8, "intermediate_size": 27648, "vocab_size": 100352}},
    {"repo": "allenai/OLMo-2-0425-1B", "params_b": 1.48, "aliases": ["olmo 2 1b", "olmo-2-1b", "olmo2 1b"],
     "config": {"model_type": "olmo2", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
                "num_key_value_heads": 16, "intermediate_size": 8192, "vocab_size": 100352}},

    # --- Models Russian users fine-tune ---
    {"repo": "yandex/YandexGPT-5-Lite-8B-pretrain", "params_b": 8.04,
     "aliases": ["yandexgpt 5 lite", "yandexgpt-5-lite", "yandexgpt lite", "yandexgpt-5-lite-8b",
                 "yandexgpt-5-lite-8b-instruct", "yandex gpt 5 lite", "yandexgpt 8b", "yandexgpt"],
     "config": llama(4096, 32, 32, 8, 14336, 129024)},
    {"repo": "t-tech/T-lite-it-1.0", "same_as": "qwen2.5-7b", "aliases": ["t-lite", "t lite", "t-lite 7b",
                                                                           "t-lite-it", "t-lite-instruct-0.1"]},
    {"repo": "t-tech/T-pro-it-1.0", "same_as": "qwen2.5-32b", "aliases": ["t-pro-it-1.0", "t-pro 1.0"]},
    {"repo": "t-tech/T-pro-it-2.0", "same_as": "qwen3-32b", "aliases": ["t-pro", "t pro", "t-pro-it", "t-pro 2.0",
                                                                          "t-pro 32b"]},
    {"repo": "t-tech/T-lite-it-2.1", "same_as": "qwen3-8b", "aliases": ["t-lite 2.1", "t-lite-it-2.1"]},
    {"repo": "ai-sage/GigaChat-20B-A3B-instruct", "params_b": 20.9, "active_b": 3.3,
     "aliases": ["gigachat 20b", "gigachat-20b-a3b", "gigachat 20b a3b", "gigachat-20b-a3b-base", "gigachat lite",
                 "gigachat"],
     # Not MLA: a DeepSeek-MoE (v1) layout with grouped-query attention. Stated: 28 layers, 16 attention heads,
     # 8 KV heads, 64 routed + 2 shared experts, a dense first layer 14,336 wide, 131k context (the GigaChat
     # paper, arXiv:2506.09440, section 3); llama.cpp loads it as LLM_ARCH_DEEPSEEK, whose 28-layer model it
     # names 20B (src/llama-model.cpp; ggml-org/llama.cpp#12652). Derived, not read from its config.json:
     # hidden 2048 (16 heads x 128), 6 routed experts per token and an expert width of 1792, the values that
     # give the card's 20.9B total / 3.3B active (counted: 20.6B / 3.35B); vocabulary 128256 unconfirmed.
     "source": "https://arxiv.org/abs/2506.09440 (GigaChat paper, section 3) and llama.cpp src/llama-model.cpp "
               "(LLM_ARCH_DEEPSEEK, 28 layers = 20B)",
     "note": "DeepSeek-MoE (v1) GQA layout; hidden 2048, expert width 1792 and 6 experts per token derived from the "
             "card's 20.9B / 3.3B",
     "config": {"model_type": "deepseek", "hidden_size": 2048, "num_hidden_layers": 28, "num_attention_heads": 16,
                "num_key_value_heads": 8, "intermediate_size": 14336, "moe_intermediate_size": 1792,
                "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
                "vocab_size": 128256, "max_position_embeddings": 131072}},
    {"repo": "ai-sage/GigaChat3-10B-A1.8B", "params_b": 10.7, "active_b": 1.8,
     "aliases": ["gigachat3 lightning", "gigachat 3 lightning", "gigachat3 10b", "gigachat3-10b-a1.8b-base"],
     "note": "DeepSeek-V3-style MLA MoE; count from the model card",
     "config": mla(1536, 26, 32, 1536, 8960, 1280, 64, 1, 4, 1, 262144)},
    {"repo": "ai-sage/GigaChat3-702B-A36B-preview", "params_b": 702.0, "active_b": 36.0,
     "aliases": ["gigachat3 ultra", "gigachat 3 ultra", "gigachat3 702b", "gigachat3-702b-a36b-preview-bf16"],
     "note": "DeepSeek-V3-style MLA MoE; count from the model card",
     "config": mla(7168, 64, 64, 1536, 18432, 2048, 256, 1, 8, 2, 262144)},
    # Community fine-tunes people name directly (the rest resolve by dropping the "saiga"/"vikhr" prefix).
    {"repo": "IlyaGusev/saiga_llama3_8b", "same_as": "llama-3-8b"},
    {"repo": "IlyaGusev/saiga_nemo_12b", "same_as": "mistral-nemo-12b"},
    {"repo": "IlyaGusev/saiga_yandexgpt_8b", "same_as": "yandexgpt-5-lite-8b"},
    {"repo": "IlyaGusev/saiga_gemma3_12b", "same_as": "gemma-3-12b"},
    {"repo": "IlyaGusev/saiga_mistral_7b_lora", "same_as": "mistral-7b"},
    {"repo": "Vikhrmodels/Vikhr-Nemo-12B-Instruct-R-21-09-24", "same_as": "mistral-nemo-12b",
     "aliases": ["vikhr nemo", "vikhr-nemo-12b"]},
    {"repo": "Vikhrmodels/Vikhr-Llama3.1-8B-Instruct-R-21-09-24", "same_as": "llama-3.1-8b",
     "aliases": ["vikhr llama 3.1 8b"]},
    {"repo": "Vikhrmodels/Vikhr-Qwen-2.5-1.5B-Instruct", "same_as": "qwen2.5-1.5b"},
    {"repo": "Vikhrmodels/Vikhr-Llama-3.2-1B-Instruct", "same_as": "llama-3.2-1b"},
    {"repo": "Vikhrmodels/Vikhr-Gemma-2B-instruct", "same_as": "gemma-2-2b"},
    {"repo": "Vikhrmodels/Vikhr-7B-instruct_0.4", "same_as": "mistral-7b"},
    {"repo": "Vikhrmodels/QVikhr-3-4B-Instruction", "same_as": "qwen3-4b", "aliases": ["qvikhr 3 4b"]},
    {"repo": "Vikhrmodels/QVikhr-3-8B-Instruction", "same_as": "qwen3-8b", "aliases": ["qvikhr 3 8b"]},
    {"repo": "RefalMachine/ruadapt_qwen2.5_32B_instruct", "same_as": "qwen2.5-32b"},
    {"repo": "Qwen/QwQ-32B", "same_as": "qwen2.5-32b", "aliases": ["qwq", "qwq 32b"]},
    # --- IBM Granite 3.x (model_type granite: gated SwiGLU, GQA, tied embeddings, 128K). The 3.3 8B config.json;
    # 3.1 8B / 2B: the model card's architecture table (embedding size, layers, heads, KV heads, MLP size, shared
    # input/output embeddings, 128K), vocabulary as the 3.1 2B config (49155) ---
    {"repo": "ibm-granite/granite-3.3-8b-instruct", "params_b": 8.17, "aliases": ["granite 3.3 8b", "granite 8b"],
     "config": llama(4096, 40, 32, 8, 12800, 49159, model_type="granite", tie_word_embeddings=True,
                     max_position_embeddings=131072)},
    {"repo": "ibm-granite/granite-3.1-8b-instruct", "params_b": 8.1, "aliases": ["granite 3.1 8b"],
     "source": "https://huggingface.co/ibm-granite/granite-3.1-8b-instruct (model card, 'Model Architecture')",
     "config": llama(4096, 40, 32, 8, 12800, 49155, model_type="granite", tie_word_embeddings=True,
                     max_position_embeddings=131072)},
    {"repo": "ibm-granite/granite-3.1-2b-instruct", "params_b": 2.5, "aliases": ["granite 3.1 2b", "granite 2b"],
     "source": "https://huggingface.co/ibm-granite/granite-3.1-2b-instruct (model card, 'Model Architecture')",
     "config": llama(2048, 40, 32, 8, 8192, 49155, model_type="granite", tie_word_embeddings=True,
                     max_position_embeddings=131072)},
    # --- BigCode StarCoder2 (model_type starcoder2: plain GELU MLP c_fc / c_proj, a 4096-token sliding window on
    # every layer, 16K; 3B and 7B tie their embeddings, 15B does not). Per-size fields as quoted from the configs in
    # NVIDIA/TensorRT-LLM tests/unittest/_torch/modeling/test_modeling_starcoder2.py; 15B's tie from its config.json,
    # 3B / 7B's from bigcode-project/starcoder2 issue #18 ("no lm_head.weight ... tied embedding? Yes") ---
    {"repo": "bigcode/starcoder2-3b", "aliases": ["starcoder2 3b", "starcoder 2 3b"],
     "config": {"model_type": "starcoder2", "hidden_size": 3072, "num_hidden_layers": 30, "num_attention_heads": 24,
                "num_key_value_heads": 2, "intermediate_size": 12288, "vocab_size": 49152,
                "hidden_act": "gelu_pytorch_tanh", "sliding_window": 4096, "max_position_embeddings": 16384,
                "tie_word_embeddings": True}},
    {"repo": "bigcode/starcoder2-7b", "aliases": ["starcoder2 7b", "starcoder 2 7b"],
     "config": {"model_type": "starcoder2", "hidden_size": 4608, "num_hidden_layers": 32, "num_attention_heads": 36,
                "num_key_value_heads": 4, "intermediate_size": 18432, "vocab_size": 49152,
                "hidden_act": "gelu_pytorch_tanh", "sliding_window": 4096, "max_position_embeddings": 16384,
                "tie_word_embeddings": True}},
    {"repo": "bigcode/starcoder2-15b", "aliases": ["starcoder2 15b", "starcoder 2 15b", "starcoder2"],
     "config": {"model_type": "starcoder2", "hidden_size": 6144, "num_hidden_layers": 40, "num_attention_heads": 48,
                "num_key_value_heads": 4, "intermediate_size": 24576, "vocab_size": 49152,
                "hidden_act": "gelu_pytorch_tanh", "sliding_window": 4096, "max_position_embeddings": 16384,
                "tie_word_embeddings": False}},
    # --- ByteDance Seed-OSS 36B (model_type seed_oss: a Llama-style dense stack with GQA; 80 query heads of 128,
    # so the attention is 10240 wide over a 5120 hidden size; bias on q/k/v only). Layers, heads, head size, hidden
    # size, the ~155K vocabulary and the 512K context: the model card's "Model Summary" (the README of
    # github.com/ByteDance-Seed/seed-oss); the exact vocabulary (155136), MLP width (27648) and untied head: the
    # 36B configuration as ported in public inference code (a `SeedOssConfig` with those values); the count from
    # that shape is the card's 36B ---
    {"repo": "ByteDance-Seed/Seed-OSS-36B-Instruct", "params_b": 36.15,
     "source": "https://huggingface.co/ByteDance-Seed/Seed-OSS-36B-Instruct (model card = github.com/ByteDance-Seed/"
               "seed-oss README, 'Model Summary'); vocab 155136, intermediate 27648, tie_word_embeddings false as the "
               "public SeedOssConfig ports of the 36B checkpoint",
     "aliases": ["seed-oss", "seed oss", "seed-oss-36b", "seed oss 36b", "seed-oss 36b", "seed-oss-36b-instruct",
                 "ByteDance-Seed/Seed-OSS-36B-Base", "seed-oss-36b-base"],
     "config": llama(5120, 64, 80, 8, 27648, 155136, model_type="seed_oss", head_dim=128,
                     tie_word_embeddings=False, max_position_embeddings=524288)},
    # --- NVIDIA Nemotron Nano 8B: the model card's "Network Architecture: Llama 3.1 8B Instruct" ---
    {"repo": "nvidia/Llama-3.1-Nemotron-Nano-8B-v1", "same_as": "llama-3.1-8b",
     "source": "https://huggingface.co/nvidia/Llama-3.1-Nemotron-Nano-8B-v1 (model card, 'Network Architecture')",
     "aliases": ["nemotron nano 8b", "llama 3.1 nemotron nano 8b"]},
]

# The longest context of each entry above whose `config` does not state `max_position_embeddings`, in tokens:
# the repository's config.json value, or the model card's figure where the card extends it (noted). An entry that
# is `same_as` another takes that one's context unless it is listed here. Unlisted: not known, not limited.
CONTEXT: dict[str, int] = {
    "meta-llama/Llama-3.2-11B-Vision-Instruct": 131072, "meta-llama/Llama-3.2-90B-Vision-Instruct": 131072,
    **{f"Qwen/Qwen1.5-{s}": 32768 for s in ("0.5B", "1.8B", "4B", "7B", "14B", "32B", "72B", "110B")},
    "Qwen/Qwen1.5-MoE-A2.7B": 8192,
    "Qwen/Qwen2-0.5B": 32768, "Qwen/Qwen2-1.5B": 32768,  # the cards: 32K (config.json says 131072)
    "Qwen/Qwen2-7B": 131072, "Qwen/Qwen2-72B": 131072,
    "Qwen/Qwen2-57B-A14B": 65536,  # the Instruct card: 65,536 tokens
    "Qwen/Qwen2-VL-2B-Instruct": 32768, "Qwen/Qwen2-VL-7B-Instruct": 32768, "Qwen/Qwen2-VL-72B-Instruct": 32768,
    "Qwen/Qwen2.5-VL-3B-Instruct": 128000, "Qwen/Qwen2.5-VL-7B-Instruct": 128000,
    "Qwen/Qwen2.5-VL-32B-Instruct": 128000, "Qwen/Qwen2.5-VL-72B-Instruct": 128000,
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": 262144, "Qwen/Qwen3-Coder-30B-A3B-Instruct": 262144,
    "google/gemma-3-1b-it": 32768, "google/gemma-3-4b-it": 131072, "google/gemma-3-12b-it": 131072,
    "google/gemma-3-27b-it": 131072,
    "mistralai/Mistral-Nemo-Instruct-2407": 131072,  # the card: 128k (config.json says 1024000)
    "mistralai/Mistral-Small-Instruct-2409": 32768, "mistralai/Mistral-Small-24B-Instruct-2501": 32768,
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": 131072, "mistralai/Devstral-Small-2505": 131072,
    "mistralai/Pixtral-12B-2409": 131072, "mistralai/Ministral-8B-Instruct-2410": 32768,
    "microsoft/Phi-3-medium-4k-instruct": 4096, "microsoft/Phi-3-small-8k-instruct": 8192,
    "microsoft/Phi-3.5-MoE-instruct": 131072, "microsoft/Phi-3.5-vision-instruct": 131072,
    "deepseek-ai/DeepSeek-V2": 163840, "deepseek-ai/DeepSeek-V2-Lite": 163840, "deepseek-ai/DeepSeek-V3": 163840,
    "deepseek-ai/DeepSeek-R1": 163840, "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": 131072,
    "deepseek-ai/deepseek-llm-7b-base": 4096, "deepseek-ai/deepseek-llm-67b-base": 4096,
    "deepseek-ai/deepseek-coder-6.7b-instruct": 16384, "deepseek-ai/deepseek-coder-33b-instruct": 16384,
    "openai/gpt-oss-20b": 131072, "openai/gpt-oss-120b": 131072,
    "moonshotai/Kimi-K2-Instruct": 131072,
    "THUDM/glm-4-9b-chat": 131072, "THUDM/GLM-4-32B-0414": 32768, "zai-org/GLM-4.5": 131072,
    "zai-org/GLM-4.5-Air": 131072,
    "01-ai/Yi-1.5-6B": 4096, "01-ai/Yi-1.5-9B": 4096, "01-ai/Yi-1.5-34B": 4096,
    # Command R: config.json says 8192, the cards 128k
    "CohereForAI/c4ai-command-r-v01": 131072, "CohereForAI/c4ai-command-r-08-2024": 131072,
    "CohereForAI/c4ai-command-r-plus": 131072, "CohereForAI/c4ai-command-r7b-12-2024": 131072,
    "HuggingFaceTB/SmolLM3-3B": 65536,
    "allenai/OLMo-2-0325-32B": 4096, "allenai/OLMo-2-0425-1B": 4096,
    "yandex/YandexGPT-5-Lite-8B-pretrain": 32768,
}
