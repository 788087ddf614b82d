"""bot/response_types.py: the Bot API response types a bot has parsed answers with survive garbage collection, so
a full collection never costs the event loop a rebuild of `Response[...]` (60-100 ms each, measured by
bench/inline.py --ingest)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from aiogram import Bot
from aiogram.methods import DeleteWebhook, GetMe, GetUpdates, Response
from aiogram.types import BotCommand

from bot.response_types import kept
from gpuradar.app import make_pacer
from gpuradar.pacing import install_pacing
from gpuradar.settings import Settings
from testkit.fake_telegram import FakeTelegram


def test_pydantic_keeps_parametrised_generics_only_weakly() -> None:
    """Why the middleware exists: a parametrisation no one holds is freed by a full collection, and the next use
    builds a new class (if pydantic ever holds them strongly, this fails and the middleware can go)."""
    made: Any = Response[tuple[BotCommand, int]]  # a return type no Bot API method has, so no one holds it
    ref = weakref.ref(made)
    del made
    gc.collect()
    assert ref() is None


async def test_a_bot_keeps_the_response_type_of_every_method_it_called() -> None:
    async with FakeTelegram() as tg:
        bot = Bot(tg.token, session=tg.session())
        install_pacing(bot, make_pacer(Settings(bot_token=tg.token)))  # what App.start and make_bot install
        try:
            assert await bot.delete_webhook() is True  # Response[bool]
            me = await bot.get_me()  # Response[User]
            updates = await bot.get_updates(timeout=0)  # Response[list[Update]]
        finally:
            await bot.session.close()
    assert me.is_bot and updates == []
    held = kept()
    for method in (DeleteWebhook, GetMe, GetUpdates):
        assert method.__returning__ in held, method.__name__
    refs = {returning: weakref.ref(held[returning]) for returning in held}
    del held
    gc.collect()
    for returning, ref in refs.items():
        alive = ref()
        assert alive is not None, returning
        assert Response[returning] is alive  # aiogram's own lookup finds the same class: nothing to rebuild
