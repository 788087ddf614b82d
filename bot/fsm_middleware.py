"""aiogram's FSM middleware, minus the state read for updates no conversation step can be waiting for.

aiogram's `FSMContextMiddleware` loads the state of every update's (chat, user) before the handlers run. With the
wizard state in the shared database (bot.fsm_storage), that is one SELECT per inline query, and inline queries come
one per keystroke: on PostgreSQL, while the leader's ingest writes to the same server, that read was most of an
inline answer's time (bench/inline.py --ingest --db postgres). No handler of an inline query or a chosen inline
result reads or sets wizard state (they have no chat to hold a conversation in), so those updates skip the read;
every other update gets its state exactly as aiogram would give it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Dispatcher
from aiogram.fsm.middleware import FSMContextMiddleware
from aiogram.types import TelegramObject, Update


class ChatStateOnly(FSMContextMiddleware):
    """`FSMContextMiddleware` that leaves inline queries and chosen inline results without a state (no read)."""

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        if isinstance(event, Update) and (event.inline_query is not None or event.chosen_inline_result is not None):
            data["fsm_storage"] = self.storage
            return await handler(event, data)
        return await super().__call__(handler, event, data)


def install(dp: Dispatcher) -> None:
    """Put `ChatStateOnly` where aiogram put its own (a dispatcher made with `disable_fsm=True`: right after the
    user-context middleware), with the same storage, strategy and event isolation."""
    fsm = dp.fsm
    dp.fsm = ChatStateOnly(storage=fsm.storage, events_isolation=fsm.events_isolation, strategy=fsm.strategy)
    dp.update.outer_middleware(dp.fsm)
