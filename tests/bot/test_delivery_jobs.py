"""The order messages wait in memory: each chat's in arrival order, oldest job first among the chats free now, and
never two to one chat closer than its interval."""

from __future__ import annotations

from bot.delivery.jobs import ChatLine, Job, round_robin


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def job(n: int, chat: int) -> Job:
    return Job(n, chat, chat, f"m{n}", None)


def drain(line: ChatLine, clock: Clock, step: float) -> list[tuple[float, int, int]]:
    """Take one job per `step` seconds (a sender's global pace) until nothing waits: (time, chat, job id)."""
    out = []
    while True:
        got, wait = line.take()
        if got is not None:
            out.append((clock.now, got.chat_id, got.id))
        elif wait is None:
            return out
        clock.now += step


def test_a_long_digest_goes_at_its_chats_pace_while_later_chats_fill_the_gaps() -> None:
    clock = Clock()
    line = ChatLine(clock, lambda chat: 0.0, interval=1.0)
    first = [job(i, 1) for i in range(5)] + [job(50, 2), job(51, 3)]  # a plan: one five-message digest, two short
    later = [job(100 + c, c) for c in range(4, 40)]  # the next plan: 36 chats with one message each
    jobs = [*first, *later]
    for j in [*round_robin(first), *round_robin(later)]:
        line.put(j)
    sent = drain(line, clock, step=0.125)  # exact in binary: the clock lands on the interval
    long = [t for t, chat, _ in sent if chat == 1]
    # Its messages are the oldest whenever its chat is free again: one per interval, not one per round of chats.
    assert [round(t, 1) for t in long] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert [i for _, chat, i in sent if chat == 1] == [0, 1, 2, 3, 4]  # in order within the chat
    assert sorted(i for *_, i in sent) == sorted(j.id for j in jobs)  # everyone once
    others = [i for _, chat, i in sent if chat != 1]
    assert others == sorted(others)  # the rest in the order they came, filling the long digest's gaps


def test_no_chat_takes_two_within_its_interval_and_its_wait_is_honoured() -> None:
    clock = Clock()
    line = ChatLine(clock, lambda chat: max(0.0, 2.5 - clock.now) if chat == 7 else 0.0, interval=1.0)
    for i in range(3):
        line.put(job(i, 7))  # a chat Telegram told to wait 2.5 s
    line.put(job(10, 8))
    sent = drain(line, clock, step=0.25)
    assert [(round(t, 2), c) for t, c, _ in sent] == [(0.0, 8), (2.5, 7), (3.5, 7), (4.5, 7)]
