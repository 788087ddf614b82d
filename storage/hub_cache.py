"""Read and write the shared Hub lookup cache (`storage.hub_tables.HubModel`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.hub_tables import REPO_LEN, HubModel


def _key(repo: str) -> str:
    return repo.strip().lower()[:REPO_LEN]  # the Hub resolves names case-insensitively


async def load(sm: async_sessionmaker[AsyncSession], repo: str,
               now: datetime | None = None) -> tuple[str, dict[str, Any] | None] | None:
    """(status, arch record) remembered for `repo` and not yet expired, else None."""
    now = now or datetime.now(UTC)
    async with sm() as session:
        row = await session.get(HubModel, _key(repo))
        if row is None or row.expires_at <= now:
            return None
        return row.status, row.arch


async def save(sm: async_sessionmaker[AsyncSession], repo: str, status: str, arch: dict[str, Any] | None,
               ttl: timedelta, now: datetime | None = None) -> None:
    """Remember a lookup for `ttl`; two replicas storing the same name at once is harmless (last one wins)."""
    now = now or datetime.now(UTC)
    key = _key(repo)
    for _attempt in range(2):
        async with sm() as session:
            row = await session.get(HubModel, key)
            if row is None:
                session.add(HubModel(repo=key, status=status, arch=arch, fetched_at=now, expires_at=now + ttl))
            else:
                row.status, row.arch, row.fetched_at, row.expires_at = status, arch, now, now + ttl
            try:
                await session.commit()
                return
            except IntegrityError:  # another replica inserted it between our read and write: update theirs
                await session.rollback()


async def purge_expired(sm: async_sessionmaker[AsyncSession], now: datetime | None = None) -> int:
    """Delete expired rows (the table stays as small as the set of names people ask for this week)."""
    now = now or datetime.now(UTC)
    async with sm() as session:
        result = await session.execute(delete(HubModel).where(HubModel.expires_at <= now))
        await session.commit()
        return int(getattr(result, "rowcount", 0) or 0)


async def count(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm() as session:
        return len((await session.execute(select(HubModel.repo))).all())


class HubCacheStore:
    """The shared cache of `modelhub.HubResolver` (its `HubCache`) on this table; wired in by `gpuradar/`."""

    def __init__(self, sm: async_sessionmaker[AsyncSession]) -> None:
        self._sm = sm

    async def load(self, repo: str) -> tuple[str, dict[str, Any] | None] | None:
        return await load(self._sm, repo)

    async def save(self, repo: str, status: str, record: dict[str, Any] | None, ttl: timedelta) -> None:
        await save(self._sm, repo, status, record, ttl)
