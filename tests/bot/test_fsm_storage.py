"""Wizard state in the shared database (`bot.fsm_storage.SqlStorage`): the storage contract on a real database
(SQLite file, or PostgreSQL with TEST_DATABASE_URL), and the `/subscribe` wizard begun on one replica's dispatcher
and finished on another's (its own engine, as a second process would have) through the stand-in Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram.fsm.state import State, StatesGroup
from aiogram.fsm.storage.base import BaseStorage, StorageKey
from aiogram.fsm.storage.memory import MemoryStorage
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.fsm_storage import SqlStorage
from gpuradar.app import App
from gpuradar.settings import Settings
from storage.db import make_engine, make_sessionmaker
from storage.fsm_tables import FsmState
from storage.subscriptions import list_subscriptions
from testkit.fake_telegram import Call, FakeTelegram


class Form(StatesGroup):
    name = State()


KEY = StorageKey(bot_id=1, chat_id=10, user_id=10)


@pytest.fixture
async def sm(migrated_database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = make_engine(migrated_database_url)
    yield make_sessionmaker(engine)
    await engine.dispose()


async def rows(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm() as s:
        return int((await s.execute(select(func.count()).select_from(FsmState))).scalar_one())


async def test_state_and_data_round_trip_and_clearing_removes_the_row(sm) -> None:
    storage = SqlStorage(sm)
    assert await storage.get_state(KEY) is None and await storage.get_data(KEY) == {}
    await storage.set_state(KEY, Form.name)
    await storage.set_data(KEY, {"kind": "gpu", "price": 2.5, "nested": {"ru": "цена"}})
    assert await storage.update_data(KEY, {"target": "A100"}) == {
        "kind": "gpu", "price": 2.5, "nested": {"ru": "цена"}, "target": "A100"}
    # a second storage on its own engine (another replica) sees the same conversation
    other_engine = make_engine(sm.kw["bind"].url.render_as_string(hide_password=False))
    try:
        other = SqlStorage(make_sessionmaker(other_engine))
        assert await other.get_state(KEY) == "Form:name"
        assert (await other.get_data(KEY))["target"] == "A100"
    finally:
        await other_engine.dispose()
    # the returned dict is a copy: changing it changes nothing stored
    (await storage.get_data(KEY))["kind"] = "workload"
    assert (await storage.get_data(KEY))["kind"] == "gpu"
    # state.clear() = no state + empty data: the row goes away
    await storage.set_state(KEY, None)
    assert await rows(sm) == 1
    await storage.set_data(KEY, {})
    assert await rows(sm) == 0


async def test_keys_are_separate_per_chat_user_bot_and_destiny(sm) -> None:
    storage = SqlStorage(sm)
    keys = [KEY, StorageKey(bot_id=1, chat_id=10, user_id=11), StorageKey(bot_id=2, chat_id=10, user_id=10),
            StorageKey(bot_id=1, chat_id=-100, user_id=10), StorageKey(bot_id=1, chat_id=10, user_id=10, destiny="x")]
    for n, key in enumerate(keys):
        await storage.set_state(key, f"S:{n}")
        await storage.set_data(key, {"n": n})
    assert [await storage.get_state(k) for k in keys] == [f"S:{n}" for n in range(len(keys))]
    assert [(await storage.get_data(k))["n"] for k in keys] == list(range(len(keys)))
    assert await rows(sm) == len(keys)


# ---------------------------------------------------------------------------------------------------------------
# The wizard across two replicas.
# ---------------------------------------------------------------------------------------------------------------


def replica(tg: FakeTelegram, url: str, storage: BaseStorage | None = None) -> App:
    settings = Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url)
    return App(settings, scrape=False, polling_timeout=1, fsm_storage=storage)


async def begin_wizard_on_first_replica(tg: FakeTelegram, url: str, user_id: int) -> Call:
    """/subscribe and "GPU model" on replica A, which then stops; returns the GPU question A sent."""
    first = replica(tg, url)
    await first.start()
    try:
        tg.message("/subscribe", user_id=user_id)
        ask = await tg.wait_for("sendMessage", chat_id=user_id)
        tg.press(ask, "GPU model", user_id=user_id)
        return await tg.wait_for("editMessageText", chat_id=user_id)
    finally:
        await first.stop()


async def test_wizard_begun_on_one_replica_is_finished_on_another(migrated_database_url: str) -> None:
    async with FakeTelegram() as tg:
        gpus = await begin_wizard_on_first_replica(tg, migrated_database_url, user_id=8)
        second = replica(tg, migrated_database_url)  # a new engine and dispatcher, as another process
        await second.start()
        try:
            tg.press(gpus, "A100 80GB", user_id=8)
            price = await tg.wait_for("editMessageText", chat_id=8)
            assert "price" in price.text.lower()
            tg.press(price, "$2", user_id=8)
            basis = await tg.wait_for("editMessageText", chat_id=8)
            tg.press(basis, "per GPU-hour", user_id=8)
            providers = await tg.wait_for("editMessageText", chat_id=8)
            tg.press(providers, "All providers", user_id=8)
            done = await tg.wait_for("editMessageText", chat_id=8)
            assert "Now watching" in done.text and "A100 80GB" in done.text
            assert second.sessionmaker is not None
            async with second.sessionmaker() as session:
                (sub,) = await list_subscriptions(session, 8)
            assert sub.gpu_ids == ["a100-80gb"] and sub.max_price == 2
            assert await rows(second.sessionmaker) == 0  # finished: nothing left behind
        finally:
            await second.stop()


async def test_with_per_process_memory_the_second_replica_does_not_know_the_wizard(
        migrated_database_url: str) -> None:
    """The control: what a replica switch did before the state was shared (the press is a stale button)."""
    async with FakeTelegram() as tg:
        gpus = await begin_wizard_on_first_replica(tg, migrated_database_url, user_id=9)
        second = replica(tg, migrated_database_url, storage=MemoryStorage())
        await second.start()
        try:
            tg.press(gpus, "A100 80GB", user_id=9)
            answer = await tg.wait_for("answerCallbackQuery", predicate=lambda c: bool(c.params.get("text")))
            assert "out of date" in answer.params["text"]  # the fallback's stale-button answer
            assert [c for c in tg.calls_of("editMessageText") if "price" in c.text.lower()] == []
        finally:
            await second.stop()


async def test_inline_queries_read_no_wizard_state_while_messages_still_do(migrated_database_url: str) -> None:
    """bot/fsm_middleware.py: an inline query (one per keystroke) answers without a read of `fsm_states`; a message
    still gets its state from the shared database, so the wizard works mid-way through typing inline."""
    from sqlalchemy import event

    async with FakeTelegram() as tg:
        app = replica(tg, migrated_database_url)
        await app.start()
        reads: list[str] = []
        assert app.engine is not None

        def count(conn: object, cursor: object, statement: str, *args: object) -> None:
            if "fsm_states" in statement:
                reads.append(statement)

        event.listen(app.engine.sync_engine, "before_cursor_execute", count)
        try:
            tg.message("/subscribe", user_id=9)
            ask = await tg.wait_for("sendMessage", chat_id=9)
            assert reads  # the message's state was read (and the wizard's step written)
            reads.clear()
            for text in ("70", "70B", "70B QLoRA"):
                qid = tg.inline_query(text, user_id=9)
                await tg.wait_for("answerInlineQuery", inline_query_id=str(qid))
            assert reads == []
            tg.press(ask, "GPU model", user_id=9)  # the wizard goes on where it was
            gpus = await tg.wait_for("editMessageText", chat_id=9)
            assert gpus.reply_markup and reads
        finally:
            event.remove(app.engine.sync_engine, "before_cursor_execute", count)
            await app.stop()
