"""Display names: what a person reads instead of an internal id (models, methods, providers, regions).

- providers: the provider catalog's titles (`core.providers`: vastai -> Vast.ai);
- models: the catalog's names written the way model cards title them (llama-3.1-70b -> Llama 3.1 70B);
- methods and quantisations: the text catalog's words (qlora -> QLoRA, inference -> инференс) and upper-case
  format names (nf4 -> NF4);
- regions: the cloud region ids providers report (ap_northeast_kr_se_1, ewr, usny01_a01) -> a city in the user's
  language; two-letter country codes (Vast.ai's geolocation, HOSTKEY's locations) -> the country's name in the
  user's language from Babel's CLDR data; anything unknown is shown as the provider wrote it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.models import MODELS, find_model
from core.providers import provider_title
from core.workload import Workload
from texts.i18n import number, t

# Region id -> city (catalog key `city_<name>`). Sources: CloudRift's datacenter ids in its API's instance-types
# answer (tests/fixtures/providers/cloudrift.sample.json); Vultr's region ids (GET /v2/regions: "ewr" New Jersey …);
# RunPod's cloud types are not places ("secure" / "community" cloud).
REGION_CITY: dict[str, str] = {
    "ap_northeast_kr_se_1": "seoul", "ap-east-tw-kn-2": "taiwan", "eu-central-it-gv-1": "italy",
    "us-east-nc-nr-1": "north_carolina", "usny01_a01": "new_york", "ustx1a_a01": "texas",
    "ewr": "new_jersey", "ord": "chicago", "dfw": "dallas", "sea": "seattle", "lax": "los_angeles",
    "atl": "atlanta", "ams": "amsterdam", "lhr": "london", "fra": "frankfurt", "sjc": "silicon_valley",
    "syd": "sydney", "nrt": "tokyo", "icn": "seoul", "par": "paris", "waw": "warsaw", "mad": "madrid",
    "sto": "stockholm", "sgp": "singapore", "mia": "miami", "yto": "toronto", "bom": "mumbai", "del": "delhi",
    "blr": "bangalore", "jnb": "johannesburg", "mel": "melbourne", "osa": "osaka", "sao": "sao_paulo",
    "mex": "mexico_city", "man": "manchester", "hnl": "honolulu", "tlv": "tel_aviv", "scl": "santiago",
    "secure": "secure_cloud", "community": "community_cloud",
    # Selectel / HOSTKEY / immers.cloud name Russian data centres by city
    "moscow": "moscow", "msk": "moscow", "москва": "moscow", "saint petersburg": "saint_petersburg",
    "st petersburg": "saint_petersburg", "spb": "saint_petersburg", "санкт-петербург": "saint_petersburg",
    "novosibirsk": "novosibirsk", "новосибирск": "novosibirsk",
}
_COUNTRY_IN_ID = re.compile(r"^(?:ap|eu|us|na|sa|af|me|ca)[-_][a-z]+[-_](?P<cc>[a-z]{2})[-_]")


def provider_name(provider: str) -> str:
    return provider_title(provider)


@lru_cache(maxsize=1)
def _family_spellings() -> dict[str, str]:
    """'gemma' -> 'Gemma', 'glm' -> 'GLM': how the catalog's own capitalised names write a family that some
    upstream configs spell in lower case ('gemma-3-27B', 'glm-4-9B' from litgpt)."""
    out: dict[str, str] = {}
    for arch in MODELS:
        head = re.sub(r"\d+(?:\.\d+)?$", "", re.split(r"[-_ ]", arch.name)[0])
        if head and head != head.lower():
            out.setdefault(head.lower(), head)
    return out


@lru_cache(maxsize=512)
def model_name(model: str) -> str:
    """'llama-3.1-70b' or 'Llama-3.1-70B' -> 'Llama 3.1 70B'; a name not in the catalog is kept as it is."""
    arch = find_model(model) if "/" not in model else None
    if arch is None:  # a Hugging Face repo id ("acme/llama-ft") or a config.json's name: shown as given
        return model
    name = arch.name
    if "(" in name or " " in name:  # "70B (scaled from …)", "8x70B MoE (…)": already prose
        return name
    head, sep, rest = name.partition("-")
    if head == head.lower() and head not in _family_spellings():
        # a family its publisher writes in lower case with hyphens ("gpt-oss-120b"): shown as published
        return next((a for a in arch.aliases if a.lower() == name.lower() and "/" not in a), name)
    head = _family_spellings().get(head, head)
    return (head + sep + rest).replace("-", " ")


def method_name(lang: str, method: str) -> str:
    return t(lang, f"val_method_{method}")


def quant_name(quant: str) -> str:
    return quant.replace("-", " ").upper().replace("GPTQ INT", "GPTQ int").replace("_K_M", "_K_M")


def _country(lang: str, code: str) -> str | None:
    from babel import Locale

    return Locale(lang).territories.get(code.upper())


@lru_cache(maxsize=2048)
def region_name(lang: str, location: str) -> str:
    """A location as people say it, in `lang`; the provider's own text when it is not an id we know."""
    raw = location.strip()
    key = raw.lower()
    city = REGION_CITY.get(key)
    if city is not None:
        return t(lang, f"city_{city}")
    if re.fullmatch(r"[A-Za-z]{2}", raw):
        return _country(lang, raw) or raw
    m = _COUNTRY_IN_ID.match(key)
    if m:
        return _country(lang, m.group("cc")) or raw
    return raw


def ctx_label(w: Workload, lang: str = "en") -> str:
    """'ctx 8192', or with a stated prompt 'ctx 3072 (input 1024 + output 2048)' (inference)."""
    if w.prompt_len is not None and w.prompt_len < w.seq_len:
        return t(lang, "label_ctx_io", ctx=number(w.seq_len, 0, lang), prompt=number(w.prompt_len, 0, lang),
                 output=number(w.seq_len - w.prompt_len, 0, lang))
    return t(lang, "label_ctx", ctx=number(w.seq_len, 0, lang))
