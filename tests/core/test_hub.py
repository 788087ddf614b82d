"""Hugging Face Hub lookups against the stand-in Hub on 127.0.0.1: the real httpx code, the real database cache
(SQLite, or PostgreSQL with TEST_DATABASE_URL), every failure a code the front ends word in both languages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from core.hub import (
    HubError,
    arch_from_hub,
    arch_from_record,
    arch_to_record,
    hub_error_msg,
    hub_name_to_resolve,
    is_repo_name,
    safetensors_params,
    with_hub_arch,
)
from core.models import count_params
from core.parser import parse_workload
from modelhub import HubResolver, HubSettings
from storage import hub_cache
from storage.hub_cache import HubCacheStore
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
    first = HubResolver(hub_server.settings(), HubCacheStore(sm))
    arch = await first.resolve("acme/llama-ft")
    second = HubResolver(hub_server.settings(), HubCacheStore(sm))  # another replica: empty memory, same database
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
    third = HubResolver(hub_server.settings(), HubCacheStore(sm))
    await third.resolve("acme/llama-ft")
    assert third.fetches == 1
    assert await hub_cache.purge_expired(sm, now=datetime.now(UTC) + timedelta(days=30)) == 2


async def test_a_broken_cache_never_blocks_a_lookup(hub_server: HubServer, tmp_path) -> None:
    from storage.db import make_engine, make_sessionmaker

    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'unmigrated.db'}")  # no hub_models table
    try:
        hub_server.add("acme/llama-ft", LLAMA_LIKE)
        resolver = HubResolver(hub_server.settings(), HubCacheStore(make_sessionmaker(engine)))
        arch = await resolver.resolve("acme/llama-ft")
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


# --- issue 24: lookups that always answer, bounded answers ------------------------------------------------------

HOSTILE = {
    "infinity_layers": '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": Infinity, '
                       '"num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}',
    "hidden_1e300": {**LLAMA_LIKE, "hidden_size": 1e300},
    "hidden_1e12": {**LLAMA_LIKE, "hidden_size": 10**12},
    "layers_1e9": {**LLAMA_LIKE, "num_hidden_layers": 10**9},
    "vocab_1e15": {**LLAMA_LIKE, "vocab_size": 10**15},
    "nested_deep": "[" * 100_000 + "]" * 100_000,
    "nested_in_object": '{"model_type": "llama", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "negative": {**LLAMA_LIKE, "num_attention_heads": -32},
    "nan": '{"model_type": "llama", "hidden_size": NaN, "num_hidden_layers": 32, "num_attention_heads": 32, '
           '"intermediate_size": 11008, "vocab_size": 32000}',
    "strings": {**LLAMA_LIKE, "hidden_size": "4096" * 1000},
    "list": [1, 2, 3],
    "head_dim_0": {**LLAMA_LIKE, "head_dim": 0},
    "head_dim_half": {**LLAMA_LIKE, "head_dim": 0.5},
    "mla_negative_rank": {**LLAMA_LIKE, "model_type": "deepseek_v3", "kv_lora_rank": -512,
                          "qk_rope_head_dim": 64, "qk_nope_head_dim": 128},
    "mla_rope_over_head": {**LLAMA_LIKE, "model_type": "deepseek_v3", "kv_lora_rank": 512,
                           "qk_rope_head_dim": 64, "qk_nope_head_dim": -60},
    "v_head_dim_negative": {**LLAMA_LIKE, "model_type": "deepseek_v3", "kv_lora_rank": 512, "v_head_dim": -128},
    "kv_heads_over_heads": {**LLAMA_LIKE, "num_key_value_heads": 64},
    "experts_active_over_experts": {**LLAMA_LIKE, "num_local_experts": 8, "num_experts_per_tok": 80},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_hostile_configs_answer_unreadable_to_every_waiter(
        hub_server: HubServer, sm: async_sessionmaker[AsyncSession], case: str) -> None:
    import asyncio

    hub_server.add("acme/evil", HOSTILE[case])
    resolver = HubResolver(hub_server.settings(), HubCacheStore(sm))
    # ten users asking at once: one request, and every one of them gets an answer (never a hang)
    results = await asyncio.wait_for(
        asyncio.gather(*(resolver.resolve("acme/evil") for _ in range(10)), return_exceptions=True), timeout=30)
    assert all(isinstance(r, HubError) and r.code == "unreadable" for r in results), results
    assert resolver.in_flight == 0 and resolver.fetches == 1
    # nothing absurd was stored as an architecture
    stored = await hub_cache.load(sm, "acme/evil")
    assert stored is not None and stored[0] == "unreadable" and stored[1] is None
    for lang in ("en", "ru"):
        assert "acme/evil" in render(lang, hub_error_msg(results[0]))  # type: ignore[arg-type]


async def test_an_unexpected_failure_still_answers_every_waiter(hub_server: HubServer, monkeypatch) -> None:
    import asyncio

    import modelhub.resolver as resolver_module

    gate = asyncio.Event()

    async def broken(repo: str, *_: object) -> None:
        await gate.wait()
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setattr(resolver_module, "fetch_arch", broken)
    resolver = HubResolver(hub_server.settings())
    waiters = [asyncio.ensure_future(resolver.resolve("acme/model")) for _ in range(5)]
    await asyncio.sleep(0)
    gate.set()
    results = await asyncio.wait_for(asyncio.gather(*waiters, return_exceptions=True), timeout=10)
    assert all(isinstance(r, HubError) and r.code == "offline" for r in results), results
    assert resolver.in_flight == 0
    assert resolver.cached("acme/model") is None  # a failure of ours is not an answer to remember


async def test_a_cancelled_lookup_answers_the_other_waiters(hub_server: HubServer) -> None:
    import asyncio

    hub_server.add("acme/slow", LLAMA_LIKE, delay=3.0)
    resolver = HubResolver(hub_server.settings())
    first = asyncio.ensure_future(resolver.resolve("acme/slow"))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(resolver.resolve("acme/slow"))
    await asyncio.sleep(0.05)
    first.cancel()
    with pytest.raises(HubError) as info:
        await asyncio.wait_for(second, timeout=10)
    assert info.value.code == "offline" and resolver.in_flight == 0


async def test_a_huge_config_is_not_read(hub_server: HubServer) -> None:
    hub_server.add("acme/huge", {**LLAMA_LIKE, "padding": "x" * (3 << 20)})
    resolver = HubResolver(hub_server.settings())
    with pytest.raises(HubError) as info:
        await resolver.resolve("acme/huge")
    assert info.value.code == "unreadable" and "bytes" in info.value.detail


def test_shapes_outside_published_ranges_are_unreadable() -> None:
    for bad in HOSTILE.values():
        if isinstance(bad, dict):
            with pytest.raises(HubError) as info:
                arch_from_hub("acme/x", bad)
            assert info.value.code == "unreadable"
    assert arch_from_hub("acme/x", LLAMA_LIKE).hidden == 4096  # a real shape passes


async def test_an_absurd_row_in_the_cache_is_looked_up_again(
        hub_server: HubServer, sm: async_sessionmaker[AsyncSession]) -> None:
    record = arch_to_record(arch_from_hub("acme/llama-ft", LLAMA_LIKE))
    await hub_cache.save(sm, "acme/llama-ft", "ok", {**record, "hidden": 10**12}, timedelta(days=7))
    hub_server.add("acme/llama-ft", LLAMA_LIKE)
    resolver = HubResolver(hub_server.settings(), HubCacheStore(sm))
    assert (await resolver.resolve("acme/llama-ft")).hidden == 4096 and resolver.fetches == 1


def test_names_that_are_hub_routes_are_not_repositories() -> None:
    for route in ("api/whoami", "API/whoami-v2", "datasets/foo", "spaces/bar", "models/x", "docs/hub", "settings/x"):
        assert not is_repo_name(route), route
        assert hub_name_to_resolve(parse_workload(f"{route} lora")) is None
        assert hub_name_to_resolve(parse_workload(f"https://huggingface.co/{route} lora")) is None
    assert is_repo_name("apiorg/model") and is_repo_name("meta-llama/Llama-3.1-8B")


async def test_api_paths_are_never_fetched(hub_server: HubServer) -> None:
    resolver = HubResolver(hub_server.settings(token="hf_secret"))
    with pytest.raises(HubError) as info:
        await resolver.resolve("api/whoami")
    assert info.value.code == "not_found" and hub_server.requests == []


async def test_redirects_only_to_the_hubs_own_hosts(hub_server: HubServer) -> None:
    from aiohttp import web

    other = HubServer()  # a second server standing for a foreign host (127.0.0.2 would need the alias)
    await other.start()
    try:
        other.add("acme/llama-ft", LLAMA_LIKE)
        # a redirect within the endpoint (a renamed repository) is followed, with the token
        hub_server.add("acme/llama-ft", LLAMA_LIKE)
        hub_server.redirects["/old/name/resolve/main/config.json"] = "/acme/llama-ft/resolve/main/config.json"
        hub_server.redirects["/api/models/old/name"] = "/api/models/acme/llama-ft"
        arch = await HubResolver(hub_server.settings(token="hf_ok")).resolve("old/name")
        assert arch.hidden == 4096
        assert all(auth == "Bearer hf_ok" for _, auth in hub_server.requests)
        # a redirect to another host (another port is another origin) is refused, and nothing reaches it
        hub_server.redirects["/evil/name/resolve/main/config.json"] = \
            f"{other.url}/acme/llama-ft/resolve/main/config.json"
        hub_server.add("evil/name", LLAMA_LIKE)
        with pytest.raises(HubError) as info:
            await HubResolver(hub_server.settings(token="hf_ok")).resolve("evil/name")
        assert info.value.code == "offline" and other.requests == []
        assert web  # aiohttp is the stand-in's server
    finally:
        await other.stop()


def test_redirect_targets() -> None:
    s = HubSettings(endpoint="https://huggingface.co")
    assert s.allows_redirect_to("https://huggingface.co/api/models/a/b")
    assert s.allows_redirect_to("https://cdn-lfs.huggingface.co/repos/x")
    assert s.allows_redirect_to("https://cas-bridge.xethub.hf.co/x")
    for bad in ("http://cdn-lfs.huggingface.co/x", "https://evil.example/x", "https://huggingface.co.evil.example/",
                "https://evilhuggingface.co/x", "http://127.0.0.1/x", "https://huggingface.co:8443/x"):
        assert not s.allows_redirect_to(bad), bad


async def test_the_global_cap_holds_lookups_in_flight(hub_server: HubServer) -> None:
    import asyncio

    for i in range(12):
        hub_server.add(f"acme/m{i}", LLAMA_LIKE, delay=0.3)
    settings = hub_server.settings().model_copy(update={"max_concurrent": 3, "timeout": 30.0})
    resolver = HubResolver(settings)
    await asyncio.gather(*(resolver.resolve(f"acme/m{i}") for i in range(12)))
    assert hub_server.max_active <= 2 * 3  # two requests per lookup, three lookups at once
    assert resolver.fetches == 12
