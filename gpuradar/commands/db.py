"""`gpuradar db upgrade|downgrade|current`: the database schema, through Alembic."""

from __future__ import annotations

import argparse
import sys

from texts.i18n import LANGS, t


def _t(lang: str, key: str, **values: object) -> str:
    return t(lang, f"cli_db_{key}", **values)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("db", help=_t("en", "help"), description=_t("en", "help"))
    parser.add_argument("--lang", choices=LANGS, default="en", help="output language / язык вывода")
    parser.add_argument("--url", help="database URL (default: DATABASE_URL / settings)")
    actions = parser.add_subparsers(dest="db_action", metavar="ACTION", required=True)
    up = actions.add_parser("upgrade", help="upgrade to a revision (default: head)")
    up.add_argument("revision", nargs="?", default="head")
    down = actions.add_parser("downgrade", help="downgrade to a revision ('base' = empty)")
    down.add_argument("revision")
    actions.add_parser("current", help="show the current revision")
    parser.set_defaults(handler=run)


def _safe_url(url: str) -> str:
    """The URL without its password, for printing."""
    head, sep, tail = url.rpartition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, creds = head.partition("//")
    user = creds.split(":", 1)[0]
    return f"{scheme}//{user}:***@{tail}"


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: every `gpuradar` command registers every subcommand, and start-up time is
    # what a user waits for (SQLAlchemy and Alembic are most of it).
    from gpuradar.settings import Settings
    from storage import migrate

    lang = args.lang
    url = args.url or Settings().database_url
    try:
        if args.db_action == "upgrade":
            migrate.upgrade(url, args.revision)
            print(_t(lang, "upgraded", rev=", ".join(migrate.current(url)) or _t(lang, "empty"), url=_safe_url(url)))
        elif args.db_action == "downgrade":
            migrate.downgrade(url, args.revision)
            print(_t(lang, "downgraded", rev=", ".join(migrate.current(url)) or _t(lang, "empty"), url=_safe_url(url)))
        else:
            rev = ", ".join(migrate.current(url)) or _t(lang, "empty")
            print(_t(lang, "current", rev=rev, head=", ".join(migrate.heads())))
    except Exception as exc:  # any driver / Alembic error: one clear line, never a traceback
        print(_t(lang, "failed", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    return 0
