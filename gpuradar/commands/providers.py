"""`gpuradar providers [--json] [--lang ru|en]`: every provider — enabled, needs a key, or switched off — its
health (healthy / degraded, since when, last success, last error), its VAT terms with where they are stated
("unconfirmed" where the provider's own pages say nothing we could cite), and the GPU names of its latest listing
the catalog does not know (their offers reach nobody until mapped).

`gpuradar providers check NAME [--json] [--lang ru|en]`: fetch NAME once (enabled or not), run its parser and print
what matched and what did not — rows and fields for a declarative HTML provider, records skipped with the reasons,
the offers — storing nothing. Exit status 0 when the answer gave believable offers, 1 when not, 2 for a name that
is not a provider.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gpuradar.commands.offers import add_lang, table

if TYPE_CHECKING:
    from core.providers import Vat
    from scrapers.check import CheckReport
    from storage.queries import HealthView

def _t(lang: str, key: str, **values: object) -> str:
    """A text of this command from the one catalog (texts/locales/<lang>/cli.ftl, keys `cli_providers_*`)."""
    from texts.i18n import t

    return t(lang, f"cli_providers_{key}", **values)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("providers", help=_t("en", "help"), description=_t("en", "help"))
    parser.add_argument("action", nargs="?", choices=["check"], help="check: fetch NAME once, store nothing")
    parser.add_argument("name", nargs="?", metavar="NAME", help="the provider to check")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_lang(parser)
    parser.set_defaults(handler=run)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


async def _load(url: str) -> tuple[list[HealthView], dict[str, dict[str, int]]]:
    from storage.db import make_engine, make_sessionmaker
    from storage.queries import provider_health, unknown_gpu_offers

    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            return await provider_health(session), await unknown_gpu_offers(session)
    finally:
        await engine.dispose()


def vat_terms(lang: str, vat: Vat | None) -> str:
    """A provider's VAT terms in a few words: "VAT 22 % included", "(unconfirmed)" unless its own pages say so."""
    if vat is None:
        return _t(lang, "vat_none")
    terms = _t(lang, "vat_included" if vat.included else "vat_added", rate=f"{vat.rate * 100:g}")
    return terms if vat.confirmed else _t(lang, "vat_unconfirmed", terms=terms)


def vat_json(vat: Vat | None) -> dict[str, Any] | None:
    if vat is None:
        return None
    return {"rate": vat.rate, "included": vat.included, "currencies": list(vat.currencies), "source": vat.source,
            "confirmed": vat.confirmed}


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return run_check(args)
    # Heavy imports (settings, SQLAlchemy, Alembic) here rather than at the top: see gpuradar.commands.db.run.
    from core.providers import provider_info, provider_title
    from gpuradar.settings import Settings
    from storage import migrate

    lang = args.lang = args.lang or "en"
    settings = Settings()
    # Reasons stored by an older version may still hold what a provider echoed: printed redacted all the same.
    secrets = settings.secret_values()
    try:
        migrate.upgrade(settings.database_url)
        views, unknown = asyncio.run(_load(settings.database_url))
        health = {h.provider: _redacted(h, secrets) for h in views}
    except Exception as exc:
        print(_t(lang, "db_error", error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    setup = settings.providers.setup()
    names = list(setup) + sorted(set(health) - set(setup))  # a provider since removed still shows

    if args.json:
        out = []
        for name in names:
            h = health.get(name)
            state = setup.get(name, "disabled")
            info = provider_info(name)
            out.append({
                "name": name, "title": provider_title(name), "home": info.home or None, "sells": info.sells or None,
                "enabled": state == "enabled",
                "setup": "needs_key" if state.startswith("needs:") else state,
                "needs": state[6:].split(",") if state.startswith("needs:") else [],
                "status": h.status if h else None,
                "reason": h.reason if h else None, "since": h.since.isoformat() if h else None,
                "last_success": h.last_success.isoformat() if h and h.last_success else None,
                "last_error": h.last_error if h else None,
                "last_error_at": h.last_error_at.isoformat() if h and h.last_error_at else None,
                "consecutive_failures": h.consecutive_failures if h else 0,
                "offers": h.last_offer_count if h else None,
                "vat": vat_json(provider_info(name).vat),
                "stock_known": provider_info(name).stock_known,
                "unknown_gpus": unknown.get(name, {}),
            })
        print(json.dumps({"providers": out}, ensure_ascii=False, indent=2))
        return 0

    rows = []
    for name in names:
        h = health.get(name)
        state = setup.get(name, "disabled")
        shown = (_t(lang, "needs", settings=", ".join(state[6:].split(","))) if state.startswith("needs:")
                 else _t(lang, state))
        if not provider_info(name).stock_known:
            shown = _t(lang, "price_only", setup=shown)
        label = f"{provider_title(name)} ({name})" if provider_title(name) != name else name
        vat = vat_terms(lang, provider_info(name).vat)
        if h is None:
            rows.append([label, shown, _t(lang, "never"), "—", "—", "—", vat])
            continue
        status = _t(lang, h.status) if h.status in ("ok", "degraded") else h.status
        error = f"{_when(h.last_error_at)}: {h.last_error}" if h.last_error else "—"
        rows.append([label, shown, status, _when(h.since), _when(h.last_success), error, vat])
    print(table(_t(lang, "headers").split("|"), rows))
    taxed = [(name, v) for name in names if (v := provider_info(name).vat) is not None]
    if taxed:
        print("\n" + _t(lang, "vat_title"))
        for name, v in taxed:
            print("  " + _t(lang, "vat_line", title=provider_title(name), terms=vat_terms(lang, v),
                            source=v.source or "—"))
    if any(unknown.get(name) for name in names):
        print("\n" + _t(lang, "unknown_title"))
        for name in names:
            for gpu, count in sorted(unknown.get(name, {}).items(), key=lambda item: (-item[1], item[0])):
                print("  " + _t(lang, "unknown_line", title=provider_title(name), count=count, name=gpu))
    return 0


def _redacted(h: Any, secrets: list[str]) -> Any:
    from core.redaction import redact

    def clean(text: str | None) -> str | None:
        return redact(text, *secrets) if text else text

    return h.model_copy(update={"reason": clean(h.reason), "last_error": clean(h.last_error)})


def run_check(args: argparse.Namespace) -> int:
    from gpuradar.settings import Settings

    lang = args.lang
    settings = Settings()
    known = [name for name, _ in settings.providers]
    if not args.name:
        print(_t(lang, "need_name"), file=sys.stderr)
        return 2
    if args.name not in known:
        print(_t(lang, "unknown", name=args.name, known=", ".join(known)), file=sys.stderr)
        return 2
    report = asyncio.run(_check(args.name, settings))
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(render_check(report, settings, args.lang))
    return 0 if report.status.value == "ok" else 1


async def _check(name: str, settings: Any) -> CheckReport:
    from scrapers.check import check
    from scrapers.http import make_client

    async with make_client(settings) as client:
        return await check(name, settings, client)


def render_check(report: CheckReport, settings: Any, lang: str) -> str:
    from core.providers import provider_title

    name = report.provider
    lines = [_t(lang, "check_title", title=provider_title(name), name=name,
                status=_t(lang, f"status_{report.status.value}"))]
    if report.needs:
        lines.append(_t(lang, "needs_line", settings=", ".join(report.needs)))
        return "\n".join(lines)
    if report.error:
        lines.append(_t(lang, "error", error=report.error))
    cfg = settings.providers.get(name)
    page = report.page
    if page is not None:
        lines.append(_t(lang, "rows", rows=str(getattr(cfg, "rows", "")), n=str(page["rows"]),
                        usable=str(page.get("usable_rows", 0))))
        lines.append(_t(lang, "fields"))
        for field, hits in page["fields"].items():
            note = "  " + _t(lang, "field_none") if not hits else ""
            lines.append(f"  {field:<14} {hits}/{page['rows']}{note}")
        if page.get("sample"):
            lines.append(_t(lang, "sample"))
            lines += ["  " + json.dumps(row, ensure_ascii=False) for row in page["sample"][:3]]
    lines.append(_t(lang, "records", records=str(report.records), skipped=str(report.skipped)))
    lines += ["  " + _t(lang, "problem", problem=p) for p in report.problems[:5]]
    lines.append(_t(lang, "offers", n=str(len(report.offers)), in_stock=str(sum(o.in_stock for o in report.offers))))
    if report.unknown_gpus:
        lines.append(_t(lang, "unknown_gpus", names=", ".join(report.unknown_gpus)))
    if report.offers:
        yes, no = _t(lang, "yes"), _t(lang, "no")
        rows = [[o.gpu_name + (f" [{o.gpu}]" if o.gpu else ""), str(o.gpu_count), o.location or "—",
                 o.billing.value, f"{o.price:g} {o.currency}/{o.period.value}", yes if o.in_stock else no]
                for o in report.offers[:30]]
        lines.append(table(_t(lang, "offer_headers").split("|"), rows))
    lines.append(_t(lang, "stored"))
    if report.status.value == "ok":
        lines.append(_t(lang, "is_enabled", interval=str(cfg.interval)) if cfg is not None and cfg.enabled
                     else _t(lang, "enable", upper=name.upper()))
    return "\n".join(lines)
