"""aiogram FSM storage on the shared database, so a conversation survives a switch between replicas.

aiogram's default `MemoryStorage` keeps the `/subscribe` wizard's step in one process: behind a load balancer the
next button press may reach another replica, which would not know the wizard and ignore the press. `SqlStorage`
keeps one row per storage key in `fsm_states` (state + data as JSON), on SQLite and PostgreSQL alike.

Each call is one short transaction; writes are upserts, so two replicas writing the same key never fail on the
primary key (the later write wins, as with Redis). A key back at "no state, no data" is deleted, so the table
holds only conversations in progress.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from aiogram.fsm.state import State
from aiogram.fsm.storage.base import BaseStorage, DefaultKeyBuilder, KeyBuilder, StateType, StorageKey
from sqlalchemy import cast, delete, func, literal, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.fsm_tables import FsmState
from storage.upsert import upsert_insert


def _state_name(state: StateType) -> str | None:
    return state.state if isinstance(state, State) else state


class SqlStorage(BaseStorage):
    """`BaseStorage` on the `fsm_states` table. The sessionmaker is the application's; `close()` leaves its engine
    alone (the application disposes it)."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], key_builder: KeyBuilder | None = None) -> None:
        self.sessionmaker = sessionmaker
        # Bot id and destiny in the key: one database may serve several bots, and aiogram's scenes use destinies.
        self.key_builder = key_builder or DefaultKeyBuilder(with_bot_id=True, with_destiny=True,
                                                            with_business_connection_id=True)

    def _key(self, key: StorageKey) -> str:
        return self.key_builder.build(key)

    async def _upsert(self, key: StorageKey, **values: Any) -> None:
        """Set the given columns of the key's row, creating the row when missing."""
        row_key = self._key(key)
        now = datetime.now(UTC)
        async with self.sessionmaker() as session, session.begin():
            dialect = session.get_bind().dialect.name
            row = {"state": None, "data": {}, **values}
            stmt = upsert_insert(session, FsmState).values(key=row_key, updated_at=now, **row)
            await session.execute(stmt.on_conflict_do_update(index_elements=["key"],
                                                             set_={**values, "updated_at": now}))
            # Back to nothing: drop the row instead of keeping an empty one per user for ever.
            await session.execute(delete(FsmState).where(
                FsmState.key == row_key, FsmState.state.is_(None), _is_empty(FsmState.data, dialect)))

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        await self._upsert(key, state=_state_name(state))

    async def get_state(self, key: StorageKey) -> str | None:
        async with self.sessionmaker() as session:
            return (await session.execute(select(FsmState.state).where(FsmState.key == self._key(key)))).scalar()

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        await self._upsert(key, data=dict(data))

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        async with self.sessionmaker() as session:
            data = (await session.execute(select(FsmState.data).where(FsmState.key == self._key(key)))).scalar()
        return dict(data or {})  # a copy: callers mutate it (BaseStorage.update_data does)

    async def close(self) -> None:
        """Nothing of its own to close: the engine belongs to the application."""


def _is_empty(column: Any, dialect: str) -> Any:
    """SQL for "this JSON column holds an empty object", per dialect (JSON has no portable equality)."""
    if dialect == "postgresql":
        return cast(column, JSONB) == literal({}, JSONB)  # a bound {} (a literal "{}" would be a JSON string)
    return func.json(column) == "{}"
