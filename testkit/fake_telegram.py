"""A stand-in Telegram Bot API server on 127.0.0.1 for tests and benches.

It speaks the Bot API's HTTP shape (`POST /bot<token>/<method>`, form, multipart or JSON bodies, answers
`{"ok": true, "result": ...}` / `{"ok": false, "error_code": ..., "description": ..., "parameters": ...}`), so
the real aiogram stack (or plain httpx) talks to it exactly as to Telegram.

Stable API (other tests and benches rely on it):

    async with FakeTelegram() as tg:                   # random free port on 127.0.0.1
        bot = Bot(tg.token, session=tg.session())      # AiohttpSession(api=TelegramAPIServer.from_base(tg.base_url))
        # feed updates (each returns the update_id); getUpdates long-polls them out in order
        tg.message("/start", user_id=7, lang="ru")     # private chat, chat_id = user_id unless given
        tg.callback("sub:pause:3", message_id=12, user_id=7)   # callback on a message the bot sent
        qid = tg.inline_query("70B QLoRA", user_id=7)  # returns the update_id; the query id is str(update_id)
        # await recorded calls, in order, each returned once per method
        call = await tg.wait_for("sendMessage", chat_id=7)             # Call(method, params, files, at)
        call.text, call.chat_id, call.reply_markup, call.photo          # conveniences
        tg.calls_of("sendMessage")                                      # everything recorded so far
        # faults, for the next `times` calls of a method (or "*" for any), optionally only for one chat
        tg.fail("sendMessage", "429", retry_after=2)    # kinds: "429", "403", "500", "502", "drop", "delay"
        tg.block_chat(7)                               # 403 "bot was blocked by the user" for every send to 7
        tg.migrate_chat(-100, -1001234)                # 400 with parameters.migrate_to_chat_id
        # Telegram's flood limits, enforced on sending methods: `global_rate` per window overall and
        # `per_chat_rate` per window per chat; anything over gets 429. `window` scales time for fast benches:
        # retry_after is then expressed in units of `window` (so with the default window=1.0 it is seconds).
        tg.enforce_limits(global_rate=30, per_chat_rate=1, window=1.0)
        # Paid broadcasts (Bot API `allow_paid_broadcast`): such sends may go up to `paid_rate` per window overall;
        # each one beyond the free `global_rate` is charged 0.1 Star (counted in stats.stars_charged).
        tg.enforce_limits(global_rate=30, per_chat_rate=1, paid_rate=1000)
        tg.stats.sent, tg.stats.too_many, tg.stats.sent_per_chat[7], tg.stats.too_many_per_chat[7]

Recorded methods: everything that arrives (unknown methods get 404, like Telegram). Answered with realistic
results: getMe, getUpdates, deleteWebhook, setMyCommands, getMyCommands, sendMessage, sendPhoto, sendDocument,
answerInlineQuery, answerCallbackQuery, editMessageText, editMessageReplyMarkup, deleteMessage, sendChatAction.
`update_times[update_id]` and `Call.at` are `time.perf_counter()` stamps (for latency benches, never asserted).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.web_request import FileField

SEND_METHODS = frozenset({"sendMessage", "sendPhoto", "sendDocument", "sendMediaGroup", "copyMessage",
                          "forwardMessage"})
# Form fields the Bot API takes as JSON-serialised values; everything else stays a string (text must not be parsed).
JSON_FIELDS = frozenset({"reply_markup", "results", "commands", "scope", "entities", "caption_entities",
                         "link_preview_options", "allowed_updates", "reply_parameters", "media", "button",
                         "menu_button"})
INT_FIELDS = frozenset({"chat_id", "message_id", "from_chat_id", "offset", "limit", "timeout", "cache_time",
                        "user_id", "message_thread_id"})
BOOL_FIELDS = frozenset({"is_personal", "show_alert", "disable_notification", "drop_pending_updates",
                         "protect_content"})
FAULT_KINDS = frozenset({"429", "403", "400", "500", "502", "drop", "delay"})



def busiest_window(starts: list[float], window: float) -> int:
    """The most requests that left within any `window` seconds (a sliding window, as Telegram counts)."""
    most, first = 0, 0
    for last, at in enumerate(starts):
        while at - starts[first] >= window:
            first += 1
        most = max(most, last - first + 1)
    return most

# How long `wait_for` waits by default. It returns the moment the call is there, so this is only how long a test
# that fails takes to say so: generous, because a reply on a loaded 2-core machine (a CPU burner beside the suite,
# both suites at once) can take several seconds, and a test must not fail on that.
WAIT_FOR = 30.0


@dataclass
class Call:
    """One request the server received."""

    method: str
    params: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)  # field name -> bytes (attach:// references resolved)
    at: float = 0.0  # perf_counter when it arrived
    status: int = 200  # what the server answered

    @property
    def chat_id(self) -> int | str | None:
        return self.params.get("chat_id")

    @property
    def text(self) -> str:
        return str(self.params.get("text") or self.params.get("caption") or "")

    @property
    def reply_markup(self) -> dict[str, Any] | None:
        return self.params.get("reply_markup")

    @property
    def photo(self) -> bytes | None:
        return self.files.get("photo")

    def buttons(self) -> list[dict[str, Any]]:
        """Every inline button of the reply markup, row by row flattened."""
        markup = self.reply_markup or {}
        return [b for row in markup.get("inline_keyboard", []) for b in row]

    def button(self, contains: str) -> dict[str, Any]:
        """The first inline button whose label contains `contains` (case-insensitive)."""
        for b in self.buttons():
            if contains.lower() in b.get("text", "").lower():
                return b
        raise AssertionError(f"no button containing {contains!r} in {[b.get('text') for b in self.buttons()]}")


@dataclass
class LimitStats:
    sent: int = 0  # sending calls accepted
    too_many: int = 0  # 429 answers (injected or enforced)
    sent_per_chat: Counter[Any] = field(default_factory=Counter)
    too_many_per_chat: Counter[Any] = field(default_factory=Counter)
    paid_sent: int = 0  # accepted sends that asked for a paid broadcast
    stars_charged: float = 0.0  # 0.1 Star for each of those beyond the free overall limit


@dataclass
class _Fault:
    method: str  # "*" for any
    kind: str
    times: int
    retry_after: int = 1
    delay: float = 0.0
    chat_id: Any = None  # only for this chat when set


class FakeTelegram:
    """The stand-in server. Use as an async context manager or call `start()` / `close()`."""

    def __init__(self, token: str = "123456:TEST-token", *, bot_id: int = 123456, username: str = "gpuradar_test_bot"):
        self.token = token
        self.bot_user = {"id": bot_id, "is_bot": True, "first_name": "GPU Radar", "username": username,
                         "can_join_groups": True, "can_read_all_group_messages": False,
                         "supports_inline_queries": True}
        self.calls: list[Call] = []
        self.update_times: dict[int, float] = {}
        self.stats = LimitStats()
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}  # (chat_id, message_id) -> message the bot sent
        self._updates: deque[dict[str, Any]] = deque()
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._consumed: set[int] = set()  # indexes into calls already returned by wait_for
        self._cond: asyncio.Condition | None = None
        self._faults: list[_Fault] = []
        self._blocked: set[Any] = set()
        self._migrated: dict[Any, int] = {}
        self._limits: tuple[int, int, float] | None = None
        self._paid_rate: int | None = None
        self._global_window: deque[float] = deque()
        self._chat_window: dict[Any, deque[float]] = {}
        self._runner: web.AppRunner | None = None
        self._closing = False
        self.port = 0
        self.menu_button: dict[str, Any] | None = None  # what setChatMenuButton set last
        self.menu_buttons: dict[Any, dict[str, Any]] = {}  # chat id (None: the default) -> its menu button

    # ----------------------------------------------------------------- lifecycle
    async def start(self) -> FakeTelegram:
        self._cond = asyncio.Condition()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])  # the random port the site was bound to
        return self

    async def close(self) -> None:
        self._closing = True
        if self._cond is not None:
            async with self._cond:
                self._cond.notify_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def session(self, **kwargs: Any) -> Any:
        """An aiogram AiohttpSession pointed at this server."""
        from aiogram.client.session.aiohttp import AiohttpSession
        from aiogram.client.telegram import TelegramAPIServer

        return AiohttpSession(api=TelegramAPIServer.from_base(self.base_url), **kwargs)

    # ----------------------------------------------------------------- feeding updates
    def push_update(self, update: dict[str, Any]) -> int:
        """Queue a raw update (update_id is assigned when missing); returns its update_id."""
        update_id = update.setdefault("update_id", next(self._update_ids))
        self.update_times[update_id] = time.perf_counter()
        self._updates.append(update)
        self._notify()
        return update_id

    def _user(self, user_id: int, lang: str | None, first_name: str, username: str | None) -> dict[str, Any]:
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if lang:
            user["language_code"] = lang
        if username:
            user["username"] = username
        return user

    def message(self, text: str, *, user_id: int = 1001, chat_id: int | None = None, lang: str | None = "en",
                first_name: str = "Tester", username: str | None = None, chat_type: str = "private") -> int:
        """A text message from a user (a command when it starts with '/'); returns the update_id."""
        cid = user_id if chat_id is None else chat_id
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids), "date": int(time.time()),
            "chat": {"id": cid, "type": chat_type, **({"first_name": first_name} if chat_type == "private" else
                                                      {"title": "group"})},
            "from": self._user(user_id, lang, first_name, username), "text": text,
        }
        if text.startswith("/"):
            command = text.split()[0]
            msg["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        return self.push_update({"message": msg})

    def callback(self, data: str, *, message_id: int | None = None, user_id: int = 1001, chat_id: int | None = None,
                 lang: str | None = "en", first_name: str = "Tester", inline_message_id: str | None = None) -> int:
        """A press of an inline button carrying `data` on a message the bot sent (by message_id); update_id back."""
        cid = user_id if chat_id is None else chat_id
        update_id = next(self._update_ids)
        cq: dict[str, Any] = {"id": f"cq{update_id}", "from": self._user(user_id, lang, first_name, None),
                              "chat_instance": f"ci{cid}", "data": data}
        if inline_message_id is not None:
            cq["inline_message_id"] = inline_message_id
        else:
            if message_id is None:  # default: the last message the bot sent to that chat
                sent = [mid for (c, mid) in self.messages if c == cid]
                if not sent:
                    raise AssertionError(f"the bot sent nothing to chat {cid} to press a button on")
                message_id = max(sent)
            cq["message"] = self.messages.get((cid, message_id)) or {
                "message_id": message_id, "date": int(time.time()), "chat": {"id": cid, "type": "private"},
                "from": self.bot_user, "text": ""}
        return self.push_update({"update_id": update_id, "callback_query": cq})

    def press(self, call: Call, contains: str, *, user_id: int | None = None, lang: str | None = "en") -> int:
        """Press the button whose label contains `contains` on the message a recorded send/edit produced."""
        button = call.button(contains)
        if "callback_data" not in button:
            raise AssertionError(f"button {button} carries no callback_data")
        chat_id = call.chat_id
        message_id = call.params.get("message_id") or call.params.get("_result_message_id")
        uid = user_id if user_id is not None else int(chat_id)  # type: ignore[arg-type]
        return self.callback(button["callback_data"], message_id=message_id, user_id=uid,
                             chat_id=int(chat_id), lang=lang)  # type: ignore[arg-type]

    def inline_query(self, query: str, *, user_id: int = 1001, lang: str | None = "en", offset: str = "",
                     first_name: str = "Tester") -> int:
        """An inline query; its id is `str(update_id)`, which is returned."""
        update_id = next(self._update_ids)
        iq = {"id": str(update_id), "from": self._user(user_id, lang, first_name, None), "query": query,
              "offset": offset, "chat_type": "sender"}
        return self.push_update({"update_id": update_id, "inline_query": iq})

    # ----------------------------------------------------------------- observing calls
    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(self, method: str, *, timeout: float = WAIT_FOR, predicate: Callable[[Call], bool] | None = None,
                       **params: Any) -> Call:
        """The next recorded call of `method` not yet returned by an earlier `wait_for`, whose params equal the
        given ones (and that satisfies `predicate`). Raises AssertionError with what was recorded on timeout."""
        assert self._cond is not None, "server not started"

        def find() -> Call | None:
            for i, c in enumerate(self.calls):
                if i in self._consumed or c.method != method:
                    continue
                if any(c.params.get(k) != v for k, v in params.items()):
                    continue
                if predicate is not None and not predicate(c):
                    continue
                self._consumed.add(i)
                return c
            return None

        deadline = asyncio.get_running_loop().time() + timeout
        async with self._cond:
            while True:
                found = find()
                if found is not None:
                    return found
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    seen = [(c.method, c.params.get("chat_id"), c.text[:60]) for c in self.calls[-10:]]
                    raise AssertionError(f"no {method} {params or ''} within {timeout}s; last calls: {seen}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._cond.wait(), left)

    def _notify(self) -> None:
        if self._cond is None:
            return

        async def wake() -> None:
            async with self._cond:  # type: ignore[union-attr]
                self._cond.notify_all()  # type: ignore[union-attr]

        asyncio.get_running_loop().create_task(wake())

    # ----------------------------------------------------------------- faults and limits
    def fail(self, method: str, kind: str, *, times: int = 1, retry_after: int = 1, delay: float = 0.0,
             chat_id: Any = None) -> None:
        """Answer the next `times` calls of `method` ("*" = any method except getUpdates) with a fault:
        "429" (retry_after), "403" (blocked), "400", "500", "502", "drop" (close the connection without an answer),
        "delay" (answer normally after `delay` seconds)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {sorted(FAULT_KINDS)}")
        self._faults.append(_Fault(method, kind, times, retry_after, delay, chat_id))

    def block_chat(self, chat_id: Any) -> None:
        self._blocked.add(int(chat_id))

    def unblock_chat(self, chat_id: Any) -> None:
        self._blocked.discard(int(chat_id))

    def migrate_chat(self, chat_id: Any, new_chat_id: int) -> None:
        self._migrated[int(chat_id)] = new_chat_id

    def enforce_limits(self, *, global_rate: int = 30, per_chat_rate: int = 1, window: float = 1.0,
                       paid_rate: int | None = None) -> None:
        """Answer 429 to sending calls beyond `global_rate` per `window` overall or `per_chat_rate` per window per
        chat (sliding windows). retry_after is in units of `window` (seconds with the default window).
        `paid_rate`: a send with `allow_paid_broadcast` may pass up to that many per window overall (Telegram: up
        to 1,000 a second, 0.1 Star each beyond the free limit); without it such a send is held to `global_rate`
        like any other (a bot whose balance cannot pay)."""
        self._limits = (global_rate, per_chat_rate, window)
        self._paid_rate = paid_rate
        self._global_window.clear()
        self._chat_window.clear()

    def disable_limits(self) -> None:
        self._limits = None

    def _take_fault(self, method: str, chat_id: Any) -> _Fault | None:
        for f in self._faults:
            if f.times <= 0 or (f.method != method and not (f.method == "*" and method != "getUpdates")):
                continue
            if f.chat_id is not None and f.chat_id != chat_id:
                continue
            f.times -= 1
            return f
        return None

    def _limit_verdict(self, chat_id: Any, now: float, paid: bool = False) -> int | None:
        """None when the send may pass (and is counted), else retry_after in window units."""
        assert self._limits is not None
        global_rate, per_chat_rate, window = self._limits
        charged = False
        if paid and self._paid_rate is not None:
            gw = self._global_window
            while gw and now - gw[0] >= window:
                gw.popleft()
            charged = len(gw) >= global_rate
            global_rate = max(global_rate, self._paid_rate)
        gw = self._global_window
        while gw and now - gw[0] >= window:
            gw.popleft()
        cw = self._chat_window.setdefault(chat_id, deque())
        while cw and now - cw[0] >= window:
            cw.popleft()
        waits = []
        if len(gw) >= global_rate:
            waits.append(gw[0] + window - now)
        if len(cw) >= per_chat_rate:
            waits.append(cw[0] + window - now)
        if waits:
            return max(1, math.ceil(max(waits) / window))
        gw.append(now)
        cw.append(now)
        if charged:
            self.stats.stars_charged += 0.1
        return None

    # ----------------------------------------------------------------- HTTP
    async def _read_params(self, request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
        params: dict[str, Any] = {}
        files: dict[str, bytes] = {}
        ctype = request.content_type
        if ctype == "application/json":
            body = await request.read()
            params = json.loads(body) if body else {}
            return params, files
        if ctype in ("multipart/form-data", "application/x-www-form-urlencoded"):
            form = await request.post()
            for key, value in form.items():
                if isinstance(value, FileField):
                    files[key] = value.file.read()
                else:
                    params[key] = self._decode(key, str(value))
        params.update({k: self._decode(k, v) for k, v in request.query.items() if k not in params})
        # aiogram sends `photo=attach://<field>` with the bytes in that field: resolve to the parameter's name.
        for key, value in list(params.items()):
            if isinstance(value, str) and value.startswith("attach://") and value[9:] in files:
                files[key] = files.pop(value[9:])
        return params, files

    @staticmethod
    def _decode(key: str, value: str) -> Any:
        if key in JSON_FIELDS:
            try:
                return json.loads(value)
            except ValueError:
                return value
        if key in INT_FIELDS:
            with contextlib.suppress(ValueError):
                return int(value)
        if key in BOOL_FIELDS:
            return value.lower() == "true"
        return value

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return self._error(401, "Unauthorized")
        params, files = await self._read_params(request)
        call = Call(method, params, files, time.perf_counter())
        if method != "getUpdates":
            self.calls.append(call)
        chat_id = params.get("chat_id")
        response = await self._answer(request, method, params, chat_id, call)
        call.status = response.status if response is not None else 0
        if method != "getUpdates":
            self._notify()
        if response is None:  # "drop": the connection is gone, nothing to answer
            raise ConnectionResetError("dropped by FakeTelegram")
        return response

    async def _answer(self, request: web.Request, method: str, params: dict[str, Any], chat_id: Any,
                      call: Call) -> web.Response | None:
        fault = self._take_fault(method, chat_id)
        if fault is not None:
            if fault.kind == "delay":
                await asyncio.sleep(fault.delay)
            elif fault.kind == "drop":
                if request.transport is not None:
                    request.transport.abort()
                return None
            else:
                return self._fault_response(fault, chat_id)
        if method in SEND_METHODS or method.startswith("edit"):
            if chat_id in self._blocked:
                return self._error(403, "Forbidden: bot was blocked by the user")
            if chat_id in self._migrated:
                return self._error(400, "Bad Request: group chat was upgraded to a supergroup chat",
                                   {"migrate_to_chat_id": self._migrated[chat_id]})
        if method in SEND_METHODS and self._limits is not None:
            paid = str(params.get("allow_paid_broadcast", "")).lower() in ("true", "1")
            retry = self._limit_verdict(chat_id, time.perf_counter(), paid)
            if retry is not None:
                self.stats.too_many += 1
                self.stats.too_many_per_chat[chat_id] += 1
                return self._error(429, f"Too Many Requests: retry after {retry}", {"retry_after": retry})
        if method in SEND_METHODS:
            if str(params.get("allow_paid_broadcast", "")).lower() in ("true", "1"):
                self.stats.paid_sent += 1
            self.stats.sent += 1
            self.stats.sent_per_chat[chat_id] += 1
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return self._error(404, "Not Found: method not found")
        result = handler(params, call)
        if asyncio.iscoroutine(result):
            result = await result
        if isinstance(result, web.Response):
            return result
        return web.json_response({"ok": True, "result": result})

    def _fault_response(self, fault: _Fault, chat_id: Any) -> web.Response:
        if fault.kind == "429":
            self.stats.too_many += 1
            self.stats.too_many_per_chat[chat_id] += 1
            return self._error(429, f"Too Many Requests: retry after {fault.retry_after}",
                               {"retry_after": fault.retry_after})
        if fault.kind == "403":
            return self._error(403, "Forbidden: bot was blocked by the user")
        if fault.kind == "400":
            return self._error(400, "Bad Request: injected")
        return self._error(int(fault.kind), "Internal Server Error" if fault.kind == "500" else "Bad Gateway")

    @staticmethod
    def _error(status: int, description: str, parameters: dict[str, Any] | None = None) -> web.Response:
        body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
        if parameters:
            body["parameters"] = parameters
        return web.json_response(body, status=status)

    # ----------------------------------------------------------------- Bot API methods
    def _m_getMe(self, params: dict[str, Any], call: Call) -> Any:
        return self.bot_user

    def _m_deleteWebhook(self, params: dict[str, Any], call: Call) -> Any:
        return True

    def _m_setMyCommands(self, params: dict[str, Any], call: Call) -> Any:
        return True

    def _m_getMyCommands(self, params: dict[str, Any], call: Call) -> Any:
        return []

    def _m_setChatMenuButton(self, params: dict[str, Any], call: Call) -> Any:
        self.menu_button = params.get("menu_button")  # the default (no chat_id) or one chat's; the latest kept
        chat = params.get("chat_id")
        self.menu_buttons[None if chat is None else int(chat)] = self.menu_button or {"type": "default"}
        return True

    def _m_getChatMenuButton(self, params: dict[str, Any], call: Call) -> Any:
        """A chat's own button, else the default (as Telegram answers: the button that chat shows)."""
        chat = params.get("chat_id")
        own = self.menu_buttons.get(int(chat)) if chat is not None else None
        if own is not None and own.get("type") != "default":
            return own
        return self.menu_buttons.get(None) or {"type": "commands"}

    def _m_sendChatAction(self, params: dict[str, Any], call: Call) -> Any:
        return True

    def _m_answerInlineQuery(self, params: dict[str, Any], call: Call) -> Any:
        results = params.get("results") or []
        ids = [r.get("id") for r in results]
        if len(results) > 50:
            return self._error(400, "Bad Request: too many inline query results specified")
        if len(set(ids)) != len(ids):
            return self._error(400, "Bad Request: RESULT_ID_DUPLICATE")
        return True

    def _m_answerCallbackQuery(self, params: dict[str, Any], call: Call) -> Any:
        return True

    def _m_deleteMessage(self, params: dict[str, Any], call: Call) -> Any:
        key = (params.get("chat_id"), params.get("message_id"))
        if key not in self.messages:
            return self._error(400, "Bad Request: message to delete not found")
        del self.messages[key]
        return True

    def _new_message(self, params: dict[str, Any], call: Call, **content: Any) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if not isinstance(chat_id, int):
            return {"_error": self._error(400, "Bad Request: chat not found")}
        message_id = next(self._message_ids)
        msg: dict[str, Any] = {"message_id": message_id, "date": int(time.time()),
                               "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
                               "from": self.bot_user, **content}
        if params.get("reply_markup") and "inline_keyboard" in params["reply_markup"]:
            msg["reply_markup"] = params["reply_markup"]
        self.messages[(chat_id, message_id)] = msg
        call.params["_result_message_id"] = message_id
        return msg

    def _m_sendMessage(self, params: dict[str, Any], call: Call) -> Any:
        text = params.get("text")
        if not text:
            return self._error(400, "Bad Request: message text is empty")
        if len(str(text)) > 4096:
            return self._error(400, "Bad Request: message is too long")
        msg = self._new_message(params, call, text=text)
        return msg.get("_error", msg)

    def _m_sendPhoto(self, params: dict[str, Any], call: Call) -> Any:
        photo = call.files.get("photo")
        if not photo and not params.get("photo"):
            return self._error(400, "Bad Request: there is no photo in the request")
        size = len(photo or b"")
        content: dict[str, Any] = {"photo": [{"file_id": f"photo{len(self.calls)}", "file_unique_id": "u",
                                              "width": 800, "height": 450, "file_size": size}]}
        if params.get("caption"):
            content["caption"] = params["caption"]
        msg = self._new_message(params, call, **content)
        return msg.get("_error", msg)

    def _m_sendDocument(self, params: dict[str, Any], call: Call) -> Any:
        msg = self._new_message(params, call, document={"file_id": "doc", "file_unique_id": "d"})
        return msg.get("_error", msg)

    def _edit(self, params: dict[str, Any], **changes: Any) -> Any:
        if params.get("inline_message_id"):
            return True
        key = (params.get("chat_id"), params.get("message_id"))
        msg = self.messages.get(key)  # type: ignore[arg-type]
        if msg is None:
            return self._error(400, "Bad Request: message to edit not found")
        new = dict(msg)
        new.update({k: v for k, v in changes.items() if v is not None})
        if "reply_markup" in changes and changes["reply_markup"] is None:
            new.pop("reply_markup", None)
        if new == msg:
            return self._error(400, "Bad Request: message is not modified: specified new message content and reply "
                                    "markup are exactly the same as a current content and reply markup of the message")
        self.messages[key] = new  # type: ignore[index]
        return new

    def _m_editMessageText(self, params: dict[str, Any], call: Call) -> Any:
        text = params.get("text")
        if not text:
            return self._error(400, "Bad Request: message text is empty")
        if len(str(text)) > 4096:
            return self._error(400, "Bad Request: MESSAGE_TOO_LONG")
        markup = params.get("reply_markup")
        return self._edit(params, text=text, reply_markup=markup if markup and "inline_keyboard" in markup else None)

    def _m_editMessageReplyMarkup(self, params: dict[str, Any], call: Call) -> Any:
        markup = params.get("reply_markup")
        return self._edit(params, reply_markup=markup if markup and "inline_keyboard" in markup else None)

    async def _m_getUpdates(self, params: dict[str, Any], call: Call) -> Any:
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        timeout = float(params.get("timeout") or 0)
        # Confirm (drop) everything below the offset, as Telegram does.
        while self._updates and self._updates[0]["update_id"] < offset:
            self._updates.popleft()
        assert self._cond is not None
        deadline = asyncio.get_running_loop().time() + timeout
        async with self._cond:
            while not self._updates and not self._closing:
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._cond.wait(), left)
        return [u for u in itertools.islice(self._updates, 0, limit) if u["update_id"] >= offset]
