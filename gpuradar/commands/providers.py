"""`gpuradar providers [--json] [--lang ru|en]`: every provider — enabled, needs a key, or switched off — and its
health (healthy / degraded, since when, last success, last error).

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
    from scrapers.check import CheckReport
    from storage.queries import HealthView

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "help": "providers: enabled / needs key / off, healthy / degraded; `check NAME` tries one without storing",
        "headers": "Provider|Setup|Health|Since|Last success|Last error",
        "enabled": "enabled", "disabled": "off", "needs": "needs key: {settings}",
        "ok": "healthy", "degraded": "degraded", "never": "not polled yet",
        "db_error": "Cannot read the offer store: {error}",
        "unknown": "Unknown provider “{name}”. Known providers: {known}.",
        "need_name": "Which provider? `gpuradar providers check NAME`, e.g. `gpuradar providers check immers`.",
        "check_title": "{title} ({name}): {status}",
        "status_ok": "answer looks right", "status_suspect": "answer not believable", "status_failed": "no answer",
        "error": "Reason: {error}",
        "needs_line": "Set first: {settings}",
        "rows": "Rows matched by `{rows}`: {n} ({usable} with a GPU and a price)",
        "fields": "Fields (rows where the locator found a value):",
        "field": "  {field:<14} {hits}/{rows}{note}",
        "field_none": "  ← matched nothing",
        "sample": "First rows as read:",
        "records": "Records read: {records}; skipped as invalid: {skipped}",
        "problem": "  skipped: {problem}",
        "offers": "Offers: {n} ({in_stock} in stock)",
        "unknown_gpus": "GPU names not in the catalog (kept as spelled): {names}",
        "offer_headers": "GPU|×|Location|Billing|Price|In stock",
        "yes": "yes", "no": "no",
        "stored": "Nothing was stored.",
        "enable": "Looks right? Enable it: PROVIDERS__{upper}__ENABLED=true",
        "is_enabled": "It is enabled: the service polls it every {interval} s.",
    },
    "ru": {
        "help": "провайдеры: включён / нужен ключ / выключен, в порядке / сбои; `check ИМЯ` — проба без сохранения",
        "headers": "Провайдер|Настройка|Состояние|С|Последний успех|Последняя ошибка",
        "enabled": "включён", "disabled": "выключен", "needs": "нужен ключ: {settings}",
        "ok": "в порядке", "degraded": "сбои", "never": "ещё не опрашивался",
        "db_error": "Не удалось прочитать базу предложений: {error}",
        "unknown": "Неизвестный провайдер «{name}». Известные: {known}.",
        "need_name": "Какой провайдер? `gpuradar providers check ИМЯ`, например `gpuradar providers check immers`.",
        "check_title": "{title} ({name}): {status}",
        "status_ok": "ответ выглядит верным", "status_suspect": "ответу нельзя верить", "status_failed": "нет ответа",
        "error": "Причина: {error}",
        "needs_line": "Сначала задайте: {settings}",
        "rows": "Строк по `{rows}`: {n} (с GPU и ценой: {usable})",
        "fields": "Поля (в скольких строках локатор нашёл значение):",
        "field": "  {field:<14} {hits}/{rows}{note}",
        "field_none": "  ← ничего не нашёл",
        "sample": "Первые строки как прочитаны:",
        "records": "Прочитано записей: {records}; пропущено как неверные: {skipped}",
        "problem": "  пропущено: {problem}",
        "offers": "Предложений: {n} (в наличии: {in_stock})",
        "unknown_gpus": "Названия GPU не из каталога (оставлены как есть): {names}",
        "offer_headers": "GPU|×|Локация|Оплата|Цена|В наличии",
        "yes": "да", "no": "нет",
        "stored": "Ничего не сохранено.",
        "enable": "Всё верно? Включите: PROVIDERS__{upper}__ENABLED=true",
        "is_enabled": "Провайдер включён: сервис опрашивает его каждые {interval} с.",
    },
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("providers", help=TEXTS["en"]["help"], description=TEXTS["en"]["help"])
    parser.add_argument("action", nargs="?", choices=["check"], help="check: fetch NAME once, store nothing")
    parser.add_argument("name", nargs="?", metavar="NAME", help="the provider to check")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_lang(parser)
    parser.set_defaults(handler=run)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


async def _load(url: str) -> list[HealthView]:
    from storage.db import make_engine, make_sessionmaker
    from storage.queries import provider_health

    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            return await provider_health(session)
    finally:
        await engine.dispose()


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return run_check(args)
    # Heavy imports (settings, SQLAlchemy, Alembic) here rather than at the top: see gpuradar.commands.db.run.
    from core.providers import provider_title
    from gpuradar.settings import Settings
    from storage import migrate

    t = TEXTS[args.lang]
    settings = Settings()
    try:
        migrate.upgrade(settings.database_url)
        health = {h.provider: h for h in asyncio.run(_load(settings.database_url))}
    except Exception as exc:
        print(t["db_error"].format(error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    setup = settings.providers.setup()
    names = list(setup) + sorted(set(health) - set(setup))  # a provider since removed still shows

    if args.json:
        out = []
        for name in names:
            h = health.get(name)
            state = setup.get(name, "disabled")
            out.append({
                "name": name, "title": provider_title(name), "enabled": state == "enabled",
                "setup": "needs_key" if state.startswith("needs:") else state,
                "needs": state[6:].split(",") if state.startswith("needs:") else [],
                "status": h.status if h else None,
                "reason": h.reason if h else None, "since": h.since.isoformat() if h else None,
                "last_success": h.last_success.isoformat() if h and h.last_success else None,
                "last_error": h.last_error if h else None,
                "last_error_at": h.last_error_at.isoformat() if h and h.last_error_at else None,
                "consecutive_failures": h.consecutive_failures if h else 0,
                "offers": h.last_offer_count if h else None,
            })
        print(json.dumps({"providers": out}, ensure_ascii=False, indent=2))
        return 0

    rows = []
    for name in names:
        h = health.get(name)
        state = setup.get(name, "disabled")
        shown = (t["needs"].format(settings=", ".join(state[6:].split(","))) if state.startswith("needs:")
                 else t.get(state, state))
        label = f"{provider_title(name)} ({name})" if provider_title(name) != name else name
        if h is None:
            rows.append([label, shown, t["never"], "—", "—", "—"])
            continue
        status = t.get(h.status, h.status)
        error = f"{_when(h.last_error_at)}: {h.last_error}" if h.last_error else "—"
        rows.append([label, shown, status, _when(h.since), _when(h.last_success), error])
    print(table(t["headers"].split("|"), rows))
    return 0


def run_check(args: argparse.Namespace) -> int:
    from gpuradar.settings import Settings

    t = TEXTS[args.lang]
    settings = Settings()
    known = [name for name, _ in settings.providers]
    if not args.name:
        print(t["need_name"], file=sys.stderr)
        return 2
    if args.name not in known:
        print(t["unknown"].format(name=args.name, known=", ".join(known)), file=sys.stderr)
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

    t = TEXTS[lang]
    name = report.provider
    lines = [t["check_title"].format(title=provider_title(name), name=name,
                                     status=t[f"status_{report.status.value}"])]
    if report.needs:
        lines.append(t["needs_line"].format(settings=", ".join(report.needs)))
        return "\n".join(lines)
    if report.error:
        lines.append(t["error"].format(error=report.error))
    page = report.page
    if page is not None:
        cfg = settings.providers.get(name)
        lines.append(t["rows"].format(rows=getattr(cfg, "rows", ""), n=page["rows"],
                                      usable=page.get("usable_rows", 0)))
        lines.append(t["fields"])
        for field, hits in page["fields"].items():
            note = t["field_none"] if not hits else ""
            lines.append(t["field"].format(field=field, hits=hits, rows=page["rows"], note=note))
        if page.get("sample"):
            lines.append(t["sample"])
            lines += ["  " + json.dumps(row, ensure_ascii=False) for row in page["sample"][:3]]
    lines.append(t["records"].format(records=report.records, skipped=report.skipped))
    lines += [t["problem"].format(problem=p) for p in report.problems[:5]]
    lines.append(t["offers"].format(n=len(report.offers), in_stock=sum(o.in_stock for o in report.offers)))
    if report.unknown_gpus:
        lines.append(t["unknown_gpus"].format(names=", ".join(report.unknown_gpus)))
    if report.offers:
        rows = [[o.gpu_name + (f" [{o.gpu}]" if o.gpu else ""), str(o.gpu_count), o.location or "—",
                 o.billing.value, f"{o.price:g} {o.currency}/{o.period.value}", t["yes"] if o.in_stock else t["no"]]
                for o in report.offers[:30]]
        lines.append(table(t["offer_headers"].split("|"), rows))
    lines.append(t["stored"])
    cfg = settings.providers.get(name)
    if report.status.value == "ok":
        lines.append(t["is_enabled"].format(interval=cfg.interval) if cfg is not None and cfg.enabled
                     else t["enable"].format(upper=name.upper()))
    return "\n".join(lines)
