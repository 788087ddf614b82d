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

import functools
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Delete, Executable, Float, Select, Table, bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.lease import db_now
from storage.upsert import insert_for


def _key(table: Table) -> str:
    (column,) = table.primary_key.columns
    return column.name


@dataclass(frozen=True, slots=True)
class _CheckIn:
    """A table's check-in statements, built once per table and database: a check-in runs every few seconds in
    every process, and building them anew each time made SQLAlchemy objects in reference cycles (the upsert's
    `excluded` alias copies the table's columns), which the bot's frozen heap kept until its hourly full
    collection when one was in flight at a freeze (gpuradar/heap.py)."""

    renew: Executable  # parameters: member, ttl
    expire: Delete
    alive: Select[str]


@functools.cache
def _check_in_statements(table: Table, dialect: str) -> _CheckIn:
    key = _key(table)
    now = db_now(dialect)  # the database's clock, read by each execution
    stmt = insert_for(dialect, table).values(
        {key: bindparam("member"), "seen_at": now, "expires_at": now + bindparam("ttl", type_=Float)})
    renew = stmt.on_conflict_do_update(index_elements=[table.c[key]], set_={"seen_at": stmt.excluded.seen_at,
                                                                           "expires_at": stmt.excluded.expires_at})
    return _CheckIn(renew, delete(table).where(table.c.expires_at < now), select(table.c[key]))


async def check_in(sessionmaker: async_sessionmaker[AsyncSession], table: Table, member: str, ttl: float, *,
                   dead: Callable[[list[str]], list[str]] | None = None) -> list[str]:
    """Say `member` is alive for the next `ttl` seconds; returns the live members (itself included), sorted.
    `dead` names the members known dead already (a process on this host that is gone): their rows go at once
    instead of when they expire."""
    key = _key(table)
    async with sessionmaker() as session, session.begin():
        statements = _check_in_statements(table, session.get_bind().dialect.name)
        await session.execute(statements.renew, {"member": member, "ttl": ttl})
        await session.execute(statements.expire)
        alive = sorted((await session.execute(statements.alive)).scalars())
        gone = set(dead(alive)) - {member} if dead is not None else set()
        if gone:
            await session.execute(delete(table).where(table.c[key].in_(sorted(gone))))
        return [m for m in alive if m not in gone]


async def check_out(sessionmaker: async_sessionmaker[AsyncSession], table: Table, member: str) -> None:
    """`member` stops: the others no longer count it from their next check-in."""
    async with sessionmaker() as session, session.begin():
        await session.execute(delete(table).where(table.c[_key(table)] == member))
