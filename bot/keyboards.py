"""Inline keyboards built whole from their inputs: which buttons a message carries and what each one sends back
(`bot.callbacks`). Texts come from the catalog; the handlers only attach the markup.

Still beside their handlers: the /offers pages' and the /subscribe wizard's buttons and inline mode's results
(modules being changed on other branches; to move here next).
"""

from __future__ import annotations

from collections.abc import Sequence

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.callbacks import EstimateCb, OffersCb, SettingsCb, SubCb, SubsPageCb
from bot.texts import t
from bot.views import OFFERS_SHOWN
from storage.user_tables import Subscription, User

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


def estimate_keyboard(lang: str, token: str, fitting: int,
                      remedies: Sequence[tuple[str, str]] = ()) -> InlineKeyboardMarkup:
    """"Notify me", "More offers" when more offers fit than the estimate shows, and a button per remedy (code,
    token of the query with that change) that re-runs the estimate with it."""
    kb = InlineKeyboardBuilder()
    for code, remedy_token in remedies:
        kb.row(InlineKeyboardButton(text=t(lang, f"btn_remedy_{code}"),
                                    callback_data=EstimateCb(action="again", q=remedy_token).pack()))
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


def subs_page_keyboard(lang: str, shown: list[tuple[int, Subscription]], page: int,
                       pages: int) -> InlineKeyboardMarkup:
    """/subs: pause or resume and delete for each subscription on the page (numbered as listed), then the pages."""
    kb = InlineKeyboardBuilder()
    for n, sub in shown:
        toggle = (t(lang, "btn_resume", n=n), SubCb(action="resume", id=sub.id)) if sub.paused else \
            (t(lang, "btn_pause", n=n), SubCb(action="pause", id=sub.id))
        kb.row(InlineKeyboardButton(text=toggle[0], callback_data=toggle[1].pack()),
               InlineKeyboardButton(text=t(lang, "btn_delete", n=n),
                                    callback_data=SubCb(action="delete", id=sub.id).pack()))
    nav = []
    if page > 1:
        nav.append(InlineKeyboardButton(text=t(lang, "btn_prev"), callback_data=SubsPageCb(page=page - 1).pack()))
    if page < pages:
        nav.append(InlineKeyboardButton(text=t(lang, "btn_next"), callback_data=SubsPageCb(page=page + 1).pack()))
    if nav:
        kb.row(*nav)
    return kb.as_markup()


def confirm_keyboard(lang: str, yes: SubCb) -> InlineKeyboardMarkup:
    """Delete (the action `yes` names) or keep."""
    kb = InlineKeyboardBuilder()
    kb.row(InlineKeyboardButton(text=t(lang, "btn_delete_yes"), callback_data=yes.pack()),
           InlineKeyboardButton(text=t(lang, "btn_keep"), callback_data=SubCb(action="keep", id=0).pack()))
    return kb.as_markup()
