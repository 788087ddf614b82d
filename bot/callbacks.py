"""Callback data of every inline button (aiogram CallbackData factories; each packs under 64 bytes)."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData


class EstimateCb(CallbackData, prefix="e"):
    action: str  # "notify" | "more"
    q: str  # QueryTokens token of the workload text


class OffersCb(CallbackData, prefix="o"):
    q: str  # token of the filter text, "" for all offers
    page: int


class SubCb(CallbackData, prefix="s"):
    action: str  # "pause" | "resume" | "delete"
    id: int


class WizardCb(CallbackData, prefix="w"):
    step: str  # "kind" | "gpu" | "price" | "provider" | "cancel"
    value: str


class SettingsCb(CallbackData, prefix="set"):
    what: str  # "currency" | "grouping" | "lang"
    value: str


class AlertCb(CallbackData, prefix="al"):
    """The "stop these alerts" button under an alert (bot/handlers/alerts.py; built by bot/sender.py)."""

    action: str  # "stop"
    sub: int  # subscription id
