"""`gpuradar` command line. Each subcommand lives in `gpuradar/commands/<name>.py` and exposes
`register(subparsers)`; the function it sets as `handler` returns the exit status."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

import gpuradar.commands as commands_pkg


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuradar", description="GPU Radar: LLM workload -> GPUs -> offers")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands_pkg.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # `gpuradar offers | head`: the reader left. Point stdout at devnull so the interpreter's final flush is
        # quiet too, and exit as a pipeline expects (128 + SIGPIPE).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
