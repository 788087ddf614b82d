"""Inline keyboards built whole from their inputs: which buttons a message carries and what each one sends back
(`bot.callbacks`). Texts come from the catalog; the handlers only attach the markup.

Keyboards that are one part of a paged view (the /subs list, /offers pages, the /subscribe wizard's steps) are
built beside that view, from the same page state.
"""

from __future__ import annotations

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.callbacks import EstimateCb, OffersCb, SettingsCb
from bot.texts import t
from bot.views import OFFERS_SHOWN
from storage.user_tables import User

# The methods offered as buttons when a phrase names a model but not what to do with it ("mistral 7b").
METHOD_CHOICES = ("inference", "lora", "qlora", "full")


def settings_keyboard(user: User) -> InlineKeyboardMarkup:
    """Buttons that say what they do ("switch to USD"), never a state that is not."""
    lang = user.lang
    other = "USD" if user.currency == "RUB" else "RUB"
    kb = InlineKeyboardBuilder()
    kb.row(InlineKeyboardButton(text=t(lang, "btn_currency_switch", currency=other),
                                callback_data=SettingsCb(what="currency", value=other).pack()))
    kb.row(InlineKeyboardButton(text=t(lang, "btn_grouping_off" if user.grouping else "btn_grouping_on"),
                                callback_data=SettingsCb(what="grouping", value="0" if user.grouping else "1").pack()))
    return kb.as_markup()


def language_keyboard() -> InlineKeyboardMarkup:
    """Each language named in itself."""
    kb = InlineKeyboardBuilder()
    kb.row(InlineKeyboardButton(text="Русский", callback_data=SettingsCb(what="lang", value="ru").pack()),
           InlineKeyboardButton(text="English", callback_data=SettingsCb(what="lang", value="en").pack()))
    return kb.as_markup()


def estimate_keyboard(lang: str, token: str, fitting: int) -> InlineKeyboardMarkup:
    """"Notify me", and "More offers" when more offers fit than the estimate shows."""
    kb = InlineKeyboardBuilder()
    kb.row(InlineKeyboardButton(text=t(lang, "btn_notify"),
                                callback_data=EstimateCb(action="notify", q=token).pack()))
    if fitting > OFFERS_SHOWN:
        kb.row(InlineKeyboardButton(text=t(lang, "btn_more_offers"),
                                    callback_data=OffersCb(q=token, page=1, skip=OFFERS_SHOWN).pack()))
    return kb.as_markup()


def method_keyboard(lang: str, token: str) -> InlineKeyboardMarkup:
    kb = InlineKeyboardBuilder()
    for method in METHOD_CHOICES:
        kb.button(text=t(lang, f"btn_method_{method}"), callback_data=EstimateCb(action=f"m_{method}", q=token))
    kb.adjust(2)
    return kb.as_markup()


def without_button(markup: InlineKeyboardMarkup, pressed: str | None) -> InlineKeyboardMarkup | None:
    """The keyboard with the pressed button taken off (None when nothing is left), so a message stops offering
    what was just done."""
    rows = [[b for b in row if b.callback_data != pressed] for row in markup.inline_keyboard]
    kept = [r for r in rows if r]
    return InlineKeyboardMarkup(inline_keyboard=kept) if kept else None
