"""`gpuradar db upgrade` that SIGKILLs itself just before its N-th SQL statement
(tests/storage/test_migration_kills.py).

    python -m tests.support.kill_upgrade URL N     # killed before statement N (N >= 1)
    python -m tests.support.kill_upgrade URL 0     # not killed: prints how many statements a whole upgrade runs

The real command in a real process, killed by the real signal: the only addition is a listener counting the
statements every engine sends to the driver (BEGIN included), so the kill lands at a chosen point, not at a moment.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from gpuradar.cli import main


def run(url: str, kill_at: int) -> int:
    seen = [0]

    def count(*_: Any) -> None:
        seen[0] += 1
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    event.listen(Engine, "before_cursor_execute", count)
    status = main(["db", "--url", url, "upgrade"])
    if kill_at == 0:
        print(f"statements={seen[0]}")
    return status


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], int(sys.argv[2])))
