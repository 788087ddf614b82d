"""A provider described by data, for those without a machine-readable API (immers.cloud's public pages are HTML).

The operator writes the definition in the settings (`DeclarativeProviderSettings`): the page path, its format,
where the rows are and where each offer field sits inside a row. Nothing here knows any provider's layout; the
definition ships DISABLED because no live immers.cloud page has been captured yet (see docs/reference/providers/
immers_cloud.md) — an operator enables it after checking the selectors against the real page.

Field locators:
- JSON: dotted paths (`data.flavors`, `price.hour`, `gpus.0.name`); `rows` points at the list of offers.
- HTML: CSS selectors (selectolax); `rows` selects one element per offer, each field selects inside it; a suffix
  `@attr` reads an attribute instead of the text (`a.order@href`).
Fields: `gpu` (required), `price` (required), `gpu_count`, `gpu_memory_gb`, `vcpu`, `ram_gb`, `disk_gb`,
`location`, `sku`, `available`, `in_stock`, `url`. Without `in_stock` and `available` a listed row counts as in
stock (the page lists what it sells). Numbers are read from text like "342,50 ₽/час" or "1 290".

Example (environment variables, nested delimiter `__`; selectors are illustrative, not immers.cloud's layout):

    PROVIDERS__IMMERS__ENABLED=true
    PROVIDERS__IMMERS__PATH=/prices/
    PROVIDERS__IMMERS__FORMAT=html
    PROVIDERS__IMMERS__ROWS=table.prices tbody tr
    PROVIDERS__IMMERS__FIELDS='{"sku": "td.flavor", "gpu": "td.gpu", "gpu_count": "td.count", "price": "td.price"}'
    PROVIDERS__IMMERS__CURRENCY=RUB
    PROVIDERS__IMMERS__PERIOD=hour
"""

from __future__ import annotations

import math
import re
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from core.offers import Billing, Period
from core.providers import ProviderInfo
from scrapers.errors import NotJsonError, PayloadValidationError
from scrapers.http import PoliteClient
from scrapers.provider import Provider
from scrapers.providers._common import Collector, Offers, gpu_id, join_url
from scrapers.settings import DeclarativeProviderSettings, ProviderSettings

_CHARSET = re.compile(r"charset=([\w-]+)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d[\d\s\u00a0\u202f]*(?:[.,]\d+)?")
_TRUE = {"true", "yes", "1", "да", "есть", "в наличии", "available", "in stock"}
_FALSE = {"false", "no", "0", "нет", "нет в наличии", "unavailable", "sold out", "out of stock"}
REQUIRED = ("gpu", "price")


def _settings(settings: ProviderSettings | None) -> DeclarativeProviderSettings:
    if not isinstance(settings, DeclarativeProviderSettings):
        raise PayloadValidationError("declarative provider: needs DeclarativeProviderSettings (rows, fields)")
    missing = [f for f in REQUIRED if f not in settings.fields]
    if not settings.rows or missing:
        raise PayloadValidationError(f"declarative provider: definition incomplete (rows / fields {missing})")
    return settings


async def fetch(client: PoliteClient, settings: ProviderSettings, name: str = "declarative") -> Any:
    cfg = _settings(settings)
    got = await client.request(name, cfg.method, join_url(cfg.base_url, cfg.path), timeout=cfg.timeout)
    if cfg.format == "json":
        return await got.json_off_loop()
    content_type = got.headers.get("content-type", "text/html")
    if "html" not in content_type.lower():
        raise NotJsonError(f"{name}: expected an HTML page, got {content_type}")
    charset = _CHARSET.search(content_type)
    return got.content.decode(charset.group(1) if charset else "utf-8", errors="replace")


def number(value: Any) -> float | None:
    """A number from JSON or from page text: '342,50 ₽/час' -> 342.5, '1 290' -> 1290."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    m = _NUMBER.search(str(value))
    if not m:
        return None
    raw = re.sub(r"[\s\u00a0\u202f]", "", m.group(0)).replace(",", ".")
    try:
        return float(raw)
    except ValueError:
        return None


def _count(value: Any, low: int) -> int | None:
    """A count read from a row: None when absent, else a whole number of at least `low` (ValueError otherwise)."""
    n = number(value)
    if n is None:
        return None
    if not math.isfinite(n) or n != int(n) or n < low:
        raise ValueError(f"count {value!r} is not a whole number of at least {low}")
    return int(n)


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    if isinstance(value, int | float):
        return value > 0
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    n = number(text)
    return n > 0 if n is not None else None


def json_path(data: Any, path: str) -> Any:
    """`a.b.0.c` into nested dicts/lists; None when any step is missing."""
    current = data
    for step in (s for s in path.split(".") if s):
        if isinstance(current, dict):
            current = current.get(step)
        elif isinstance(current, list) and step.lstrip("-").isdigit() and -len(current) <= int(step) < len(current):
            current = current[int(step)]
        else:
            return None
    return current


def _html_field(row: LexborNode, locator: str) -> str | None:
    selector, _, attr = locator.partition("@")
    node = row.css_first(selector) if selector.strip() else row
    if node is None:
        return None
    if attr:
        return node.attributes.get(attr)
    return node.text(separator=" ", strip=True)


def _rows(payload: Any, cfg: DeclarativeProviderSettings, name: str) -> list[dict[str, Any]]:
    if cfg.format == "json":
        rows = json_path(payload, cfg.rows)
        if not isinstance(rows, list):
            raise PayloadValidationError(f"{name}: '{cfg.rows}' is not a list in the document")
        return [{f: json_path(row, loc) for f, loc in cfg.fields.items()} for row in rows if isinstance(row, dict)]
    if not isinstance(payload, str):
        raise PayloadValidationError(f"{name}: expected HTML text")
    nodes = LexborHTMLParser(payload).css(cfg.rows)
    if not nodes:
        # A page that used to list offers and now matches nothing has changed layout or is a captcha: never
        # read that as "everything sold out".
        raise PayloadValidationError(f"{name}: no rows match '{cfg.rows}' (layout changed or a challenge page)")
    return [{f: _html_field(node, loc) for f, loc in cfg.fields.items()} for node in nodes]


def own_hosts(cfg: DeclarativeProviderSettings) -> frozenset[str]:
    """The provider's own hosts, from the operator's definition: its base URL's, its order page's, and the hosts
    its API may redirect to. A scraped link may point there and nowhere else."""
    hosts = {urlsplit(u).hostname or "" for u in (cfg.base_url, cfg.order_url)} | set(cfg.redirect_hosts)
    return frozenset(h.lower().removeprefix("www.") for h in hosts if h)


def safe_link(link: str, base_url: str, hosts: frozenset[str] | None = None) -> str | None:
    """An https URL on one of the provider's own `hosts` for a scraped link, or None: `javascript:`, `data:`, plain
    http (a page that links to http://127.0.0.1) and anyone else's host never reach an `<a href>`. Relative links
    resolve against the provider's origin; protocol-relative ones (`//host/p`) only count when `host` is its own.
    (Attribute escaping happens where the link is rendered; this makes sure only the provider's address gets there.)
    `hosts` defaults to the base URL's."""
    link = link.strip()
    if not link or any(c in link for c in "\"<>\x00\\") or any(c.isspace() or ord(c) < 32 for c in link):
        return None
    if link.startswith("//"):
        link = "https:" + link
    elif link.startswith("/"):
        link = join_url(base_url, link)
    parts = urlsplit(link)
    try:
        port = parts.port
    except ValueError:  # a port that is not a number
        return None
    host = (parts.hostname or "").lower()
    own = hosts if hosts is not None else frozenset({(urlsplit(base_url).hostname or "").lower().removeprefix("www.")})
    if parts.scheme.lower() != "https" or "@" in parts.netloc or port not in (None, 443) or not host:
        return None
    if not any(host == h or host.endswith("." + h) for h in own):
        return None
    return link


def parse(payload: Any, settings: ProviderSettings | None = None, name: str = "declarative") -> Offers:
    cfg = _settings(settings)
    period = Period(cfg.period)
    billing = Billing(cfg.billing)
    page_url = cfg.order_url or join_url(cfg.base_url, cfg.path)
    hosts = own_hosts(cfg)
    out = Collector(name)
    seen: set[str] = set()  # offer keys already read: a repeated row is skipped and counted, not "last one wins"
    for row in _rows(payload, cfg, name):
        spelling = str(row.get("gpu") or "").strip()
        price = number(row.get("price"))
        if not spelling or price is None:
            continue  # a header or spacer row
        out.records += 1
        memory = number(row.get("gpu_memory_gb"))
        available = number(row.get("available"))
        in_stock = _flag(row.get("in_stock")) if "in_stock" in cfg.fields else None
        if in_stock is None:
            in_stock = available > 0 if available is not None else True
        link = safe_link(str(row.get("url") or ""), cfg.base_url, hosts)
        try:
            gpus = _count(row.get("gpu_count"), low=1) or 1
            cores = _count(row.get("vcpu"), low=0)
            stock = _count(available, low=0)
        except ValueError as exc:  # "0 GPUs", "-2", "1.5", inf: a broken row, never read as one GPU
            out.skip(f"{spelling}: {exc}")
            continue
        sku = str(row.get("sku") or spelling).strip()
        offer = out.add(
            sku=sku, gpu=gpu_id(spelling, memory, name),
            gpu_name=spelling, gpu_count=gpus, gpu_memory_gb=memory,
            vcpu=cores, ram_gb=number(row.get("ram_gb")),
            disk_gb=number(row.get("disk_gb")), location=str(row.get("location") or "").strip(), billing=billing,
            price=price, currency=cfg.currency.upper(), period=period, in_stock=in_stock,
            available=stock, url=link or page_url,
        )
        if offer is not None:
            if offer.key in seen:
                out.offers.pop()
                out.skip(f"{sku}: listed twice")
            seen.add(offer.key)
    return out.result()


def inspect(payload: Any, settings: ProviderSettings | None, name: str = "declarative") -> dict[str, Any]:
    """What the definition finds on a page, for `gpuradar providers check`: how many rows match, how many rows
    each field's locator finds a value in, and a few rows as read. Never raises for a layout that does not match:
    the report says so."""
    cfg = _settings(settings)
    try:
        rows = _rows(payload, cfg, name)
    except PayloadValidationError as exc:
        return {"rows": 0, "fields": dict.fromkeys(cfg.fields, 0), "sample": [], "problem": str(exc)}
    hits = {f: sum(1 for row in rows if row.get(f) not in (None, "")) for f in cfg.fields}
    usable = sum(1 for row in rows if str(row.get("gpu") or "").strip() and number(row.get("price")) is not None)
    sample = [{f: (str(v)[:60] if v is not None else None) for f, v in row.items()} for row in rows[:5]]
    return {"rows": len(rows), "usable_rows": usable, "fields": hits, "sample": sample, "problem": None}


def declarative(info: ProviderInfo, settings: DeclarativeProviderSettings, *, currency: str, period: Period,
                order_url: str, rate_limit_per_minute: float | None = None) -> Provider[DeclarativeProviderSettings]:
    """A provider defined by data (one module per such provider calls this, e.g. `immers.py`): the fetch, parse and
    inspect above, told the provider's name."""
    return Provider(
        info=info, settings=settings, paths=(settings.path,), currency=currency, period=period, order_url=order_url,
        fetch=partial(fetch, name=info.name), parse=partial(parse, name=info.name),
        inspect=partial(inspect, name=info.name), rate_limit_per_minute=rate_limit_per_minute)
