"""Callback data of every inline button (aiogram CallbackData factories; each packs under 64 bytes)."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData


class EstimateCb(CallbackData, prefix="e"):
    action: str  # "notify" | "more"
    q: str  # QueryTokens token of the workload text


class OffersCb(CallbackData, prefix="o"):
    q: str  # token of the filter text, "" for all offers
    page: int  # 1-based; 0 under an estimate's list = back to the estimate itself
    skip: int = 0  # offers already shown above (an estimate's cheapest few): the list starts after them


class SubCb(CallbackData, prefix="s"):
    action: str  # "pause" | "resume" | "delete" (asks) | "delete_yes" | "keep" | "delete_all_yes" (id 0)
    id: int


class WizardCb(CallbackData, prefix="w"):
    step: str  # "kind" | "gpu" | "price" | "provider" | "cancel"
    value: str


class SettingsCb(CallbackData, prefix="set"):
    what: str  # "currency" | "grouping" | "lang"
    value: str
