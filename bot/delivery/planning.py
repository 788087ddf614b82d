"""Who is due to hear what: the users waiting longest, their quiet hours and blocks, and their unheard events
turned into deliveries that are written, with the users' cursors, in one short transaction.

Reading and rendering happen outside the write transaction and hand the event loop back between users, so the
messages already prepared keep going out meanwhile (a batch rendered in one go held the loop for 100-200 ms: the
pipe to Telegram idled, and sends that had started late arrived bunched, earning 429s). The write is short: the
cursors' compare-and-set (another sender that planned one of these users first makes it roll back,
`ClaimConflict`) and the deliveries with their final text, in one transaction.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.delivery.claims import WriteSession
from bot.delivery.jobs import Job, round_robin
from bot.delivery.rendering import DigestRenderer
from core.availability import WindowStats
from storage.availability import offer_stats
from storage.outbox import (
    AlertItem,
    FanOut,
    OwedDeletes,
    PlannedDelivery,
    UserPlan,
    advance_cursors,
    create_deliveries,
)

log = logging.getLogger(__name__)

# Users planned per transaction: rendering their digests holds the event loop, so a few at a time keeps sending
# going between plans.
PLAN_USERS = 40


def quiet_until(now: datetime, start: int | None, end: int | None, tz_offset_minutes: int) -> datetime | None:
    """The UTC moment the user's quiet hours end, when `now` falls inside them; None otherwise.
    Hours are local (the user's offset); a window may wrap midnight (23 -> 7)."""
    if start is None or end is None or start == end:
        return None
    local = now + timedelta(minutes=tz_offset_minutes)
    h = local.hour
    inside = start <= h < end if start < end else (h >= start or h < end)
    if not inside:
        return None
    end_local = local.replace(hour=end, minute=0, second=0, microsecond=0)
    if end_local <= local:
        end_local += timedelta(days=1)
    return end_local - timedelta(minutes=tz_offset_minutes)


class DigestPlanner:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], write: WriteSession, fanout: FanOut,
                 renderer: DigestRenderer, *, owner: str, claim_ttl: float, clock: Callable[[], datetime]) -> None:
        self.sessionmaker = sessionmaker
        self._write = write
        self.fanout = fanout
        self.renderer = renderer
        self.owner = owner
        self.claim_ttl = claim_ttl
        self.clock = clock
        self.held: dict[int, datetime] = {}  # user id -> end of their quiet hours (their events wait, in memory)
        self.blocked: set[int] = set()  # users who blocked the bot since this sender started

    async def any_due(self) -> bool:
        """Whether some user has an unheard event whose time has come."""
        async with self.sessionmaker() as session:
            await self.fanout.refresh(session, self.clock())
        return bool(self.fanout.due_users(1, self.held, self.clock()))

    def _needs_week(self, plan: UserPlan, item: AlertItem) -> bool:
        return plan.active and self.renderer.needs_week(item.event_id, plan.lang, plan.currency)

    async def plan(self, room: int) -> tuple[int, list[Job]]:
        """Turn the unheard events of up to `room` (at most PLAN_USERS) users waiting longest into written
        deliveries; returns how many users were looked at, and the jobs in the order they should go."""
        now = self.clock()
        async with self.sessionmaker() as session:
            await self.fanout.refresh(session, now)
            users = self.fanout.due_users(min(room, PLAN_USERS), self.held, now)
            if not users:
                return 0, []
            plans = await self.fanout.plans(session, users)
            # Only the offers whose shared parts are not rendered yet need their 7 days (read once per event and
            # language, not once per 40 users: a poll's offers were read again for every plan, a tenth of the
            # sender's CPU at 1,000 messages a second).
            weeks = await availability_weeks(session, plans, now, wanted=self._needs_week)
        done: list[UserPlan] = []
        planned: list[PlannedDelivery] = []
        moves: list[tuple[int, int, int]] = []
        for plan in plans:
            if plan.active and plan.user_id not in self.blocked:
                until = quiet_until(now, plan.quiet_start, plan.quiet_end, plan.tz_offset_minutes)
                if until is not None:
                    self.held[plan.user_id] = until  # delayed, never dropped: all of it goes out at the end
                    continue
                planned.extend(self.renderer.render(plan, weeks))
                await asyncio.sleep(0)  # let the prepared messages go out between users
            # An inactive (blocked) user's events are dropped with the cursor move: nobody to tell.
            self.held.pop(plan.user_id, None)
            moves.append((plan.user_id, plan.cursor, plan.upto))
            done.append(plan)
        owed: OwedDeletes | None = None
        try:
            async with self._write() as session:
                # A user who blocked the bot while we rendered: their events are dropped like an inactive user's
                # (under the write lock, so the block's own write either came before this check or fails these
                # deliveries).
                planned = [p for p in planned if p.user_id not in self.blocked]
                await advance_cursors(session, moves)
                owed = await self.fanout.record_owed(session, done, now)
                delivery_ids = await create_deliveries(session, planned, now, owner=self.owner,
                                                       claim_ttl=self.claim_ttl)
        except BaseException:
            if owed is not None:  # rolled back after the owed rows' deletes were taken: the next plan carries them
                self.fanout.owed_not_written(owed)
            raise
        jobs = [Job(did, p.user_id, p.chat_id, p.text, p.reply_markup)
                for p, did in zip(planned, delivery_ids, strict=True)]
        for plan in done:
            self.fanout.planned(plan)
        return len(users), round_robin(jobs)


async def availability_weeks(session: AsyncSession, plans: Sequence[UserPlan], now: datetime, *,
                             wanted: Callable[[UserPlan, AlertItem], bool] | None = None) -> dict[str, WindowStats]:
    """The last 7 days of each alerted offer's group (the alert's availability line), by offer key; none when they
    cannot be read (an alert never waits on its statistics). `wanted`: only the items it says need them."""
    offers = {item.target.key: item.event.offer for plan in plans for items in plan.by_chat.values()
              for item in items if wanted is None or wanted(plan, item)}
    if not offers:
        return {}
    try:
        stats = await offer_stats(session, offers.values(), now=now, days=(7,))
    except SQLAlchemyError as e:
        log.warning("availability figures for alerts unavailable: %s", e)
        return {}
    return {key: s.window(7) for key, s in stats.items()}
