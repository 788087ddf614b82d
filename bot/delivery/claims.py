"""Which deliveries this sender may send while several senders (one per replica) share one outbox.

Each delivery carries its sender's claim (`owner`, unique per process) with an expiry by the database's clock,
renewed every `claim_ttl / 3`. Another sender takes a delivery over when its claim has lapsed, or at once when its
owner was a process on this host that no longer runs (after a SIGKILL and restart nothing waits). A sender whose
renewal is late starts no new message until one succeeds: a message starts only while at least its whole request
timeout is left on the claim, so a stalled sender's request has ended before anyone may take its deliveries over;
deliveries taken over meanwhile are `lost` to it, dropped from its memory, not sent.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.outbox import claim_owners, release_claims, renew_claims, still_claimed, take_over_deliveries

log = logging.getLogger(__name__)

WriteSession = Callable[[], AbstractAsyncContextManager[AsyncSession]]


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def dead_local_owners(owners: list[str], me: str) -> list[str]:
    """The owners (`host:pid:nonce`, see storage.lease.default_holder_id) that were processes on this host and no
    longer run: their pid is gone, or it is our own pid with another nonce (a restarted container's pid 1).
    Owners on other hosts are never judged here: only their claim's expiry frees their deliveries."""
    host = socket.gethostname()
    dead = []
    for owner in owners:
        parts = owner.rsplit(":", 2)
        if owner == me or len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        pid = int(parts[1])
        if (pid == os.getpid()) or not _pid_running(pid):
            dead.append(owner)
    return dead


class Claims:
    """This sender's claims: renewed, checked before each send, taken over from dead senders, released on stop.

    `write` opens the sender's one write transaction at a time; `known` is the set of delivery ids the sender holds
    in memory (read under the write lock, so no claim of ours is between its commit and memory then)."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], write: WriteSession, *, owner: str,
                 claim_ttl: float, request_timeout: float, known: Callable[[], set[int]]) -> None:
        self.sessionmaker = sessionmaker
        self._write = write
        self.owner = owner
        self.ttl = claim_ttl
        self.request_timeout = request_timeout
        self._known = known
        self.until = 0.0  # time.monotonic() until which our claims are known to hold
        self.lost: set[int] = set()  # deliveries in memory that another sender has taken over

    async def renew(self) -> None:
        """Extend our claims; deliveries in memory that are no longer ours (taken over while we stalled) are lost."""
        started = time.monotonic()
        async with self._write() as session:
            known = set(self._known())
            mine = await renew_claims(session, self.owner, self.ttl)
            gone = known - mine
            if gone:  # finished just now (sent or failed, still in memory for a moment) is not taken over
                gone -= await still_claimed(session, self.owner, gone)
        self.until = started + self.ttl
        self.lost = (self.lost & self._known()) | gone
        if gone:
            log.warning("%d deliveries were taken over by another sender; not sending them here", len(gone))

    async def take_over(self) -> int:
        """Claim the deliveries of senders that died (claim lapsed, or a gone process on this host)."""
        async with self.sessionmaker() as session:
            dead = dead_local_owners(await claim_owners(session, self.owner), self.owner)
        async with self._write() as session:
            taken = await take_over_deliveries(session, self.owner, self.ttl, dead)
        if taken:
            log.warning("took over %d deliveries from senders that stopped renewing their claims", len(taken))
        return len(taken)

    async def hold(self, delivery_id: int, sleep: Callable[[float], Awaitable[bool]]) -> bool:
        """Before a send: the delivery is still ours and our claim outlasts the request. Waits (for the renewal)
        while the claim is short; False when the delivery was taken over or `sleep` says we are stopping."""
        while time.monotonic() + self.request_timeout > self.until:
            if not await sleep(0.05):
                return False
        return delivery_id not in self.lost

    def forget(self, delivery_id: int) -> None:
        self.lost.discard(delivery_id)

    async def release(self) -> None:
        """A clean stop: what stays queued may go out from another replica right away."""
        async with self._write() as session:
            await release_claims(session, self.owner)


