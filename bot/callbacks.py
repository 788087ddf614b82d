"""Callback data of every inline button (aiogram CallbackData factories; each packs under 64 bytes).

Fields are typed and bounded: a forged or stale button whose data does not validate (Unicode digits, ids beyond a
database integer, `nan` prices, unknown actions) simply matches no handler, and the fallback router acknowledges it
politely. Handlers therefore only ever see values they can use.
"""

from __future__ import annotations

from typing import Annotated, Literal

from aiogram.filters.callback_data import CallbackData
from pydantic import Field

from core.limits import MAX_ID, MAX_PAGE, MAX_PRICE

Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Page = Annotated[int, Field(ge=1, le=MAX_PAGE)]
Token = Annotated[str, Field(max_length=48)]  # bot.tokens: "b" + base64 (<= 40) or "h" + 16 hex digits


class EstimateCb(CallbackData, prefix="e"):
    # m_*: the method buttons; again: answer with the estimate of `q` (an example, or a query with a remedy's change);
    # assume / hide: show or hide the estimate's assumptions (the message is edited)
    action: Literal["notify", "more", "again", "assume", "hide", "m_inference", "m_lora", "m_qlora", "m_full",
                    "m_freeze"]
    q: Token  # QueryTokens token of the workload text


class MenuCb(CallbackData, prefix="mn"):
    """The buttons under /start and a bare /estimate: the user's subscriptions, the language chooser."""

    what: Literal["subs", "lang"]


class OffersCb(CallbackData, prefix="o"):
    q: Token  # token of the filter text, "" for all offers
    page: Annotated[int, Field(ge=0, le=MAX_PAGE)]  # 1-based; 0 (with skip) = back to the estimate it came from
    skip: Annotated[int, Field(ge=0, le=50)] = 0  # offers an estimate already showed: the list starts after them


class SubCb(CallbackData, prefix="s"):
    # "here": send this subscription's alerts to this chat; "delete" asks, "delete_yes" deletes, "keep" goes back;
    # "delete_all_yes" (id 0) confirms /unsubscribe all
    action: Literal["pause", "resume", "delete", "here", "delete_yes", "keep", "delete_all_yes"]
    id: Annotated[int, Field(ge=0, le=MAX_ID)]


class SubsPageCb(CallbackData, prefix="sp"):
    page: Page


class WizardKindCb(CallbackData, prefix="wk"):
    kind: Literal["workload", "gpu"]


class WizardGpuCb(CallbackData, prefix="wg"):
    gpu: Annotated[str, Field(min_length=1, max_length=40)]


class WizardPriceCb(CallbackData, prefix="wp"):
    price: Annotated[float, Field(gt=0, le=MAX_PRICE, allow_inf_nan=False)] | None  # None: any price


class WizardBasisCb(CallbackData, prefix="wb"):
    basis: Literal["total", "gpu"]  # what the chosen price bounds (core.matching.PRICE_BASES)


class WizardProviderCb(CallbackData, prefix="wv"):
    provider: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,32}$")] | None  # None: all providers


class WizardCancelCb(CallbackData, prefix="wx"):
    pass


class SettingsCb(CallbackData, prefix="set"):
    what: Literal["currency", "grouping", "lang"]
    value: Literal["RUB", "USD", "0", "1", "ru", "en"]


class AlertCb(CallbackData, prefix="al"):
    """The "stop these alerts" button under an alert (bot/handlers/alerts.py; built by bot/sender.py)."""

    action: Literal["stop"]
    sub: Annotated[int, Field(ge=1, le=MAX_ID)]  # subscription id (bounded: a forged one never reaches SQL)
