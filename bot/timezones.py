"""A time zone as the user gives it: a UTC offset (`+3`, `UTC+5:30`, `-8`, `GMT+1`) or a city (`Novosibirsk`,
`Новосибирск`, `Europe/Berlin`, `Berlin`), read into minutes east of UTC at the present moment (zoneinfo's data).
Quiet hours are kept as local hours and this offset; the language only picks the default (Moscow for Russian)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

_OFFSET = re.compile(r"^(?:utc|gmt|мск(?=[+-]))?\s*([+\-−])\s*(\d{1,2})(?:[:.](\d{2}))?$", re.IGNORECASE)

# Cities people name in Russian (and a few English spellings zoneinfo does not carry) -> IANA zones.
CITY_ZONES: dict[str, str] = {
    "москва": "Europe/Moscow", "мск": "Europe/Moscow", "moscow": "Europe/Moscow",
    "санкт-петербург": "Europe/Moscow", "петербург": "Europe/Moscow", "питер": "Europe/Moscow",
    "spb": "Europe/Moscow", "st petersburg": "Europe/Moscow", "saint petersburg": "Europe/Moscow",
    "калининград": "Europe/Kaliningrad", "самара": "Europe/Samara", "казань": "Europe/Moscow",
    "нижний новгород": "Europe/Moscow", "екатеринбург": "Asia/Yekaterinburg", "пермь": "Asia/Yekaterinburg",
    "челябинск": "Asia/Yekaterinburg", "уфа": "Asia/Yekaterinburg", "омск": "Asia/Omsk",
    "новосибирск": "Asia/Novosibirsk", "томск": "Asia/Tomsk", "барнаул": "Asia/Barnaul",
    "красноярск": "Asia/Krasnoyarsk", "иркутск": "Asia/Irkutsk", "якутск": "Asia/Yakutsk",
    "хабаровск": "Asia/Vladivostok", "владивосток": "Asia/Vladivostok", "магадан": "Asia/Magadan",
    "камчатка": "Asia/Kamchatka", "петропавловск-камчатский": "Asia/Kamchatka",
    "минск": "Europe/Minsk", "киев": "Europe/Kyiv", "kiev": "Europe/Kyiv", "алматы": "Asia/Almaty",
    "астана": "Asia/Almaty", "ташкент": "Asia/Tashkent", "бишкек": "Asia/Bishkek", "ереван": "Asia/Yerevan",
    "тбилиси": "Asia/Tbilisi", "баку": "Asia/Baku", "стамбул": "Europe/Istanbul", "дубай": "Asia/Dubai",
    "берлин": "Europe/Berlin", "лондон": "Europe/London", "париж": "Europe/Paris", "нью-йорк": "America/New_York",
    "new york": "America/New_York", "san francisco": "America/Los_Angeles", "сан-франциско": "America/Los_Angeles",
    "лос-анджелес": "America/Los_Angeles", "белград": "Europe/Belgrade", "варшава": "Europe/Warsaw",
    "прага": "Europe/Prague", "рига": "Europe/Riga", "таллин": "Europe/Tallinn", "вильнюс": "Europe/Vilnius",
    "хельсинки": "Europe/Helsinki", "бангкок": "Asia/Bangkok", "пхукет": "Asia/Bangkok", "бали": "Asia/Makassar",
    "сингапур": "Asia/Singapore", "токио": "Asia/Tokyo", "пекин": "Asia/Shanghai", "шанхай": "Asia/Shanghai",
}


@lru_cache(maxsize=1)
def _by_city() -> dict[str, str]:
    """'berlin' -> 'Europe/Berlin' for every zone's last part (zoneinfo's own names)."""
    out: dict[str, str] = {}
    for zone in sorted(available_timezones()):
        out.setdefault(zone.rsplit("/", 1)[-1].replace("_", " ").lower(), zone)
    return out


def zone_for(text: str) -> str | None:
    key = " ".join(text.strip().lower().replace("ё", "е").split())
    if key in CITY_ZONES:
        return CITY_ZONES[key]
    if "/" in key:
        for zone in available_timezones():
            if zone.lower() == key:
                return zone
    return _by_city().get(key)


def parse_tz(text: str, now: datetime | None = None) -> tuple[int, str | None] | None:
    """(minutes east of UTC, the zone's name when a city was given) or None when `text` is neither."""
    m = _OFFSET.match(text.strip())
    if m:
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        if int(m.group(2)) > 14 or int(m.group(3) or 0) >= 60:
            return None
        return (-minutes if m.group(1) in "-−" else minutes), None
    zone = zone_for(text)
    if zone is None:
        return None
    try:
        offset = (now or datetime.now(UTC)).astimezone(ZoneInfo(zone)).utcoffset()
    except ZoneInfoNotFoundError:
        return None
    return (int(offset.total_seconds() // 60) if offset is not None else 0), zone


def format_offset(minutes: int) -> str:
    hours, rest = divmod(abs(minutes), 60)
    return ("+" if minutes >= 0 else "-") + (f"{hours}" if not rest else f"{hours}:{rest:02d}")
