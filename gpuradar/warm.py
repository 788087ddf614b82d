"""What a replica builds once at start-up, before it answers anyone: built in a worker thread, so the event loop keeps
turning meanwhile (issue 26: nothing on the loop over 50 ms).

Each of these is built on first use anyway, and was, on the loop, in the first seconds of a replica's life. Found
with the loop in debug mode (`slow_callback_duration` 40 ms) over `bench/soak.py`'s first 30 seconds, which showed
the lag probe's 220-1,100 ms start-up maxima:

- the estimate warm-up (parser, catalogs, texts: `bot.estimates.warm_up`), 0.5-0.7 s of CPU;
- aiogram's Telegram types and methods (`bot/lazy_aiogram.py` defers their pydantic builds to first use): the
  first `getUpdates` answer built `Update` and everything it holds (0.26 s), the first inline answer its results and
  `Response[bool]`, the first alert `Response[Message]` (0.17 s);
- the scraping leader's modules (providers, httpx, APScheduler; with its HTTP client's TLS context, made in a thread
  by `gpuradar.app` itself: 0.42 s in `ScrapeLeadership._lead`), and the web server's and sender's modules;
- the bot's handler modules, imported when the dispatcher is built (bench/ingest_loop.py: 62 ms on the loop).

It runs with the cyclic collector paused: before the heap is first frozen, the collections its allocations set off
were full ones, each walking the whole young heap in this thread, holding the interpreter lock 115-125 ms.

A thread shares the interpreter lock, but CPython hands it over every `sys.getswitchinterval()` (5 ms), so the loop
waits at most about that long at a time instead of the whole build; the build itself takes a little longer. It runs
before polling starts and before the web server listens, so no handler uses what it is building meanwhile.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import pkgutil
import time
from collections.abc import Callable, Sequence

from core.slices import collector_paused
from gpuradar.heap import built_out_of_reach

log = logging.getLogger(__name__)

# Modules the running replica imports later, inside coroutines: the web server's and the Mini App's where it serves
# the web, the scrapers' where it may lead them, the sender's parent side where it sends alerts.
WEB_IMPORTS = ("gpuradar.web", "gpuradar.webhook", "gpuradar.webapp.api", "gpuradar.db_metrics")
# httpx's connection pool imports anyio's asyncio backend at its first request, APScheduler its asyncio executor when
# the scheduler starts (27 modules on the loop in the leader's first poll).
SCRAPING_IMPORTS = ("scrapers.fx", "scrapers.http", "scrapers.scheduler", "scrapers.poller", "scrapers.registry",
                    "anyio._backends._asyncio", "anyio.streams.tls", "anyio.to_thread",
                    "apscheduler.executors.asyncio")
SENDER_IMPORTS = ("gpuradar.child_process", "gpuradar.sender_process")

# The Bot API methods this bot calls (`message.answer` is SendMessage, `callback.answer` AnswerCallbackQuery, an
# inline answer AnswerInlineQuery, a /history chart SendPhoto, ...): each one's model and its `Response[...]` type.
CALLED_METHODS = ("GetMe", "GetUpdates", "SendMessage", "EditMessageText", "EditMessageReplyMarkup",
                  "AnswerCallbackQuery", "AnswerInlineQuery", "SendPhoto", "SetMyCommands")
# The types an update arrives as (Update holds every event type) and the ones the handlers build replies from. Only
# these: a type our code names only in annotations (Message, CallbackQuery) is never built on its own, and building
# every type the bot's modules import cost 11 MB more.
USED_TYPES = ("Update", "InlineKeyboardMarkup", "InlineKeyboardButton", "InlineQueryResultArticle",
              "InputTextMessageContent", "BotCommand")


def warm_telegram(webhook: bool = False, menu_button: bool = False) -> int:
    """Build the types and methods this bot uses and the response types of the methods (held by
    `bot.response_types.keep`, so a collection never drops them). Returns how many classes were built."""
    import aiogram.methods as methods
    import aiogram.types as types

    from bot.response_types import keep

    called = CALLED_METHODS + (("SetWebhook",) if webhook else ("DeleteWebhook",)) + \
        (("SetChatMenuButton",) if menu_button else ())
    built = sum(_build(getattr(types, name)) for name in USED_TYPES)
    for name in called:
        method = getattr(methods, name)
        built += _build(method) + _build(keep(method.__returning__))
    return built


def _build(cls: type) -> int:
    if getattr(cls, "__pydantic_complete__", True):
        return 0
    cls.model_rebuild(force=True)  # type: ignore[attr-defined]
    return 1


def handler_imports() -> tuple[str, ...]:
    """The bot's handler modules (`bot/handlers/`), which `bot.handlers.routers` imports when the dispatcher is
    built, on the loop, right after the warm-up: ~60 ms of imports in one go."""
    import bot.handlers

    return tuple(f"bot.handlers.{m.name}" for m in pkgutil.iter_modules(bot.handlers.__path__))


def warm_up(estimates: Callable[[], None], imports: Sequence[str] = (), *, webhook: bool = False,
            menu_button: bool = False) -> None:
    """Everything above, in this thread: `imports` and the handler modules, then `estimates`
    (`bot.estimates.warm_up`), then the Telegram classes (`webhook`: the bot sets a webhook instead of polling;
    `menu_button`: it sets the Mini App's button).

    With the cyclic collector paused, and what is built moved out of the youngest generation unwalked at the end
    (`gpuradar.heap.built_out_of_reach`): the collections its allocations set off were full ones, of a heap not yet
    frozen, made in this thread while holding the interpreter lock (115-125 ms each, two of them, the loop waiting)."""
    t0 = time.perf_counter()
    with collector_paused():
        for name in (*imports, *handler_imports()):
            importlib.import_module(name)
        estimates()
        built = warm_telegram(webhook, menu_button)
        built_out_of_reach()
    log.debug("warmed up in %.0f ms (%d Telegram classes built)", (time.perf_counter() - t0) * 1000, built)


async def warm_up_off_loop(estimates: Callable[[], None], imports: Sequence[str] = (), *, webhook: bool = False,
                           menu_button: bool = False) -> None:
    await asyncio.to_thread(lambda: warm_up(estimates, imports, webhook=webhook, menu_button=menu_button))
