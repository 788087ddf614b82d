"""Replicas share the matching work (issue 26): each running alert sender matches and plans only its part of the
users, instead of every replica's sender holding every subscription and matching every event against all of them.

The senders alive are those whose `sender_shares` row has not expired (`storage.members`: checked in by the
database's clock, every third of `ttl`; a stopping sender checks out, a dead one's row expires). Sorted by name,
sender k of n takes the users whose id is k modulo n: its subscription index holds only their subscriptions, a poll
is matched only against them, and only they are planned by it. Ids are handed out in sequence, so the parts are
even. With one sender (one replica, the default) its part is everyone and nothing changes.

When the senders alive change, each sender's part changes at its next check-in and it starts over as a restarted
sender does (`FanOut.reshare`): the index rebuilt for its new part, the events newer than its users' cursors read
again. What a sender has already planned stays planned (the deliveries carry its claim, `bot.delivery.claims`). For
the moment two senders disagree on who is alive, a user may be in both parts (both plan them; the cursor's
compare-and-set lets one win, `storage.outbox.ClaimConflict`) or in neither (their alerts wait until the next
check-in, at most `ttl` after a sender on another host died, as its deliveries wait for their claims to lapse; a
sender process on the same host that is gone is dropped at once, as its claims are).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage import members
from storage.lease_tables import SenderShareRow

_TABLE: Table = SenderShareRow.__table__  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class UserShare:
    """The users one sender matches and plans: those whose id is `part` modulo `parts` (everyone when `parts` is 1)."""

    part: int = 0
    parts: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.part < self.parts:
            raise ValueError(f"share {self.part} of {self.parts}")

    @classmethod
    def among(cls, senders: list[str], me: str) -> UserShare:
        """This sender's share when `senders` (sorted, by every sender alike) are alive; everyone's when it is not
        among them (it always is after its own check-in)."""
        if me not in senders:
            return cls()
        return cls(senders.index(me), len(senders))

    @property
    def everyone(self) -> bool:
        return self.parts == 1

    def has(self, user_id: int) -> bool:
        return self.parts == 1 or user_id % self.parts == self.part

    def where(self, user_id: Any) -> Any:
        """A SQL condition on a user id column: the user is in this share (None for everyone)."""
        return None if self.parts == 1 else (user_id % self.parts) == self.part

    def __str__(self) -> str:
        return "every user" if self.parts == 1 else f"users {self.part} modulo {self.parts}"


async def check_in(sessionmaker: async_sessionmaker[AsyncSession], sender: str, ttl: float, *,
                   dead: Callable[[list[str]], list[str]] | None = None) -> UserShare:
    """Say `sender` runs for the next `ttl` seconds; returns its share of the users among the senders alive.
    `dead` names senders known dead already (`bot.delivery.claims.dead_local_owners`: a sender process on this host
    that is gone, such as the one a restarted sender child replaces): not counted, their rows deleted, so their
    users are not left waiting for the row to expire."""
    return UserShare.among(await members.check_in(sessionmaker, _TABLE, sender, ttl, dead=dead), sender)


async def check_out(sessionmaker: async_sessionmaker[AsyncSession], sender: str) -> None:
    """A stopping sender: the others take its users at their next check-in."""
    await members.check_out(sessionmaker, _TABLE, sender)
