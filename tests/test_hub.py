"""Hugging Face Hub lookups against the stand-in Hub on 127.0.0.1: the real httpx code, the real database cache
(SQLite, or PostgreSQL with TEST_DATABASE_URL), every failure a code the front ends word in both languages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.hub import HubError, arch_from_hub, arch_from_record, arch_to_record, is_repo_name, safetensors_params
from core.models import count_params
from core.parser import parse_workload
from scrapers.hub import HubResolver, HubSettings, hub_error_msg, hub_name_to_resolve, with_hub_arch
from storage import hub_cache
from tests.support.hub_server import HubServer
from texts.i18n import render

# A Llama-style 7B config.json as the Hub serves it (keys of transformers' LlamaConfig).
LLAMA_LIKE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False,
              "_name_or_path": "acme/llama-ft"}
# by hand: 32 x (2*4096*4096 + 2*4096*1024 + 3*4096*14336) + 2*128256*4096 + norms = 8.03e9
LLAMA_LIKE_PARAMS = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 2 * 128256 * 4096


def test_repo_names() -> None:
    assert is_repo_name("acme/llama-ft") and is_repo_name("Qwen/Qwen2.5-7B-Instruct")
    for bad in ("acme", "acme/", "/x", "a/b/c", "http://x/y", "acme/../etc", ""):
        assert not is_repo_name(bad), bad


def test_config_to_arch_by_hand() -> None:
    arch = arch_from_hub("acme/llama-ft", LLAMA_LIKE, None)
    assert arch.params_b == pytest.approx(LLAMA_LIKE_PARAMS / 1e9, rel=1e-4)
    # the safetensors count, when plausible, is the checkpoint's own truth (towers, norms the shape misses)
    with_info = arch_from_hub("acme/llama-ft", LLAMA_LIKE, {"safetensors": {"total": 8_100_000_000}})
    assert with_info.params_b == pytest.approx(8.1)
    # a GPTQ checkpoint counts packed int32 words: not a parameter count
    packed = arch_from_hub("acme/llama-ft", LLAMA_LIKE,
                           {"safetensors": {"parameters": {"I32": 900_000_000, "F16": 1_200_000_000}}})
    assert packed.params_b == pytest.approx(LLAMA_LIKE_PARAMS / 1e9, rel=1e-4)
    assert safetensors_params({"safetensors": {"parameters": {"BF16": 3e9, "F32": 1e6}}}) == pytest.approx(3.001)
    # the record the cache stores reads back to the same architecture
    assert arch_from_record(arch_to_record(arch)) == arch


async def test_lookup_public_repo_and_in_process_cache(hub_server: HubServer) -> None:
    hub_server.add("acme/llama-ft", LLAMA_LIKE, params=8.03e9)
    resolver = HubResolver(hub_server.settings())
    arch = await resolver.resolve("acme/llama-ft")
    assert (arch.layers, arch.kv_heads, arch.params_b) == (32, 8, pytest.approx(8.03))
    assert arch.source.startswith("Hugging Face Hub")
    assert await resolver.resolve("ACME/Llama-FT") is arch  # the Hub's names are case-insensitive
    assert resolver.fetches == 1 and len(hub_server.requests) == 2  # info + config.json, once
    assert resolver.cached("acme/llama-ft") is arch


@pytest.mark.parametrize(("setup", "token", "code"), [
    ("missing", None, "not_found"),
    ("missing", "hf_x", "not_found"),
    ("gated", None, "gated"),
    ("gated", "hf_wrong", "forbidden"),
    ("noconfig", None, "not_found"),
    ("garbage", None, "unreadable"),
    ("not_lm", None, "unreadable"),
    ("slow", None, "offline"),
])
async def test_lookup_failures_are_codes(hub_server: HubServer, setup: str, token: str | None, code: str) -> None:
    if setup == "gated":
        hub_server.add("acme/model", LLAMA_LIKE, gated_token="hf_ok")
    elif setup == "noconfig":
        hub_server.add("acme/model", LLAMA_LIKE, has_config=False)
    elif setup == "garbage":
        hub_server.add("acme/model", "{not json")
    elif setup == "not_lm":
        hub_server.add("acme/model", {"model_type": "vit", "image_size": 224})
    elif setup == "slow":
        hub_server.add("acme/model", LLAMA_LIKE, delay=2.0)
    # generous timeouts where an answer is expected: a loaded machine must not read as "offline"
    resolver = HubResolver(hub_server.settings(token=token, timeout=0.5 if setup == "slow" else 5.0))
    with pytest.raises(HubError) as info:
        await resolver.resolve("acme/model")
    assert info.value.code == code and info.value.repo == "acme/model"
    for lang in ("en", "ru"):  # a sentence in each language, naming the repository and what to try instead
        text = render(lang, hub_error_msg(info.value))
        assert "acme/model" in text and ("13B" in text)


async def test_gated_repo_opens_with_the_token_and_sends_it(hub_server: HubServer) -> None:
    hub_server.add("acme/locked", LLAMA_LIKE, gated_token="hf_ok")
    arch = await HubResolver(hub_server.settings(token="hf_ok")).resolve("acme/locked")
    assert arch.hidden == 4096
    assert all(auth == "Bearer hf_ok" for _, auth in hub_server.requests)


async def test_an_outage_is_not_remembered_but_an_answer_is(hub_server: HubServer) -> None:
    hub_server.add("acme/llama-ft", LLAMA_LIKE)
    hub_server.failing = 2  # both requests of the first lookup get 503
    resolver = HubResolver(hub_server.settings())
    with pytest.raises(HubError) as info:
        await resolver.resolve("acme/llama-ft")
    assert info.value.code == "offline"
    assert (await resolver.resolve("acme/llama-ft")).layers == 32  # asked again, answered
    # "not found" is an answer: remembered, no second request
    with pytest.raises(HubError):
        await resolver.resolve("acme/nothing")
    before = len(hub_server.requests)
    with pytest.raises(HubError):
        await resolver.resolve("acme/nothing")
    assert len(hub_server.requests) == before


async def test_database_cache_is_shared_by_replicas_and_expires(
        hub_server: HubServer, sm: async_sessionmaker[AsyncSession]) -> None:
    hub_server.add("acme/llama-ft", LLAMA_LIKE, params=8.03e9)
    first = HubResolver(hub_server.settings(), sm)
    arch = await first.resolve("acme/llama-ft")
    second = HubResolver(hub_server.settings(), sm)  # another replica: empty memory, same database
    assert await second.resolve("acme/llama-ft") == arch
    assert first.fetches == 1 and second.fetches == 0 and len(hub_server.requests) == 2
    # negative answers are shared too
    with pytest.raises(HubError):
        await first.resolve("acme/missing")
    with pytest.raises(HubError) as info:
        await second.resolve("acme/missing")
    assert info.value.code == "not_found" and second.fetches == 0
    # expiry: a row past its time is not an answer
    await hub_cache.save(sm, "acme/llama-ft", "ok", arch_to_record(arch), timedelta(days=7),
                         now=datetime.now(UTC) - timedelta(days=8))
    assert await hub_cache.load(sm, "acme/llama-ft") is None
    third = HubResolver(hub_server.settings(), sm)
    await third.resolve("acme/llama-ft")
    assert third.fetches == 1
    assert await hub_cache.purge_expired(sm, now=datetime.now(UTC) + timedelta(days=30)) == 2


async def test_a_broken_cache_never_blocks_a_lookup(hub_server: HubServer, tmp_path) -> None:
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'unmigrated.db'}")  # no hub_models table
    try:
        hub_server.add("acme/llama-ft", LLAMA_LIKE)
        arch = await HubResolver(hub_server.settings(), make_sessionmaker(engine)).resolve("acme/llama-ft")
        assert arch.layers == 32
    finally:
        await engine.dispose()


def test_parsed_phrase_names_a_hub_model() -> None:
    spec = parse_workload("Acme/Llama-FT lora ctx 4k")
    assert spec.model == "Acme/Llama-FT" and hub_name_to_resolve(spec) == "Acme/Llama-FT"  # spelling kept
    # a repository the catalog knows needs no lookup, its quantisation comes from its name
    known = parse_workload("Qwen/Qwen2.5-7B-Instruct-AWQ inference")
    assert known.model == "qwen2.5-7b" and known.quant.value == "awq" and hub_name_to_resolve(known) is None
    arch = arch_from_hub("Acme/Llama-FT", LLAMA_LIKE)
    resolved = with_hub_arch(spec, "Acme/Llama-FT", arch)
    assert resolved.arch is arch and resolved.model_source == "hub"


def test_settings_from_environment() -> None:
    s = HubSettings.from_env({"HF_ENDPOINT": "https://hf-mirror.example/", "HF_TOKEN": "hf_abc"})
    assert s.endpoint == "https://hf-mirror.example" and s.token == "hf_abc"
    d = HubSettings.from_env({})
    assert d.endpoint == "https://huggingface.co" and d.token is None


def test_count_params_of_the_fixture_by_hand() -> None:
    arch = arch_from_hub("acme/llama-ft", LLAMA_LIKE)
    total, active = count_params(arch)
    assert total == active == pytest.approx((LLAMA_LIKE_PARAMS + 2 * 4096 * 32 + 4096) / 1e9)
