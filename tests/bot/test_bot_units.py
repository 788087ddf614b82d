"""Pure parts of the bot: texts in both languages, formatting, subscription text, tokens, the offer cache."""

from __future__ import annotations

import pytest

from bot.formatting import cut_input, money, split_message
from bot.offer_cache import CachedOffer, OfferCache
from bot.prefs import PREFS_KEPT, Prefs, PrefsCache
from bot.subscribe_query import parse_subscribe
from bot.tokens import TOKENS_KEPT, QueryTokens


@pytest.mark.parametrize(("text", "target", "fields"), [
    ("B200", "B200", {"gpu_ids": ["b200"]}),
    ("13B LoRA до 300 ₽/ч", "13B LoRA", {"max_price": 300.0, "price_currency": "RUB", "gpu_ids": None}),
    ("70B QLoRA under $2/h on runpod", "70B QLoRA", {"max_price": 2.0, "price_currency": "USD",
                                                     "providers": ["runpod"]}),
    ("H100, A100 80GB x8 monthly region msk", "H100, A100 80GB",
     {"gpu_ids": ["h100-pcie", "h100-sxm", "h100-nvl", "a100-80gb"], "gpu_count": 8, "billing": "monthly",
      "region": "msk"}),
    ("mixtral 8x7B qlora на vast или runpod", "mixtral 8x7B qlora", {"providers": ["runpod", "vastai"],
                                                                     "gpu_count": None}),
    ("13B LoRA до 300", "13B LoRA", {"max_price": 300.0, "price_currency": None}),
    # asked as a request, with the count in words or before the card, plural cards, other words for "under"
    ("notify me when an H100 is under $2 per hour", "H100",
     {"gpu_ids": ["h100-pcie", "h100-sxm", "h100-nvl"], "max_price": 2.0, "price_currency": "USD"}),
    ("сообщи, когда H100 будет дешевле 200 ₽ в час", "H100", {"max_price": 200.0, "price_currency": "RUB"}),
    ("напиши мне, когда появится H200 в наличии", "H200", {"gpu_ids": ["h200", "h200-nvl"], "max_price": None}),
    ("let me know when 70B QLoRA is under $2/h", "70B QLoRA", {"gpu_ids": None, "max_price": 2.0}),
    ("two H100s for less than $4/h", "H100s", {"gpu_ids": ["h100-pcie", "h100-sxm", "h100-nvl"], "gpu_count": 2,
                                               "max_price": 4.0}),
    ("две A100 дешевле чем 300 ₽", "A100", {"gpu_ids": ["a100-40gb", "a100-80gb"], "gpu_count": 2,
                                           "max_price": 300.0}),
    ("8 H100 on runpod", "H100", {"gpu_count": 8, "providers": ["runpod"]}),
    ("RTX 4090 ниже 40 руб/ч", "RTX 4090", {"gpu_ids": ["rtx-4090"], "max_price": 40.0, "price_currency": "RUB"}),
    ("Command A lora under $3", "Command A lora", {"gpu_ids": None, "max_price": 3.0}),  # not asked: "A" stays
    ("9999 H100", "H100", {"gpu_count": None, "problem": "count"}),
    ("четырёх H100 до 900 ₽/ч", "H100", {"gpu_count": 4, "max_price": 900.0}),  # ё as е, as the parser reads it
    ("сообщите, когда H100 появится в наличии", "H100", {"gpu_ids": ["h100-pcie", "h100-sxm", "h100-nvl"]}),
    ("уведомите, H200 в наличии", "H200", {"gpu_ids": ["h200", "h200-nvl"]}),
    # "not spot" is the opposite of spot: the on-demand (hourly) price
    ("A6000 до 60 р/ч, не спот", "A6000", {"billing": "hourly", "max_price": 60.0}),
    ("4x 4090 under $1.6 total per hour, not spot", "4090", {"billing": "hourly", "gpu_count": 4,
                                                              "price_basis": "total"}),
    ("8x H100 SXM on-demand under $20/hr", "H100 SXM", {"billing": "hourly", "gpu_count": 8}),
    # spot under the names clouds give it, and those names negated
    ("H100 preemptible", "H100", {"billing": "spot"}), ("H100 прерываемые до 100 р/ч", "H100", {"billing": "spot"}),
    ("70B QLoRA interruptible x2", "70B QLoRA", {"billing": "spot", "gpu_count": 2}),
    ("H100 non-preemptible", "H100", {"billing": "hourly"}), ("A100 непрерываемые", "A100", {"billing": "hourly"}),
    ("A100 не вытесняемые", "A100", {"billing": "hourly"}),
    # amounts as people write them: thousands, cents, bucks, a month's price held per hour (730 h)
    ("H100 помесячно до 150 тыс руб", "H100", {"billing": "monthly", "max_price": round(150_000 / 730, 6),
                                               "price_currency": "RUB", "price_monthly": True}),
    # «за» ("for") leads a cap when the amount says what it is; a job's epochs or time stay the workload's
    ("H100 за 150к в месяц", "H100", {"billing": "monthly", "max_price": round(150_000 / 730, 6),
                                      "price_monthly": True}),
    ("A100 за $2", "A100", {"max_price": 2.0, "price_currency": "USD"}),
    ("4090 за 40 р/ч на vastai", "4090", {"max_price": 40.0, "price_currency": "RUB", "providers": ["vastai"]}),
    ("7B LoRA за 3 эпохи", "7B LoRA 3 эпохи", {"max_price": None}),
    ("13B lora за 2 часа", "13B lora 2 часа", {"max_price": None}),
    ("monthly H100 under $1500/mo", "H100", {"billing": "monthly", "max_price": round(1500 / 730, 6)}),
    ("5090 under 50c/hr", "5090", {"max_price": 0.5, "price_currency": "USD"}),
    ("4х A100 спот до 6 баксов в час", "A100", {"gpu_count": 4, "max_price": 6.0, "price_currency": "USD",
                                               "billing": "spot"}),
    ("2,5 $ per hour for a H100", "H100", {"max_price": 2.5, "price_currency": "USD"}),  # a price needs no "under"
    ("две а6000 до 90 р за штуку в час", "а6000", {"gpu_ids": ["rtx-a6000"], "gpu_count": 2,
                                                   "price_basis": "gpu"}),
    ("8 H100 на selectel не дороже 2000 руб в час за всю конфигурацию", "H100",
     {"gpu_count": 8, "price_basis": "total", "providers": ["selectel"]}),
    # a memory instead of a card: every card of that memory
    ("any GPU with 80GB under $2", "GPU with 80GB", {"gpu_ids": ["a100-80gb", "h100-pcie", "h100-sxm"]}),
    ("нужно 4 карты по 24гб, в сумме не больше 300р/ч", "4 карты по 24гб",
     {"gpu_count": 4, "gpu_ids": ["l4", "a10", "a30", "rtx-3090", "rtx-4090", "rtx-a5000", "rtx-4500-ada",
                                  "rtx-pro-4000", "titan-rtx", "quadro-rtx-6000"]}),
    ("дешевле чем сейчас на runpod для 4090", "4090", {"max_price": None, "providers": ["runpod"]}),
    ("B200 где нибудь появится - сразу пиши", "B200", {"gpu_ids": ["b200"]}),
    # countries and areas as people name them: a filter of countries ("@" + ISO codes, core.matching)
    ("A100 80гб в россии до 250 р/ч за карту", "A100 80гб", {"region": "@RU", "price_basis": "gpu"}),
    ("ллама 3 70b инференс в 4 бита, до 200 ₽/ч, только РФ", "ллама 3 70b инференс в 4 бита", {"region": "@RU"}),
    ("h100 nvl < $2.8/hr in canada or us", "h100 nvl", {"region": "@CA,US", "gpu_ids": ["h100-nvl"]}),
    ("2,5 $ per hour for a H100 in germany or the netherlands", "H100", {"region": "@DE,NL"}),
    ("H200 in Europe under $3.50 per gpu-hour", "H200", {"region": "@EU", "price_basis": "gpu"}),
    ("US only: 8xA100 under 10usd/hr whole node", "A100", {"region": "@US", "gpu_count": 8}),
    ("let us know when H100 is under $2", "H100", {"region": None}),  # "us" is a pronoun here
    ("H100 x8 region msk", "H100", {"region": "msk"}),  # a provider's code, as before
    # "in total" of a speed stays the workload's; said of the cap it is the whole configuration
    ("8b 2000 tok/s in total до 300 ₽/ч", "8b 2000 tok/s in total", {"max_price": 300.0, "price_basis": "total"}),
    # thousands grouped as people (and the bot's own suggested commands) write them
    ("H100 x8 до 2 100 ₽/ч", "H100", {"max_price": 2100.0, "gpu_count": 8}),
    ("H100 x8 до 2\u00a0100,50 ₽/ч", "H100", {"max_price": 2100.5}),
    ("H100 x8 under $1,818/h", "H100", {"max_price": 1818.0, "price_basis": "total"}),
    ("A100 under $1,500.50 per GPU per month", "A100", {"max_price": 2.055479, "price_basis": "gpu",
                                                      "billing": "monthly"}),
    ("A100 до 150 000 ₽/мес за GPU", "A100", {"max_price": 205.479452, "price_basis": "gpu", "billing": "monthly"}),
    ("4090 до 0,350 $/ч", "4090", {"max_price": 0.35}),  # a leading zero: a decimal comma, not thousands
    ("4090 до 1,5 $/ч", "4090", {"max_price": 1.5}),
    # a card and its count in any order, the price between them or not: a card subscription for that many, its
    # target the cards alone (a command put together from it and the filters says the count once)
    ("4090 до 300р/ч 2 карты", "RTX 4090", {"gpu_ids": ["rtx-4090"], "gpu_count": 2, "max_price": 300.0}),
    ("H100 (4 GPUs) under $10/h", "H100", {"gpu_ids": ["h100-pcie", "h100-sxm", "h100-nvl"], "gpu_count": 4}),
    ("13B LoRA on 2 GPUs", "13B LoRA on 2 GPUs", {"gpu_ids": None, "gpu_count": None}),  # a workload stays one
    ("H100 SXM 8 шт до 2 000 ₽/ч", "H100 SXM", {"gpu_ids": ["h100-sxm"], "gpu_count": 8, "max_price": 2000.0}),
])
def test_subscribe_text_filters(text, target, fields):
    req = parse_subscribe(text)
    assert req.target == target
    for name, value in fields.items():
        assert getattr(req, name) == value, name


def test_money_and_cutting_and_splitting():
    assert money(1.5, "USD") == "$1.50" and money(1.5, "USD", "ru") == "$1,50"
    assert money(150_000, "RUB", "ru") == "150\u00a0000 ₽" and money(150_000, "RUB", "en") == "150,000 ₽"
    assert money(0.01, "RUB", "ru") == "0,01 ₽" and money(2142, "USD", "en") == "$2,142"
    text, cut = cut_input("word " * 200, 50)
    assert cut and len(text) <= 50 and not text.endswith(" ")
    assert cut_input("short", 50) == ("short", False)
    long = "\n".join(f"line {i} " + "x" * 90 for i in range(200))
    parts = split_message(long)
    assert len(parts) > 1 and all(len(p) <= 4096 for p in parts)
    assert "\n".join(parts) == long
    assert all(len(p) <= 4096 for p in split_message("y" * 9000))


def test_tokens_round_trip_short_and_long():
    tokens = QueryTokens(capacity=2)
    short = tokens.encode("70B QLoRA")
    assert len(short) <= 40 and QueryTokens().decode(short) == "70B QLoRA"  # survives a restart
    long_text = "инференс 70B int4, контекст 32k, 8 пользователей"
    long = tokens.encode(long_text)
    assert len(long) <= 40 and tokens.decode(long) == long_text
    assert QueryTokens().decode(long) is None  # another process does not know it: decoded as "expired"
    assert tokens.decode("zzz") is None and tokens.decode("b%%%") is None


def test_link_tokens_stay_at_their_cap_under_many_distinct_texts():
    tokens = QueryTokens()
    assert tokens._capacity == TOKENS_KEPT
    made = [tokens.encode(f"дообучение модели номер {i} на своём датасете") for i in range(TOKENS_KEPT + 500)]
    assert len(tokens._known) == TOKENS_KEPT  # the database keeps them all; this process the latest
    assert tokens.decode(made[0]) is None and tokens.decode(made[-1]) is not None


def test_user_prefs_stay_at_their_cap_forgetting_the_longest_unseen():
    prefs = PrefsCache(capacity=1000)
    for uid in range(1, 5001):
        prefs.remember(uid, "en" if uid % 3 == 0 else "ru", "USD" if uid % 3 == 0 else "RUB")
        if uid % 100 == 0:
            prefs.remember(1, "en", "USD")  # user 1 keeps writing: never the longest unseen
    assert len(prefs) == 1000 and PREFS_KEPT >= 50_000  # a deployment's 50,000 users all fit by default
    assert prefs.get(1, "ru") == Prefs("en", "USD")
    assert prefs.get(2, "en") == Prefs("en", "USD")  # forgotten: Telegram's language and its default currency
    assert prefs.get(5000, "en") == Prefs("ru", "RUB")
    assert prefs.get(4999, None) is prefs.get(4997, None)  # the few (lang, currency) pairs are shared objects


async def test_offer_cache_sorts_filters_and_refreshes():
    rows: list[CachedOffer] = []

    async def load():
        return rows

    def o(key, gpu, count, rub):
        return CachedOffer(key=key, provider="p", gpu=gpu, gpu_name=gpu or "?", gpu_count=count, location="",
                           billing="hourly", price_per_gpu_hour_rub=rub, price_per_gpu_hour_usd=rub / 80, url="")

    cache = OfferCache(load)
    rows[:] = [o("a", "h100-sxm", 1, 200), o("b", "rtx-4090", 1, 30), o("c", None, 1, 1), o("d", "h100-sxm", 8, 150)]
    assert await cache.refresh() == 4
    # The whole configuration's price per hour: 8 x 150 costs more than 1 x 200.
    assert [x.key for x in cache.all()] == ["c", "b", "a", "d"]
    assert [x.key for x in cache.filter(gpu_ids=["h100-sxm"])] == ["a", "d"]
    assert [x.key for x in cache.filter(fits=lambda gpu, count, fraction: count == 8)] == ["d"]
    assert "c" not in {x.key for x in cache.filter()}  # unknown cards are never offered as a fit
    rows[:] = rows[:1]
    await cache.refresh()
    assert len(cache) == 1 and cache.version == 2


async def test_offer_cache_given_only_the_changes_agrees_with_a_full_reload():
    """The ingest process hands over only what changed; the cache re-sorts only the groups touched. After every round
    of random changes (prices, moves between groups, offers gone and new) it holds, sorts and groups exactly what a
    cache reloaded with every offer holds."""
    import random

    from bot.offer_cache import OfferChanges

    rng = random.Random(5)
    gpus = ["h100-sxm", "rtx-4090", "a100-80gb", None]

    def o(key: str) -> CachedOffer:
        rub = None if rng.random() < 0.05 else round(rng.uniform(10, 500), 1)
        return CachedOffer(key=key, provider=rng.choice(["p", "q"]), gpu=rng.choice(gpus), gpu_name="?",
                           gpu_count=rng.choice([1, 2, 8]), location="", url="",
                           billing=rng.choice(["hourly", "spot"]),
                           price_per_gpu_hour_rub=rub, price_per_gpu_hour_usd=None if rub is None else rub / 90)

    current = {f"k{i}": o(f"k{i}") for i in range(300)}
    answers: list[OfferChanges] = [OfferChanges(list(current.values()), full=True)]

    async def changes() -> OfferChanges:
        return answers[-1]

    async def everything() -> list[CachedOffer]:
        return list(current.values())

    incremental, full = OfferCache(changes), OfferCache(everything)
    for _round in range(30):
        await incremental.refresh()
        await full.refresh()
        assert len(incremental) == len(full) == len(current)
        assert incremental.all() == full.all()
        for currency in ("RUB", "USD"):
            for kwargs in ({}, {"gpu_ids": ["h100-sxm"]},
                           {"fits": lambda gpu, count, fraction: count >= 2}):
                got = incremental.groups(currency, **kwargs)  # type: ignore[arg-type]
                want = full.groups(currency, **kwargs)  # type: ignore[arg-type]
                assert sorted(got, key=lambda g: g[0].key) == sorted(want, key=lambda g: g[0].key)
        assert incremental.filter(gpu_ids=["rtx-4090"]) == full.filter(gpu_ids=["rtx-4090"])
        keys = list(current)
        gone = rng.sample(keys, 10)
        for key in gone:
            del current[key]
        changed = [o(key) for key in rng.sample(list(current), 20)] + [o(f"n{_round}-{i}") for i in range(5)]
        current.update({c.key: c for c in changed})
        answers.append(OfferChanges(changed, gone))


@pytest.mark.parametrize("typed", [0.01, 0.99, 1.0, 99.99, 1500.5, 12_345.67, 150_000.0, 199_999.99, 1_200_000.0,
                                   9_999_999.99])
def test_a_monthly_cap_comes_back_as_typed(typed: float) -> None:
    """Held as its hourly equal, a month's cap said back per month is the figure typed, to the cent."""
    from bot.formatting import cap_amount
    from bot.subscribe_query import hourly_equal

    assert cap_amount(hourly_equal(typed), monthly=True) == typed
