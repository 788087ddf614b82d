"""Issue 13, through the real stack (the App's aiogram dispatcher polling the stand-in Bot API on 127.0.0.1, a
migrated SQLite file or PostgreSQL database): odd and forged input, races, a database that refuses writes, long
lists, and whose chat a subscription's alerts go to. Each test reproduces one finding of the adversarial pass."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.engine import Engine

from gpuradar.app import App, alert_hook
from gpuradar.settings import Settings
from storage.user_tables import Subscription, User
from testkit.fake_telegram import FakeTelegram
from testkit.waiting import until
from tests.bot.test_bot_e2e import RATES, RUNPOD, T0, offer, poll

ERROR = "Something went wrong"


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


async def started(tg: FakeTelegram, url: str, **kw: object) -> App:
    settings = Settings(database_url=url, bot_token="123456:TEST-token", telegram_api_url=tg.base_url)
    application = App(settings, scrape=False, polling_timeout=1, **kw)  # type: ignore[arg-type]
    await application.start()
    return application


@pytest.fixture
async def app(tg: FakeTelegram, migrated_database_url: str) -> AsyncIterator[App]:
    application = await started(tg, migrated_database_url)
    await application.ingest(poll("runpod", RUNPOD, T0), RATES)
    yield application
    await application.stop()


async def say(tg: FakeTelegram, text: str, user_id: int = 7, **kw: object) -> str:
    tg.message(text, user_id=user_id, **kw)  # type: ignore[arg-type]
    chat = kw.get("chat_id", user_id)
    return (await tg.wait_for("sendMessage", chat_id=chat)).text


async def subs_of(app: App, user_id: int) -> list[Subscription]:
    assert app.sessionmaker is not None
    async with app.sessionmaker() as session:
        rows = await session.execute(select(Subscription).where(Subscription.user_id == user_id)
                                     .order_by(Subscription.id))
        return list(rows.scalars())


def no_errors(tg: FakeTelegram) -> None:
    texts = [c.text for c in tg.calls_of("sendMessage")] + \
        [str(c.params.get("text") or "") for c in tg.calls_of("answerCallbackQuery")]
    assert not [t for t in texts if ERROR in t]
    assert all(c.status == 200 for c in tg.calls if c.method in ("sendMessage", "editMessageText"))


# ------------------------------------------------------------------------------------------------ odd input
async def test_unsubscribe_with_a_unicode_digit_gets_the_usage(tg: FakeTelegram, app: App) -> None:
    await say(tg, "/subscribe H100")
    for arg in ("²", "٣٣", "99999999999999999999", "-1", "1.5"):
        text = await say(tg, f"/unsubscribe {arg}")
        assert "/unsubscribe N" in text or f"no subscription {arg}" in text, arg
        assert "H100" in text  # in the same message, the list to choose from
    assert len(await subs_of(app, 7)) == 1
    no_errors(tg)


async def test_forged_and_odd_callback_data_is_acknowledged_politely(tg: FakeTelegram, app: App) -> None:
    await say(tg, "/subscribe H100")
    (sub,) = await subs_of(app, 7)
    tg.message("/subscribe", user_id=7)
    ask = await tg.wait_for("sendMessage", chat_id=7)
    tg.press(ask, "GPU model", user_id=7)
    gpus = await tg.wait_for("editMessageText", chat_id=7)
    tg.press(gpus, "H200", user_id=7)
    await tg.wait_for("editMessageText", chat_id=7)  # the wizard now asks for the price
    forged = ["s:delete:99999999999999999999", "s:delete:²", "s:delete:0", "s:nuke:1", "al:stop:99999999999999999999",
              "wp:nan", "wp:inf", "wp:-inf", "wp:abc", "wp:0", "wp:1e400", "w:price:abc", "w:price:nan",
              "o:b:99999999999999999999", "o:b:²", "wv:../../etc", "set:lang:xx", "e:notify:" + "h" * 300]
    for data in forged:
        tg.callback(data, user_id=7)
        answer = await tg.wait_for("answerCallbackQuery")
        assert ERROR not in str(answer.params.get("text")), data
    # The wizard still works after all that, and the real subscription is untouched.
    tg.press(gpus, "H200", user_id=7)
    no_errors(tg)
    assert [s.id for s in await subs_of(app, 7)] == [sub.id]


async def test_inline_offset_with_unicode_digits_starts_from_the_top(tg: FakeTelegram, app: App) -> None:
    for offset in ("²", "99999999999999999999", "x"):
        qid = tg.inline_query("70B QLoRA", user_id=7, offset=offset)
        answer = await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
        assert answer.params["results"], offset


# ------------------------------------------------------------------------------------------------ limits
@pytest.mark.parametrize(("text", "expect"), [
    ("/subscribe 70B LoRA 100 GPUs", "Now watching"),
    ("/subscribe H100 x 99", "Now watching"),
    ("/subscribe H100 x 99999", "between 1 and 4096"),
    ("/subscribe H100 x 0", "between 1 and 4096"),
    ("/subscribe H100 under $0/h", "price cap must be above 0"),
    ("/subscribe 13B LoRA до 0 ₽/ч", "price cap must be above 0"),
    ("/subscribe H100 under $" + "9" * 400 + "/h", "price cap must be above 0"),
])
async def test_what_the_input_reader_accepts_is_stored_and_the_rest_explained(
        tg: FakeTelegram, app: App, text: str, expect: str) -> None:
    assert expect in await say(tg, text)
    no_errors(tg)


# ------------------------------------------------------------------------------------------------ long lists
async def test_subs_and_unsubscribe_with_many_long_subscriptions_stay_under_telegram_limit(
        tg: FakeTelegram, app: App) -> None:
    await say(tg, "/start")
    assert app.sessionmaker is not None
    async with app.sessionmaker() as session, session.begin():
        for i in range(20):
            # Workload subscriptions show the user's own text: 500 characters each, escaped ("<" -> "&lt;").
            session.add(Subscription(user_id=7, chat_id=7, kind="workload", query_text=f"{i} LoRA " + "<" * 490,
                                     min_gib_by_count={"1": 20.0}, price_currency="USD", region="x" * 100,
                                     paused=False))
    first = await say(tg, "/subs")
    assert "1. " in first and "page 1/" in first
    listing = tg.calls_of("sendMessage")[-1]
    pages = int(first.split("page 1/")[1].split()[0].rstrip(":"))
    seen = {n for n in range(1, 21) if f"\n{n}. " in "\n" + first}
    for _ in range(pages - 1):
        tg.press(listing, "Next", user_id=7)
        listing = await tg.wait_for("editMessageText", chat_id=7)
        seen |= {n for n in range(1, 21) if f"\n{n}. " in "\n" + listing.text}
    assert seen == set(range(1, 21))  # every subscription is on some page
    tg.press(listing, "🗑 20", user_id=7)  # a button on the last page asks, then acts and the page is shown again
    confirm = await tg.wait_for("editMessageText", chat_id=7)
    assert "Delete subscription 20" in confirm.text and len(confirm.text) < 4096
    tg.press(confirm, "Delete", user_id=7)
    after = await tg.wait_for("editMessageText", chat_id=7)
    assert "(19 of 20)" in after.text
    usage = await say(tg, "/unsubscribe")
    assert "/unsubscribe N" in usage and len(usage) <= 4096
    if "(19 of 20)" not in usage:  # the page was too long to share a message: it follows
        await tg.wait_for("sendMessage", chat_id=7)
    no_errors(tg)


# ------------------------------------------------------------------------------------------------ races
async def test_simultaneous_first_updates_of_a_new_user_all_get_answers(tg: FakeTelegram, app: App) -> None:
    for uid in range(100, 110):
        for _ in range(8):
            tg.message("/start", user_id=uid)
    for uid in range(100, 110):
        for _ in range(8):
            await tg.wait_for("sendMessage", chat_id=uid, timeout=30)
    no_errors(tg)
    assert app.sessionmaker is not None
    async with app.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(User).where(User.id >= 100)) == 10


async def test_the_subscription_cap_holds_under_simultaneous_subscribes(tg: FakeTelegram, app: App) -> None:
    await say(tg, "/start")
    for n in range(1, 61):
        tg.message(f"/subscribe H100 under ${n}/h", user_id=7)
    for _ in range(60):
        await tg.wait_for("sendMessage", chat_id=7, timeout=60)
    assert len(await subs_of(app, 7)) == 20
    replies = [c.text for c in tg.calls_of("sendMessage") if c.chat_id == 7][1:]
    assert sum("Now watching" in r for r in replies) == 20
    assert sum("maximum" in r for r in replies) == 40
    no_errors(tg)


# ------------------------------------------------------------------------------------------------ privacy
async def test_alerts_go_to_the_private_chat_unless_the_group_was_chosen(
        tg: FakeTelegram, migrated_database_url: str) -> None:
    group = -100777
    app = await started(tg, migrated_database_url, alerts=alert_hook(poll_interval=0.05))
    try:
        await app.ingest(poll("runpod", [], T0), RATES)
        # First contact in a group: the subscription is still private ...
        reply = await say(tg, "/subscribe H100", user_id=7, chat_id=group, chat_type="supergroup")
        assert "private chat" in reply
        # ... and only its owner can send its alerts to the group.
        tg.message("/subscribe A100", user_id=8, chat_id=group, chat_type="supergroup")
        a100 = await tg.wait_for("sendMessage", chat_id=group)
        tg.callback(a100.button("this group")["callback_data"], user_id=7, chat_id=group,
                    message_id=a100.params["_result_message_id"])
        refused = await tg.wait_for("answerCallbackQuery", predicate=lambda c: bool(c.params.get("text")))
        assert "no longer exists" in refused.params["text"]
        tg.callback(a100.button("this group")["callback_data"], user_id=8, chat_id=group,
                    message_id=a100.params["_result_message_id"])
        chosen = await tg.wait_for("answerCallbackQuery", predicate=lambda c: bool(c.params.get("text")))
        assert "this group" in chosen.params["text"]
        assert [s.chat_id for s in await subs_of(app, 7)] == [7]
        assert [s.chat_id for s in await subs_of(app, 8)] == [group]
        h100_a100 = [offer("runpod", "h100", "h100-sxm", "H100 80GB HBM3", 1, 2.49),
                     offer("runpod", "a100", "a100-80gb", "A100 SXM 80GB", 1, 1.64)]
        await app.ingest(poll("runpod", h100_a100, T0.replace(hour=13)), RATES)
        to_7 = await tg.wait_for("sendMessage", chat_id=7, predicate=lambda c: "H100" in c.text, timeout=15)
        to_group = await tg.wait_for("sendMessage", chat_id=group, predicate=lambda c: "A100" in c.text,
                                     timeout=15)
        await asyncio.sleep(0.3)
        group_texts = [c.text for c in tg.calls_of("sendMessage") if c.chat_id == group]
        assert to_7 and to_group and not [t for t in group_texts if "H100" in t and "Order" in t]
    finally:
        await app.stop()


# ------------------------------------------------------------------------------------------------ no database
@contextlib.contextmanager
def read_only_connections() -> Iterator[None]:
    """Every database connection opened meanwhile refuses writes (SQLite `query_only`, PostgreSQL read-only
    transactions): a database that answers reads but fails every write, as a full disk or a read-only mount does."""

    def on_connect(dbapi_conn: object, _record: object) -> None:
        cursor = dbapi_conn.cursor()  # type: ignore[attr-defined]
        if "sqlite" in type(dbapi_conn).__module__:
            cursor.execute("PRAGMA query_only = ON")
        else:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        cursor.close()
        dbapi_conn.commit()  # type: ignore[attr-defined]  # PostgreSQL: a SET in a rolled-back transaction is undone

    event.listen(Engine, "connect", on_connect)
    try:
        yield
    finally:
        event.remove(Engine, "connect", on_connect)


async def test_a_database_that_refuses_writes_still_gets_every_user_an_answer(tg: FakeTelegram, app: App) -> None:
    await say(tg, "/subscribe H100")  # an existing user with a subscription
    assert app.engine is not None
    await app.engine.dispose()  # new connections from here on
    with read_only_connections():
        # The handler fails after touching the database: the apology must not read the (expired) user row.
        assert ERROR in await say(tg, "/subscribe A100")
        # /unsubscribe N only asks first (a read), so it still answers with the question
        assert "Delete subscription 1" in await say(tg, "/unsubscribe 1")
        # A new user's row cannot even be created: they are answered all the same, in their language.
        tg.message("/start", user_id=555, lang="ru")
        assert "пошло не так" in (await tg.wait_for("sendMessage", chat_id=555)).text
        # A pressed button stops spinning with the apology.
        listing = await say(tg, "/subs")
        assert "H100" in listing
        tg.press(tg.calls_of("sendMessage")[-1], "⏸ 1", user_id=7)  # a write (🗑 only asks first)
        pressed = await tg.wait_for("answerCallbackQuery", predicate=lambda c: bool(c.params.get("text")))
        assert ERROR in pressed.params["text"]
        await app.engine.dispose()
    assert [s.query_text for s in await subs_of(app, 7)] == ["H100"]


# ------------------------------------------------------------------------------------------------ rate limits
def test_rate_limiter_refills_at_its_rate_and_tells_once_per_streak() -> None:
    from bot.ratelimit import Rate, RateLimiter

    now = [0.0]
    limiter = RateLimiter({"x": Rate(burst=3, per=10.0)}, clock=lambda: now[0], capacity=2)
    assert [limiter.take(1, "x") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take(1, "x") == pytest.approx(10.0)
    assert limiter.first_refusal(1, "x") and not limiter.first_refusal(1, "x")
    assert limiter.take(2, "x") == 0.0  # another user has their own allowance
    now[0] = 10.0
    assert limiter.take(1, "x") == 0.0 and limiter.take(1, "x") > 0
    assert limiter.first_refusal(1, "x")  # a new streak after an allowed request
    limiter.take(3, "x")  # capacity 2: the least recently seen user is forgotten, memory stays bounded
    assert len(limiter._buckets) == 2


@pytest.mark.parametrize(("command", "kind", "answered"), [
    ("/estimate 70B QLoRA", "estimate", "VRAM per GPU"),
    ("13B LoRA", "estimate", "VRAM per GPU"),
    ("/history H100", "history", "H100"),
    ("/subscribe", "wizard", "What should I watch"),
    ("/start sub_bMTNCIExvUkE", "deep_link", "Now watching"),
])
async def test_expensive_commands_are_rate_limited_per_user(tg: FakeTelegram, app: App, command: str, kind: str,
                                                            answered: str) -> None:
    from bot.ratelimit import RATES

    burst = RATES[kind].burst
    for _ in range(burst + 10):
        tg.message(command, user_id=7)
    tg.message(command, user_id=8)  # someone else is not held up by user 7
    await until(lambda: any(c.chat_id == 8 and c.method in ("sendMessage", "sendPhoto") for c in tg.calls))
    await until(lambda: len([c for c in tg.calls if c.chat_id == 7 and c.method in ("sendMessage", "sendPhoto")])
                >= burst + 1, limit=30)
    await asyncio.sleep(0.3)  # room for any reply that should not come
    to_7 = [c for c in tg.calls if c.chat_id == 7 and c.method in ("sendMessage", "sendPhoto")]
    limited = [c for c in to_7 if "Too many requests" in c.text]
    # Told once per streak of refusals, not once per refused message (a slow machine may let a token refill
    # mid-test, which starts a new streak: hence the small slack, here and in the answers).
    assert 1 <= len(limited) <= 3
    assert sum(answered in (c.text or c.params.get("caption", "")) for c in to_7) <= burst + 2
    no_errors(tg)


# ------------------------------------------------------------------------------------------------ link tokens
LONG_RU = "13B LoRA контекст 4k, 3 эпохи"  # far over the 29 bytes a link carries as itself


async def test_a_long_links_token_is_resolved_by_another_replica(tg: FakeTelegram,
                                                                 migrated_database_url: str) -> None:
    first = await started(tg, migrated_database_url)
    try:
        await first.ingest(poll("runpod", RUNPOD, T0), RATES)
        estimate = await say(tg, f"/estimate {LONG_RU}", lang="ru")
        assert "ГиБ" in estimate
        shown = tg.calls_of("sendMessage")[-1]
        token = shown.button("Сообщить")["callback_data"].split(":")[-1]
        assert token.startswith("h")  # hashed, not carried inline
    finally:
        await first.stop()
    second = await started(tg, migrated_database_url)  # another process: nothing of the first in memory
    try:
        tg.press(shown, "Сообщить", user_id=7, lang="ru")
        notified = await tg.wait_for("sendMessage", chat_id=7)
        assert "Слежу" in notified.text
        deep = await say(tg, f"/start sub_{token}", user_id=9, lang="ru")
        assert "Слежу" in deep or "Слежу" in (await tg.wait_for("sendMessage", chat_id=9)).text
    finally:
        await second.stop()
    no_errors(tg)


async def test_a_deep_link_gets_the_same_input_limit_as_any_message(tg: FakeTelegram, app: App) -> None:
    import base64

    text = "13B LoRA " + "очень " * 150  # 909 characters in a typed "/start sub_<base64>" (2,200 characters)
    token = "b" + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
    tg.message(f"/start sub_{token}", user_id=7)
    note = await tg.wait_for("sendMessage", chat_id=7)
    assert "first 500 characters" in note.text
    answer = (await tg.wait_for("sendMessage", chat_id=7)).text  # then the answer to the first 500 characters
    assert "очень" in answer and answer.count("очень") < 100
    no_errors(tg)


async def test_control_characters_in_a_deep_link_or_a_message_are_never_echoed(tg: FakeTelegram, app: App) -> None:
    import base64
    import re

    def inline(text: str) -> str:
        return "b" + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    control = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    forged = [inline("\x00" * 20), inline("H100\x00\x00"), inline("\x1b[2J70B LoRA"), inline("\x7f\x85"),
              "\x00\x00\x00", "b\x00"]
    for uid, payload in enumerate(forged, start=300):  # the start text, then "this link is broken"
        tg.message(f"/start sub_{payload}", user_id=uid)
        await tg.wait_for("sendMessage", chat_id=uid)
        assert "broken or has expired" in (await tg.wait_for("sendMessage", chat_id=uid)).text, payload
    for typed in ("/start \x00\x00", "\x00\x00\x00", "H100\x00 under $3/h", "/subscribe H100\x00\x1b x 2"):
        tg.message(typed, user_id=7)
        await tg.wait_for("sendMessage", chat_id=7)
    replies = [c.text for c in tg.calls_of("sendMessage")]
    assert len(replies) == 2 * len(forged) + 4
    assert not any(control.search(r) for r in replies)
    assert "Now watching" in replies[-1]  # the text around the control characters still reads
    no_errors(tg)


async def test_an_update_failing_before_its_handler_is_still_answered(tg: FakeTelegram,
                                                                      migrated_database_url: str) -> None:
    """The wizard state is read (by aiogram's FSM middleware) before the user middleware runs: when that read fails,
    the dispatcher's error handler answers, in the user's language, without the database."""
    from aiogram.fsm.storage.base import StorageKey
    from aiogram.fsm.storage.memory import MemoryStorage

    class UnreachableStorage(MemoryStorage):
        async def get_state(self, key: StorageKey) -> str | None:
            raise ConnectionError("the state store is unreachable")

    app = await started(tg, migrated_database_url, fsm_storage=UnreachableStorage())
    try:
        tg.message("/start", user_id=31, lang="ru")
        assert "пошло не так" in (await tg.wait_for("sendMessage", chat_id=31)).text
    finally:
        await app.stop()


async def test_a_group_that_refuses_alerts_sends_them_to_the_private_chat_instead(sm: Any) -> None:
    """The bot was removed from the group a user chose for a subscription: that is not the user blocking the bot.
    The alert goes to their private chat, the subscription follows, and the user stays active."""
    from aiogram import Bot
    from aiogram.client.default import DefaultBotProperties

    from bot.sender import AlertSender
    from core.changes import EventKind
    from storage.outbox import OutboxWriter
    from tests.storage.test_outbox_helpers import add_sub, add_user, enqueue, event, offer, user

    group = -100555
    async with FakeTelegram() as tg:
        bot = Bot(tg.token, session=tg.session(), default=DefaultBotProperties(parse_mode="HTML"))
        try:
            await add_user(sm, 5, chat_id=group)  # a subscription made for (and pointed at) the group
            await add_sub(sm, 5)
            tg.block_chat(group)
            await enqueue(sm, OutboxWriter(), [event(offer(), EventKind.BACK_IN_STOCK, old=2.49)])
            sender = AlertSender(bot, sm, poll_interval=0.05)
            task = asyncio.create_task(sender.run())
            try:
                await until(lambda: any(c.chat_id == 5 and c.status == 200 for c in tg.calls_of("sendMessage")))
            finally:
                await sender.stop()
                await task
        finally:
            await bot.session.close()
    assert (await user(sm, 5)).active
    async with sm() as session:
        assert [s.chat_id for s in (await session.scalars(select(Subscription))).all()] == [5]


@pytest.mark.parametrize("text", ["/history A100 ² gb", "/subscribe A100 ² гб", "/offers H100 ³ gb", "A100 ¹ gb"])
async def test_unicode_digits_in_gpu_names_are_just_unknown_words(tg: FakeTelegram, app: App, text: str) -> None:
    await say(tg, text)
    no_errors(tg)


def test_no_unicode_digit_breaks_the_gpu_lookup() -> None:
    import sys

    from core.gpus import find_gpu

    odd = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isdigit() and not chr(c).isdecimal()]
    assert "²" in odd
    for ch in odd:
        find_gpu(f"A100 {ch} gb")  # never raises (it used to: ValueError from float('²'))
