"""`/subscribe <text>` -> what to watch and with which filters.

Filters come out of the text first (a price cap in roubles or dollars, providers, GPU count, billing, region),
then the rest is either a list of GPU names (`B200`, `H100, A100 80GB`) or a workload (`13B LoRA`) for core's
parser. Examples: `13B LoRA до 300 ₽/ч`, `70B QLoRA under $2/h on runpod`, `H100 x8 monthly region msk`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.gpus import resolve_gpus
from core.limits import gpu_count_ok, price_ok
from core.parser import COUNT_WORD_RX, COUNT_WORDS
from core.providers import ProviderCatalog, catalog

_NUMBER = r"(\d+(?:[.,]\d+)?)"
_RUB = r"(?:₽|руб\w*|р\b\.?|rub\b|rur\b)"
_USD = r"(?:\$|usd\b|долл\w*|dollars?\b)"
# What follows the amount says what it is for: per hour ("/ч", "/h", "в час", "per hour") and, only when the user
# says so, per GPU ("/GPU-ч", "per GPU-hour", "за карту", "per card", "/gpu/h"). Any sequence of those words.
_GPU_WORD = r"(?:gpu|гпу|карт[уаы]|видеокарт[уаы]|cards?|devices?)"
_HOUR_WORD = r"(?:ч(?:ас\w*)?|h(?:rs?|ours?)?|hourly)\b"
_UNIT_JOIN = r"(?:/|-|\bper\b|\bв\b|\bза\b|\bна\b|\ban?\b|\beach\b|\bкажд\w*)"
_UNIT = rf"(?:{_GPU_WORD}(?:[- ]?{_HOUR_WORD})?|{_HOUR_WORD})"
_PER_UNIT = rf"(?P<unit>(?:\s*{_UNIT_JOIN}\s*{_UNIT}\.?)*)"
PRICE_RE = re.compile(
    r"(?:до|не\s+дороже|дешевле(?:\s*,?\s*чем)?|ниже|меньше(?:\s*,?\s*чем)?|не\s+выше|не\s+больше|под|under|below|"
    r"(?:for\s+)?(?:less|lower|cheaper)\s+than|up\s+to|max|at\s+most|<=?|≤)\s*"
    rf"(?P<pre>{_USD}|{_RUB})?\s*{_NUMBER}\s*(?P<post>{_USD}|{_RUB})?{_PER_UNIT}",
    re.IGNORECASE,
)
_SAYS_PER_GPU = re.compile(_GPU_WORD, re.IGNORECASE)
COUNT_RE = re.compile(r"(?<![\w.])[x×]\s*(\d{1,9})(?!\w)", re.IGNORECASE)
BILLING_RE = re.compile(r"\b(hourly|почасов\w*|monthly|помесячн\w*|spot|спот\w*)\b", re.IGNORECASE)
REGION_RE = re.compile(r"\b(?:region|регион)\s+([\w-]{2,40})", re.IGNORECASE)
_SPLIT_GPUS = re.compile(r"\s*(?:,|;|/|\bor\b|\band\b|\bили\b|\bи\b)\s*", re.IGNORECASE)
# A subscription asked as a request ("notify me when an H100 is under $2/h", "сообщи, когда H100 будет дешевле 200 ₽"):
# the asking is no part of what to watch (a subscription is about offers in stock anyway). Only a text that asks
# loses those words: elsewhere "a" may be a name's ("Command A").
_ASKS = (r"notify|tell|alert|ping|let|know|when|once|as\s+soon\s+as|сообщи(?:те)?|напиши(?:те)?|уведоми(?:те)?|"
         r"скажи(?:те)?|дай(?:те)?\s+знать|когда|как\s+только")
_REQUEST = re.compile(rf"(?<!\w)(?:{_ASKS})(?!\w)", re.IGNORECASE)
_ASKING = re.compile(
    rf"(?<!\w)(?:{_ASKS}|please|pls|me|if|an?|the|is|are|will|be|becomes?|gets?|goes|appears?|available|"
    r"in\s+stock|пожалуйста|мне|меня|если|будет|будут|станет|станут|появится|появятся|в\s+наличии|в\s+продаже)(?!\w)",
    re.IGNORECASE)
# A count before a list of cards: "2 H100", "two H100s", "две A100" (COUNT_RE reads "H100 x2")
_LEADING_COUNT = re.compile(rf"^(\d{{1,9}}|{COUNT_WORD_RX})\s*[x×*]?\s+(.+)$", re.IGNORECASE)


@dataclass
class SubscribeRequest:
    target: str  # the text left once filters were taken out: GPU names or a workload
    gpu_ids: list[str] | None = None  # set when the target is a list of GPUs
    max_price: float | None = None
    price_currency: str | None = None  # None: the price had no currency sign (the user's currency applies)
    # What the cap bounds (core.matching.PRICE_BASES): "total" = the whole configuration per hour, what a price "per
    # hour" means; "gpu" = per GPU-hour, only when the text says so. None with no cap.
    price_basis: str | None = None
    providers: list[str] | None = None
    gpu_count: int | None = None
    billing: str | None = None
    region: str | None = None
    problem: str | None = None  # "price" | "count": a filter outside core.limits (the reply says which bounds)

    @property
    def price_per_gpu(self) -> bool:
        """The cap named its unit as per GPU ("per GPU-hour", "за GPU-час", "/h/GPU")."""
        return self.price_basis == "gpu"


@lru_cache(maxsize=4)
def provider_spellings(providers: ProviderCatalog) -> tuple[dict[str, str], re.Pattern[str]]:
    """Every spelling in the installed provider catalog -> provider id, and the pattern finding a list of them
    ("on runpod or vast.ai"); built once per catalog."""
    spellings = providers.aliases()
    names = "|".join(sorted((re.escape(a) for a in spellings), key=len, reverse=True))
    pattern = re.compile(
        rf"(?:\b(?:on|at|via|from|на|у|в|providers?|провайдер\w*)\s+)?"
        rf"(?P<list>(?:{names})(?:\s*(?:,|\bor\b|\band\b|\bили\b|\bи\b)\s*(?:{names}))*)(?![\w.])",
        re.IGNORECASE,
    )
    return spellings, pattern


def _billing(word: str) -> str:
    w = word.lower()
    if w.startswith(("hour", "почас")):
        return "hourly"
    if w.startswith(("month", "помес")):
        return "monthly"
    return "spot"


def parse_subscribe(text: str) -> SubscribeRequest:
    """Split the filters from the target. Never raises; the target may be empty."""
    rest = text
    req = SubscribeRequest(target="")

    m = PRICE_RE.search(rest)
    if m:
        sign = (m.group("pre") or m.group("post") or "").lower()
        price = float(m.group(2).replace(",", "."))
        if price_ok(price):
            req.max_price = price
            req.price_basis = "gpu" if _SAYS_PER_GPU.search(m.group("unit") or "") else "total"
        else:  # "under $0/h", "до 1e400 ₽": refused here with a clear message, not by the database later
            req.problem = "price"
        if sign:
            req.price_currency = "USD" if re.fullmatch(_USD, sign, re.IGNORECASE) else "RUB"
        rest = rest[:m.start()] + " " + rest[m.end():]

    providers: list[str] = []
    spellings, providers_re = provider_spellings(catalog())
    for m in list(providers_re.finditer(rest))[::-1]:
        names = re.split(r"\s*(?:,|\bor\b|\band\b|\bили\b|\bи\b)\s*", m.group("list"), flags=re.IGNORECASE)
        providers[:0] = [spellings[n.lower()] for n in names if n.lower() in spellings]
        rest = rest[:m.start()] + " " + rest[m.end():]
    if providers:
        req.providers = sorted(set(providers))

    m = COUNT_RE.search(rest)
    if m:
        count = int(m.group(1))
        if gpu_count_ok(count):
            req.gpu_count = count
        else:
            req.problem = req.problem or "count"
        rest = rest[:m.start()] + " " + rest[m.end():]

    m = BILLING_RE.search(rest)
    if m:
        req.billing = _billing(m.group(1))
        rest = rest[:m.start()] + " " + rest[m.end():]

    m = REGION_RE.search(rest)
    if m:
        req.region = m.group(1)
        rest = rest[:m.start()] + " " + rest[m.end():]

    if _REQUEST.search(rest):
        rest = _ASKING.sub(" ", rest)
    req.target = " ".join(rest.replace(",", " , ").split()).strip(" ,;").replace(" , ", ", ")
    req.gpu_ids = gpu_list(req.target)
    # the count words are spelt with е (core.parser reads ё as е); a card's name has no ё
    counted = _LEADING_COUNT.match(req.target.replace("ё", "е").replace("Ё", "Е")) \
        if req.gpu_ids is None and req.gpu_count is None else None
    if counted is not None and (ids := gpu_list(counted.group(2))) is not None:
        word = counted.group(1).lower()
        count = int(word) if word.isdigit() else COUNT_WORDS[word]
        if gpu_count_ok(count):
            req.gpu_count = count
        else:
            req.problem = req.problem or "count"
        req.target, req.gpu_ids = counted.group(2), ids
    return req


def gpu_list(text: str) -> list[str] | None:
    """Catalog ids when every comma/or-separated part of `text` names a known GPU, else None. A family name
    covers its variants ('H100' is SXM, PCIe and NVL; 'A100' 40 and 80 GB) unless one is named."""
    if not text:
        return None
    parts = [p for p in _SPLIT_GPUS.split(text) if p.strip()]
    ids: list[str] = []
    for part in parts:
        gpus = resolve_gpus(part.strip())
        if not gpus:
            return None
        ids.extend(g.id for g in gpus if g.id not in ids)
    return ids or None
