"""Questions about how an offer comes and goes, as people ask them: "how long does an H100 stay in stock?", "how
often is an A100 available on runpod?", "как долго держится H100 в наличии?", "сколько обычно висит A100 у
runpod?", "когда появится H100 дешевле 200 ₽?". /when answers them (bot.handlers.when): a plain message that asks
one is that question, and the words of the asking are no part of the card or workload it is about.

A question needs both a word of how long, how often or when and a word of being in stock: "how long will 70B QLoRA
take?" is the estimate's time question, and "is an H100 in stock?" is the price question /offers answers. A request
to be told ("notify me when…", "сообщи, когда…") is a subscription, never this.
"""

from __future__ import annotations

import re

_ASKED = re.compile(
    r"(?<!\w)(?:how\s+(?:long|often|quickly|soon|fast)|usually|typically|normally|"
    r"как\s+(?:долго|часто|быстро|скоро)|сколько(?:\s+(?:обычно|времени))?|обычно|часто)(?!\w)", re.IGNORECASE)
_IN_STOCK = (r"in\s+stock|available|availability|stay(?:s|ed)?|lasts?|remains?|sells?\s+out|sold\s+out|gone|"
             r"comes?\s+back|back|в\s+наличии|в\s+продаже|доступн\w*|держ(?:ится|атся|ался|алась|ались)|"
             r"вис(?:ит|ят|ел\w*)|жив[её]т|живут|разбира\w*|появля\w*|появится|появятся|продерж\w*|бывает|бывают")
_STOCK = re.compile(rf"(?<!\w)(?:{_IN_STOCK})(?!\w)", re.IGNORECASE)
_TELL_ME = re.compile(r"(?<!\w)(?:notify|tell|alert|ping|let\s+me\s+know|сообщи(?:те)?|уведоми(?:те)?|"
                      r"(?:на)?пиши(?:те)?|скажи(?:те)?|дай(?:те)?\s+знать)(?!\w)", re.IGNORECASE)
# a job's own time: "how long does 7B LoRA take on an H100 available on runpod?" is the estimate's question
_JOB_TIME = re.compile(r"(?<!\w)(?:takes?|took|train\w*|fine[\s-]?tun\w*|finetun\w*|runs?|epochs?|examples|tokens|"
                       r"займ\w*|уйд\w*|обуч\w*|дообуч\w*|эпох\w*|пример\w*|токен\w*)(?!\w)", re.IGNORECASE)
# the asking, taken out of what is asked about (never a word of a card's or a model's name: "a" is Command A's)
_ASKING = re.compile(
    rf"(?<!\w)(?:{_IN_STOCK}|how\s+(?:long|often|quickly|soon|fast)|usually|typically|normally|does|do|did|is|are|"
    r"will|would|can|it|they|there|an|the|be|gets?|until|again|for|when|как\s+(?:долго|часто|быстро|скоро)|"
    r"сколько|обычно|часто|времени|ли|вернётся|вернется|будет|будут|снова|его|её|ее|их|когда)(?!\w)",
    re.IGNORECASE)


def asks_how_long(text: str) -> bool:
    """Whether `text` asks how long, how often or when a card or workload is in stock."""
    return bool(_ASKED.search(text) and _STOCK.search(text) and not _TELL_ME.search(text)
                and not _JOB_TIME.search(text))


def what_is_asked(text: str) -> str:
    """`text` without the words of the asking: the card or workload and its filters ("H100 on runpod")."""
    return " ".join(_ASKING.sub(" ", text).split()).strip(" ,;:?!.")
