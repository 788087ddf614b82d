"""`/subscribe <text>` -> what to watch and with which filters.

Filters come out of the text first (a price cap in roubles or dollars, providers, GPU count, billing, region),
then the rest is either a list of GPU names (`B200`, `H100, A100 80GB`) or a workload (`13B LoRA`) for core's
parser. Examples: `13B LoRA до 300 ₽/ч`, `70B QLoRA under $2/h on runpod`, `H100 x8 monthly region msk`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from bot.names import cards_named
from core.gpus import GPUS, resolve_gpus
from core.limits import gpu_count_ok, price_ok
from core.offers import HOURS_PER_MONTH
from core.parser import COUNT_WORD_RX, COUNT_WORDS, ParseError, latin_cards, parse_workload
from core.places import AREA_PREFIX, COUNTRY_CODES, COUNTRY_NAMES
from core.providers import ProviderCatalog, catalog
from core.workload import WorkloadSpec

# An amount as people write it: "2.5", "2,5", and thousands grouped by spaces ("150 000", the Russian way, also with
# a no-break or narrow no-break space) or by commas before a point ("$1,500", "$1,500.50"). A comma with three
# digits after it is a thousands separator: no price is quoted to a thousandth ("0,350" keeps its leading zero
# and stays 0.35).
_GROUPED = r"[1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?![\d.,])|[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?(?![\d,])"
_NUMBER = rf"(?:{_GROUPED}|\d+(?:[.,]\d+)?)"
_COMMA_GROUPS = re.compile(r"[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")
# "150 тыс руб", "400к руб": thousands (monthly prices are quoted so)
_THOUSANDS = r"(?P<mult>\s?(?:k|к|тыс\w*\.?)(?![a-zа-я]))?"
_RUB = r"(?:₽|руб\w*|р\b\.?|rub\b|rur\b)"
_USD = r"(?:\$|usd\b|долл\w*|dollars?\b|бакс\w*|bucks?\b)"
_CENTS = r"(?:cents?\b|¢|c(?=/|\b))"
# What follows the amount says what it is for: per hour ("/ч", "/h", "в час", "per hour") and, only when the user
# says so, per GPU ("/GPU-ч", "per GPU-hour", "за карту", "per card", "/gpu/h"). Any sequence of those words.
_GPU_WORD = r"(?:gpu|гпу|карт[уаы]|видеокарт[уаы]|cards?|devices?|штук[уи]?)"
_HOUR_WORD = r"(?:ч(?:ас\w*)?|h(?:rs?|ours?)?|hourly)\b"
_MONTH_WORD = r"(?:мес(?:яц\w*)?|mo(?:nth)?s?|monthly)\b"
# the whole configuration, said so: "total", "за всю конфигурацию", "whole node", "в сумме"
_TOTAL_WORD = (r"(?:(?:in\s+)?total|(?:for\s+)?(?:the\s+)?whole\s+(?:node|config\w*|server|machine)|"
               r"(?:за\s+)?вс[юеё]\s+конфигурац\w*|за\s+вс[её]|в\s+сумме|суммарно)\b")
_UNIT_JOIN = r"(?:/|-|\bper\b|\bв\b|\bза\b|\bна\b|\ban?\b|\beach\b|\bкажд\w*)"
_UNIT = rf"(?:{_GPU_WORD}(?:[- ]?{_HOUR_WORD})?|{_HOUR_WORD}|{_MONTH_WORD})"
_PER_UNIT = rf"(?P<unit>(?:\s*(?:{_UNIT_JOIN}\s*{_UNIT}\.?|,?\s*{_TOTAL_WORD}))*)"
_AMOUNT = (rf"(?P<pre>{_USD}|{_RUB})?\s*(?P<num>{_NUMBER}){_THOUSANDS}\s*(?P<post>{_USD}|{_RUB}|{_CENTS})?"
           rf"{_PER_UNIT}")
PRICE_RE = re.compile(
    # "…, в сумме не больше 300 р/ч": the whole configuration said before the cap (after a comma: "2000 tok/s in
    # total" is a speed)
    rf"(?:(?:(?<=,)|(?<=^))\s*{_TOTAL_WORD},?\s*)?"
    r"(?:до|не\s+дороже|дешевл\w*(?:\s*,?\s*чем)?|ниже|меньше(?:\s*,?\s*чем)?|не\s+выше|не\s+больше|под|under|"
    r"below|(?:for\s+)?(?:less|lower|cheaper)\s+than|up\s+to|max(?:imum)?|at\s+most|budget(?:\s+of)?|бюджет\w*|"
    rf"<=?|≤)\s*{_AMOUNT}",
    re.IGNORECASE,
)
# A price with its currency and its unit needs no "under": "2,5 $ per hour for a H100" is a cap too.
BARE_PRICE_RE = re.compile(
    rf"(?<![\w.,])(?:(?P<pre>{_USD})\s*(?P<num>{_NUMBER})|(?P<num2>{_NUMBER})\s*(?P<post>{_USD}|{_RUB}|{_CENTS}))"
    rf"(?P<unit>(?:\s*{_UNIT_JOIN}\s*{_UNIT}\.?)+)",
    re.IGNORECASE,
)
# "H100 за 150к в месяц", "A100 за $2": «за» ("for") leads a cap only when the amount says what it is, a currency or a
# unit; "за 3 эпохи" and "за 2 часа" (a job's epochs, its time) are no prices
_FOR_PRICE_RE = re.compile(rf"(?<!\w)за\s*{_AMOUNT}", re.IGNORECASE)


def _for_price(text: str) -> re.Match[str] | None:
    return next((m for m in _FOR_PRICE_RE.finditer(text) if m.group("pre") or m.group("post") or m.group("unit")),
                None)


_SAYS_PER_GPU = re.compile(_GPU_WORD, re.IGNORECASE)
_SAYS_PER_HOUR = re.compile(_HOUR_WORD, re.IGNORECASE)
_SAYS_PER_MONTH = re.compile(_MONTH_WORD, re.IGNORECASE)
# spot under the names clouds give it: "preemptible" (Google, Yandex: «прерываемые»), "interruptible" (RunPod, Vast)
_SPOT_WORD = r"(?:spot|спот\w*|interruptible|pre-?emptible|прерываем\w*|вытесняем\w*)"
# "not spot", "не спот", "non-preemptible", "непрерываемые", "on-demand": every offer but spot ones, i.e. the
# hourly on-demand price
ON_DEMAND_RE = re.compile(rf"(?:\b(?:(?:not|no|non|без|не)[\s-]+|не(?=прерыв|вытесн)){_SPOT_WORD}|"
                          r"\bon[\s-]?demand\b|по\s+требованию)", re.IGNORECASE)
# "cheaper than now", "дешевле чем сейчас": what any subscription watches for (an offer appearing or its price
# falling), so no cap
_THAN_NOW = re.compile(r"(?:cheaper|lower)\s+than\s+(?:now|(?:the\s+)?current(?:\s+price)?)|"
                       r"дешевле,?\s+чем\s+сейчас|дешевле\s+текущей(?:\s+цены)?", re.IGNORECASE)
COUNT_RE = re.compile(r"(?<![\w.])[x×]\s*(\d{1,9})(?!\w)", re.IGNORECASE)
BILLING_RE = re.compile(rf"\b(hourly|почасов\w*|monthly|помесячн\w*|{_SPOT_WORD})\b", re.IGNORECASE)
REGION_RE = re.compile(r"\b(?:region|регион)\s+([\w@,-]{2,40})", re.IGNORECASE)
_AREA_LEAD = r"(?:(?:only\s+)?(?:in|within|inside)|только(?:\s+во?)?|во?|из|по)\s+"
_AREA_SEP = r"\s*(?:,|\bor\b|\band\b|\bили\b|\bи\b)\s*(?:the\s+)?"


@lru_cache(maxsize=1)
def _areas() -> re.Pattern[str]:
    """Countries and areas a request names (core.places): a name in either language anywhere, a code ("US",
    "EU", "РФ") in capitals or after "in" / "only", a list of them; "only" / "только" around them."""
    names = "|".join(f"(?:{p})" for p in COUNTRY_NAMES.values())
    codes = "|".join(sorted(COUNTRY_CODES, key=len, reverse=True))
    one = rf"(?:(?:{names})|(?-i:{codes}))(?!\w)"
    led = rf"(?:{names}|{codes})(?!\w)"  # after "in" / "only" a code may be lower-case
    return re.compile(rf"(?<!\w)(?:{_AREA_LEAD}(?P<led>{led}(?:{_AREA_SEP}{led})*)|"
                      rf"(?P<bare>{one}(?:{_AREA_SEP}{one})*))(?:\s+only|\s+только)?(?!\w)", re.IGNORECASE)


def _area_codes(said: str | None) -> list[str]:
    """The ISO codes (and areas) of a list of countries as the request wrote it, sorted; [] if any is unknown."""
    if not said:
        return []
    out: set[str] = set()
    for item in re.split(_AREA_SEP, said, flags=re.IGNORECASE):
        item = item.strip()
        if not item:
            continue
        code = COUNTRY_CODES.get(item.upper()) or next(
            (c for c, p in COUNTRY_NAMES.items() if re.fullmatch(p, item, re.IGNORECASE)), None)
        if code is None:
            return []
        out.add(code)
    return sorted(out)
_SPLIT_GPUS = re.compile(r"\s*(?:,|;|/|\bor\b|\band\b|\bили\b|\bи\b)\s*", re.IGNORECASE)
# A subscription asked as a request ("notify me when an H100 is under $2/h", "сообщи, когда H100 будет дешевле 200 ₽"):
# the asking is no part of what to watch (a subscription is about offers in stock anyway). Only a text that asks
# loses those words: elsewhere "a" may be a name's ("Command A").
_ASKS = (r"notify|tell|alert|ping|let|know|when|once|as\s+soon\s+as|сообщи(?:те)?|(?:на)?пиши(?:те)?|уведоми(?:те)?|"
         r"скажи(?:те)?|дай(?:те)?\s+знать|когда|как\s+только")
_REQUEST = re.compile(rf"(?<!\w)(?:{_ASKS})(?!\w)", re.IGNORECASE)
_ASKING = re.compile(
    rf"(?<!\w)(?:{_ASKS}|please|pls|me|us|if|an?|the|is|are|will|be|becomes?|gets?|goes|appears?|available|"
    r"in\s+stock|пожалуйста|мне|меня|если|будет|будут|станет|станут|появится|появятся|в\s+наличии|в\s+продаже)(?!\w)",
    re.IGNORECASE)
# Words of a request that are never part of a card's or a model's name (asked or not): "any", "only", "cheapest",
# "for a", "любой провайдер", "где-нибудь", "сразу пиши"
_TARGET_FILLER = re.compile(
    r"(?<!\w)(?:any(?:where|\s+provider)?|only|cheap(?:est)?|rental|billing|has|drops?|i\s+need|need|want|"
    r"(?:for|за|для)(?:\s+(?:an?|the)(?!\w))?|любо\w*(?:\s+провайдер\w*)?|люб(?:ая|ые|ых|ую)|дешев\w*|"
    r"дешёв\w*|хочу|нужн[аоы]|нужен|сразу|пиши(?:те)?|уведомля\w*|где[\s-]?(?:нибудь|угодно)|подешевеет|о|об|"
    r"budget|бюджет\w*)(?!\w)", re.IGNORECASE)
# A memory instead of a card: "any GPU with 80GB", "любая видеокарта с 80 ГБ", "4 карты по 24гб", "48GB card"
_MEMORY_CLASS = re.compile(
    rf"^(?:(?P<n>\d{{1,4}}|{COUNT_WORD_RX})\s+)?(?:(?:gpus?|cards?|карт\w*|видеокарт\w*|гпу)\s+)?"
    r"(?:(?:with|с|по|of)\s+)?(?P<gb>\d{1,3})\s*(?:gb|гб|гиг\w*|g)(?:\s+(?:of\s+)?(?:vram|memory|памяти|"
    r"видеопамяти))?(?:\s+(?:gpus?|cards?|карт\w*|видеокарт\w*))?$", re.IGNORECASE)
# A count before a list of cards: "2 H100", "two H100s", "две A100" (COUNT_RE reads "H100 x2")
_LEADING_COUNT = re.compile(rf"^(\d{{1,9}}|{COUNT_WORD_RX})\s*(?:[x×*х]\s*|\s+)(.+)$", re.IGNORECASE)


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
    price_monthly: bool = False  # the cap was said per month ("до 150 тыс руб в месяц"): held as its hourly equal
    text: str = ""  # the request as typed, filters and all

    @property
    def has_filters(self) -> bool:
        """Whether anything but the target was said: a count, a price cap, providers, billing, a region (or one of
        them out of bounds)."""
        return any(f is not None for f in (self.gpu_count, self.max_price, self.providers, self.billing, self.region,
                                           self.problem))

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
    req = SubscribeRequest(target="", text=text)

    rest = _THAN_NOW.sub(" ", rest)
    m = PRICE_RE.search(rest) or BARE_PRICE_RE.search(rest) or _for_price(rest)
    unit = ""
    if m:
        unit = _take_price(req, m)
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

    m = ON_DEMAND_RE.search(rest) or BILLING_RE.search(rest)
    if m:
        req.billing = "hourly" if m.re is ON_DEMAND_RE else _billing(m.group(1))
        rest = rest[:m.start()] + " " + rest[m.end():]
    if req.billing is None and req.max_price is not None and req.price_monthly:
        req.billing = "monthly"  # "до 150 тыс руб в месяц": a monthly offer's price
    elif req.billing == "monthly" and req.max_price is not None and not req.price_monthly \
            and not _SAYS_PER_HOUR.search(unit):  # "помесячно до 150 тыс руб": the cap is a month's price
        req.max_price, req.price_monthly = hourly_equal(req.max_price), True

    m = REGION_RE.search(rest)
    if m:
        req.region = m.group(1)
        rest = rest[:m.start()] + " " + rest[m.end():]
    elif (m := _areas().search(rest)) is not None and (codes := _area_codes(m.group("led") or m.group("bare"))):
        req.region = AREA_PREFIX + ",".join(codes)  # "в России", "US only", "in Germany or the Netherlands"
        rest = rest[:m.start()] + " " + rest[m.end():]

    if _REQUEST.search(rest):
        rest = _ASKING.sub(" ", rest)
    rest = _TARGET_FILLER.sub(" ", rest)
    req.target = " ".join(rest.replace(",", " , ").split()).strip(" ,;:-?!").replace(" , ", ", ")
    req.gpu_ids = gpu_list(req.target)
    if req.gpu_ids is None and (by_memory := _MEMORY_CLASS.match(req.target)) is not None:
        req.gpu_ids = memory_class(float(by_memory.group("gb")))
        said = by_memory.group("n")
        if req.gpu_ids is not None and said and req.gpu_count is None:
            count = int(said) if said.isdigit() else COUNT_WORDS.get(said.lower().replace("ё", "е"), 0)
            if gpu_count_ok(count):
                req.gpu_count = count
            else:
                req.problem = req.problem or "count"
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
    spec = card_spec(req.target, also=_COUNT_FIELD) if req.gpu_ids is None and req.target else None
    if spec is not None and spec.gpu is not None:
        # "4090 2 карты", "H100 (4 GPUs)": a card and how many, in any order, as the workload parser reads them
        req.gpu_ids, said_count = list(spec.gpu_family or (spec.gpu,)), spec.gpus
        if said_count is not None and req.gpu_count is None:
            if gpu_count_ok(said_count):
                req.gpu_count = said_count
            else:
                req.problem = req.problem or "count"
            # the target is the cards alone, as with a leading count: a command put together from it and the
            # filters ("/subscribe H100 x8 …") says the count once
            req.target = cards_named(req.gpu_ids)
    return req


_CARD_FIELDS = frozenset({"gpu", "gpu_family"})
_COUNT_FIELD = frozenset({"gpus"})


def card_spec(text: str, *, also: frozenset[str] = frozenset()) -> WorkloadSpec | None:
    """What `core.parser` reads of a phrase that names a card and nothing else (but the fields in `also`), else
    None: a phrase with anything of a workload in it is a workload. Its `gpu` is the card, `gpu_family` every
    variant a family name covers."""
    try:
        spec = parse_workload(text)
    except ParseError:
        return None
    said = spec.model_dump(exclude_none=True, exclude_defaults=True)
    if spec.gpu is None or set(said) - _CARD_FIELDS - also:
        return None
    return spec


def _take_price(req: SubscribeRequest, m: re.Match[str]) -> str:
    """The cap a price match says (the amount with thousands and cents read, its currency, what it bounds: per GPU
    or the whole configuration; a month's price as its hourly equal, 730 hours, the way offers compare); returns the
    words of its unit."""
    groups = m.groupdict()
    sign = (groups.get("pre") or groups.get("post") or "").strip().lower()
    price = amount(groups.get("num") or groups.get("num2") or "0")
    if groups.get("mult"):
        price *= 1000
    unit: str = groups.get("unit") or ""
    if sign and re.fullmatch(_CENTS, sign, re.IGNORECASE):
        price, sign = price / 100, "$"
    req.price_monthly = bool(_SAYS_PER_MONTH.search(unit))
    if req.price_monthly:
        price = hourly_equal(price)
    if price_ok(price):
        req.max_price = price
        req.price_basis = "gpu" if _SAYS_PER_GPU.search(unit) else "total"
    else:  # "under $0/h", "до 1e400 ₽": refused here with a clear message, not by the database later
        req.problem = "price"
    if sign:
        req.price_currency = "USD" if re.fullmatch(_USD, sign, re.IGNORECASE) else "RUB"
    return unit


def hourly_equal(per_month: float) -> float:
    """A month's price as the hourly one offers are compared by (730 hours), kept to 6 decimals so that the month's
    figure said back (`bot.formatting.cap_amount`) is the one the user typed, to the cent."""
    return round(per_month / HOURS_PER_MONTH, 6)


def amount(text: str) -> float:
    """The number `_NUMBER` matched: "150 000" -> 150000, "$1,500.50" -> 1500.5, "2,5" -> 2.5."""
    text = re.sub(r"[ \u00a0\u202f]", "", text)
    if _COMMA_GROUPS.fullmatch(text):
        return float(text.replace(",", ""))
    return float(text.replace(",", "."))


def memory_class(gb: float) -> list[str] | None:
    """"any GPU with 80GB", "карта с 48 гигами": every catalog card of that memory, as a workload's "on a 48GB
    card" is (core.defaults); None when no card has it."""
    ids = [g.id for g in GPUS if abs(g.memory_gb - gb) <= 0.5]
    return ids or None


def gpu_list(text: str) -> list[str] | None:
    """Catalog ids when every comma/or-separated part of `text` names a known GPU, else None. A family name
    covers its variants ('H100' is SXM, PCIe and NVL; 'A100' 40 and 80 GB) unless one is named. A card typed in the
    Russian layout ('а100', 'т4') is read as the parser reads it."""
    if not text:
        return None
    text = latin_cards(text)
    parts = [p for p in _SPLIT_GPUS.split(text) if p.strip()]
    ids: list[str] = []
    for part in parts:
        gpus = resolve_gpus(part.strip())
        if not gpus:
            return None
        ids.extend(g.id for g in gpus if g.id not in ids)
    return ids or None
