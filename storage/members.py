"""Who is alive in a group of replicas, by the database's clock: one row per member, renewed while it runs.

A member checks in (an upsert of its row with `expires_at = now + ttl`, `now` being the database's clock, so no
host's skew decides anything) and gets back every member whose row has not expired; expired rows are deleted on the
way. A member that stops checks out (deletes its row), so the others see it gone at their next check-in; one that
dies leaves a row that expires after `ttl`. One short transaction per check-in, a handful of rows.

Used for the replicas' share of Telegram's rate limit (`storage.rate_share`, table `rate_shares`) and for the
senders' share of the matching work (`storage.sender_shares`, table `sender_shares`). A table here has its member's
name as its one primary-key column plus `seen_at` and `expires_at` (floats: seconds by the database's clock).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Table, delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.lease import db_now
from storage.upsert import upsert_insert


def _key(table: Table) -> str:
    (column,) = table.primary_key.columns
    return column.name


async def check_in(sessionmaker: async_sessionmaker[AsyncSession], table: Table, member: str, ttl: float, *,
                   dead: Callable[[list[str]], list[str]] | None = None) -> list[str]:
    """Say `member` is alive for the next `ttl` seconds; returns the live members (itself included), sorted.
    `dead` names the members known dead already (a process on this host that is gone): their rows go at once
    instead of when they expire."""
    key = _key(table)
    async with sessionmaker() as session, session.begin():
        now = db_now(session.get_bind().dialect.name)
        stmt = upsert_insert(session, table).values({key: member, "seen_at": now, "expires_at": now + ttl})
        await session.execute(stmt.on_conflict_do_update(
            index_elements=[table.c[key]], set_={"seen_at": stmt.excluded.seen_at,
                                                 "expires_at": stmt.excluded.expires_at}))
        await session.execute(delete(table).where(table.c.expires_at < now))
        alive = sorted((await session.execute(select(table.c[key]))).scalars())
        gone = set(dead(alive)) - {member} if dead is not None else set()
        if gone:
            await session.execute(delete(table).where(table.c[key].in_(sorted(gone))))
        return [m for m in alive if m not in gone]


async def check_out(sessionmaker: async_sessionmaker[AsyncSession], table: Table, member: str) -> None:
    """`member` stops: the others no longer count it from their next check-in."""
    async with sessionmaker() as session, session.begin():
        await session.execute(delete(table).where(table.c[_key(table)] == member))
