"""Link tokens shared by the replicas through the database (bot.tokens.QueryTokens with a sessionmaker)."""

from __future__ import annotations

from bot.tokens import QueryTokens


async def test_tokens_written_together_are_resolved_by_another_replica(sm) -> None:
    """Hashed tokens made between two writes go in one statement, a token another replica stored already is kept as
    it was, and a replica that never saw a text resolves its token from the database."""
    texts = [f"70B QLoRA ctx {k}k, H100 or A100 80GB x8 under $2/h on runpod, vast or lambda" for k in range(1, 6)]
    first = QueryTokens(sm)
    tokens = [first.encode(t) for t in texts]
    assert all(t.startswith("h") for t in tokens)  # long enough to be hashed, not carried in the button
    await first.flush()
    second = QueryTokens(sm)
    again = [await second.stored(t) for t in texts[:2]]  # the same texts from another replica: an upsert
    assert again == tokens[:2]
    third = QueryTokens(sm)
    assert third.decode(tokens[4]) is None  # not known to this process without the database
    assert [await third.resolve(t) for t in tokens] == texts
    await first.close()
    await second.close()
