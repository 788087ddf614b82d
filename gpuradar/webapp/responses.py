"""The API's read answers as bytes built once and sent many times: versioned, capped, with ETags.

A page load must cost the bot's event loop a dictionary look-up, not a build: every public read (`/api/matrix`,
`/api/offers`, `/api/estimate`, `/api/history`, `/api/texts`) is kept here as a `Body` (the JSON, gzipped once when
that pays, and an ETag: a hash of the JSON) under its key (language, currency, filter, page) and the version it was
built from (the offer cache's, or a time step for the history). Builds run off the loop (`asyncio.to_thread`: the
loop gets its turn every few milliseconds, the interpreter's switch interval, instead of waiting for the whole
build), once per key and version however many viewers ask meanwhile; a viewer who finds the previous version's
answer gets it while the new one is built (a glance one poll old beats a wait behind the build). A repeat viewer's
browser sends the ETag back (`If-None-Match`) and gets `304 Not Modified`: no body at all.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from aiohttp import web

GZIP_FROM = 1024  # bytes: smaller answers go as they are (gzip's header would eat the gain)
# Stored by the browser but asked again each time (a 304 when nothing changed): prices move with every poll.
REVALIDATE = "no-cache"

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Body:
    """One answer as sent: the JSON, the same gzipped (None when small), its ETag."""

    raw: bytes
    gz: bytes | None
    etag: str


def body_of(data: Any) -> Body:
    """JSON bytes, gzip and ETag of `data` (CPU work: call it in a thread for anything large)."""
    return body_from(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def body_from(raw: bytes) -> Body:
    """`raw` JSON with its gzip and ETag."""
    gz = gzip.compress(raw, compresslevel=6, mtime=0) if len(raw) >= GZIP_FROM else None
    return Body(raw, gz, '"' + hashlib.blake2b(raw, digest_size=12).hexdigest() + '"')


def _matches(header: str, etag: str) -> bool:
    """If-None-Match names this ETag (weak comparison, RFC 9110 13.1.2), or is `*`."""
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def send(request: web.Request, body: Body, *, cache_control: str = REVALIDATE) -> web.Response:
    """`body` as the answer: 304 when the client holds it already, gzipped when the client takes it."""
    headers = {"ETag": body.etag, "Cache-Control": cache_control, "Vary": "Accept-Encoding"}
    if _matches(request.headers.get("If-None-Match", ""), body.etag):
        return web.Response(status=304, headers=headers)
    if body.gz is not None and "gzip" in request.headers.get("Accept-Encoding", ""):
        headers["Content-Encoding"] = "gzip"
        return web.Response(body=body.gz, content_type="application/json", headers=headers)
    return web.Response(body=body.raw, content_type="application/json", headers=headers)


class Built(Generic[K, V]):
    """Values built once per (key, version), the latest `cap` keys kept (least recently used dropped first).

    `get` answers from what is kept when its version is current; else it starts one build for that key and version
    (later callers join it) and, when an older version is kept and `stale` allows it, answers with that meanwhile.
    Versions only grow: a slow build of an older version never replaces a newer one."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._kept: OrderedDict[K, tuple[Any, V]] = OrderedDict()
        self._building: dict[tuple[K, Any], asyncio.Task[V]] = {}
        self.builds = 0  # builds finished (tests: viewers do not add any)

    def __len__(self) -> int:
        return len(self._kept)

    def has(self, key: K) -> bool:
        """Something is kept for `key`, current or not (a `get` of it will not wait for a build)."""
        return key in self._kept

    def latest(self, key: K) -> V | None:
        """What is kept for `key`, whatever its version."""
        hit = self._kept.get(key)
        return hit[1] if hit is not None else None

    def current(self, key: K, version: Any) -> V | None:
        hit = self._kept.get(key)
        return hit[1] if hit is not None and hit[0] == version else None

    async def get(self, key: K, version: Any, build: Callable[[], Awaitable[V]], *, stale: bool = True) -> V:
        hit = self._kept.get(key)
        if hit is not None and hit[0] == version:
            self._kept.move_to_end(key)
            return hit[1]
        task = self._building.get((key, version))
        if task is None:
            task = asyncio.create_task(self._build(key, version, build))
            self._building[(key, version)] = task
            task.add_done_callback(lambda _: self._building.pop((key, version), None))
        if hit is not None and stale:
            self._kept.move_to_end(key)
            return hit[1]
        return await asyncio.shield(task)  # a viewer who leaves does not cancel the others' build

    async def _build(self, key: K, version: Any, build: Callable[[], Awaitable[V]]) -> V:
        value = await build()
        kept = self._kept.get(key)
        if kept is None or not kept[0] > version:
            self._kept[key] = (version, value)
            self._kept.move_to_end(key)
            while len(self._kept) > self.cap:
                self._kept.popitem(last=False)
        self.builds += 1
        return value
