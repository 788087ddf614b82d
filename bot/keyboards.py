"""Inline keyboards built whole from their inputs: which buttons a message carries and what each one sends back
(`bot.callbacks`). Texts come from the catalog; the handlers only attach the markup. Every keyboard of the bot is
here: the estimate's, /offers pages', the /subscribe wizard's steps, /subs, /settings and inline mode's results.
"""

from __future__ import annotations

from collections.abc import Sequence

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.callbacks import (
    EstimateCb,
    MenuCb,
    OffersCb,
    SettingsCb,
    SubCb,
    SubsPageCb,
    WizardBasisCb,
    WizardCancelCb,
    WizardGpuCb,
    WizardKindCb,
    WizardPriceCb,
    WizardProviderCb,
)
from bot.formatting import money
from bot.texts import t
from bot.views import OFFERS_SHOWN
from storage.user_tables import Subscription, User

# The methods offered as buttons when a phrase names a model but not what to do with it ("mistral 7b").
METHOD_CHOICES = ("inference", "lora", "qlora", "full")
# ...and under "which way to fine-tune?" (a training word was said): the ways to train
TRAINING_CHOICES = ("lora", "qlora", "full", "freeze")
ANY_METHOD_CHOICE = frozenset(METHOD_CHOICES + TRAINING_CHOICES)
# The /subscribe wizard's GPU and price buttons.
POPULAR_GPUS = ("H100", "H200", "B200", "A100 80GB", "L40S", "RTX 4090", "RTX 3090", "A6000")
PRICE_PRESETS = {"RUB": (100, 200, 300, 500), "USD": (1, 2, 3, 5)}


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


def start_keyboard(lang: str, examples: Sequence[tuple[str, str]]) -> InlineKeyboardMarkup:
    """/start and a bare /estimate: one button per example (text, token; pressing it answers with that estimate),
    then "My subscriptions" and "Language"."""
    kb = InlineKeyboardBuilder()
    for text, token in examples:
        kb.row(InlineKeyboardButton(text=f"🧮 {text}", callback_data=EstimateCb(action="again", q=token).pack()))
    kb.row(InlineKeyboardButton(text=t(lang, "btn_my_subs"), callback_data=MenuCb(what="subs").pack()),
           InlineKeyboardButton(text=t(lang, "btn_language"), callback_data=MenuCb(what="lang").pack()))
    return kb.as_markup()


def estimate_keyboard(lang: str, token: str, fitting: int, remedies: Sequence[tuple[str, str]] = (), *,
                      assumptions: bool | None = None, notify: bool = True) -> InlineKeyboardMarkup:
    """"Notify me", "More offers" when more offers fit than the estimate shows, a button per remedy (code, token of
    the query with that change) that re-runs the estimate with it, and "Assumptions" (`assumptions` False: they are
    hidden) or "Hide assumptions" (True: shown); None: the estimate has none. `notify` False: no "Notify me" (nothing
    could ever be alerted: a serving target no configuration keeps up with)."""
    kb = InlineKeyboardBuilder()
    for code, remedy_token in remedies:
        kb.row(InlineKeyboardButton(text=t(lang, f"btn_remedy_{code}"),
                                    callback_data=EstimateCb(action="again", q=remedy_token).pack()))
    if notify:
        kb.row(InlineKeyboardButton(text=t(lang, "btn_notify"),
                                    callback_data=EstimateCb(action="notify", q=token).pack()))
    if fitting > OFFERS_SHOWN:
        kb.row(InlineKeyboardButton(text=t(lang, "btn_more_offers"),
                                    callback_data=OffersCb(q=token, page=1, skip=OFFERS_SHOWN).pack()))
    if assumptions is not None:
        kb.row(InlineKeyboardButton(text=t(lang, "btn_assumptions_hide" if assumptions else "btn_assumptions"),
                                    callback_data=EstimateCb(action="hide" if assumptions else "assume",
                                                             q=token).pack()))
    return kb.as_markup()


def choice_keyboard(choices: Sequence[tuple[str, str]]) -> InlineKeyboardMarkup:
    """One button per (label, token): pressing it answers with the estimate of the token's phrase."""
    kb = InlineKeyboardBuilder()
    for label, token in choices:
        kb.button(text=label, callback_data=EstimateCb(action="again", q=token))
    kb.adjust(2)
    return kb.as_markup()


def method_keyboard(lang: str, token: str, choices: tuple[str, ...] = METHOD_CHOICES) -> InlineKeyboardMarkup:
    kb = InlineKeyboardBuilder()
    for method in choices:
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


def offers_page_keyboard(lang: str, token: str, page: int, pages: int, skip: int = 0) -> InlineKeyboardMarkup | None:
    """/offers: ‹ and › between pages (‹ on page 1 goes back to the estimate the list came from, when `skip`)."""
    buttons = []
    if page > 1 or skip:
        buttons.append(InlineKeyboardButton(text=t(lang, "btn_prev"),
                                            callback_data=OffersCb(q=token, page=page - 1, skip=skip).pack()))
    if page < pages:
        buttons.append(InlineKeyboardButton(text=t(lang, "btn_next"),
                                            callback_data=OffersCb(q=token, page=page + 1, skip=skip).pack()))
    if not buttons:
        return None
    kb = InlineKeyboardBuilder()
    kb.row(*buttons)
    return kb.as_markup()


def subscribe_link_keyboard(lang: str, url: str) -> InlineKeyboardMarkup:
    """Inline mode's results: one "Subscribe" button, a deep link into the bot."""
    return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text=t(lang, "btn_subscribe"), url=url)]])


WizardButton = WizardKindCb | WizardGpuCb | WizardPriceCb | WizardBasisCb | WizardProviderCb


def _wizard(rows: list[list[tuple[str, WizardButton]]], lang: str) -> InlineKeyboardMarkup:
    """A wizard step's buttons, then Cancel."""
    kb = InlineKeyboardBuilder()
    for row in rows:
        kb.row(*(InlineKeyboardButton(text=label, callback_data=cb.pack()) for label, cb in row))
    kb.row(InlineKeyboardButton(text=t(lang, "btn_cancel"), callback_data=WizardCancelCb().pack()))
    return kb.as_markup()


def wizard_kind_keyboard(lang: str) -> InlineKeyboardMarkup:
    return _wizard([[(t(lang, "btn_kind_workload"), WizardKindCb(kind="workload"))],
                    [(t(lang, "btn_kind_gpu"), WizardKindCb(kind="gpu"))]], lang)


def wizard_gpu_keyboard(lang: str) -> InlineKeyboardMarkup:
    return _wizard([[(name, WizardGpuCb(gpu=name)) for name in POPULAR_GPUS[i:i + 4]]
                    for i in range(0, len(POPULAR_GPUS), 4)], lang)


def wizard_price_keyboard(lang: str, currency: str) -> InlineKeyboardMarkup:
    return _wizard([[(money(p, currency, lang), WizardPriceCb(price=p)) for p in PRICE_PRESETS[currency]],
                    [(t(lang, "btn_any_price"), WizardPriceCb(price=None))]], lang)


def wizard_basis_keyboard(lang: str, shown_price: str) -> InlineKeyboardMarkup:
    """What a cap bounds: the whole configuration per hour, or each GPU-hour."""
    return _wizard([[(t(lang, "btn_basis_total", price=shown_price), WizardBasisCb(basis="total"))],
                    [(t(lang, "btn_basis_gpu", price=shown_price), WizardBasisCb(basis="gpu"))]], lang)


def wizard_provider_keyboard(lang: str, polled: Sequence[tuple[str, str]],
                             idle: Sequence[tuple[str, str, str]]) -> InlineKeyboardMarkup:
    """The polled providers (name, title) three a row, "any provider", then each one not polled (name, title,
    why) greyed on its own row."""
    rows: list[list[tuple[str, WizardButton]]] = [
        [(title, WizardProviderCb(provider=name)) for name, title in polled[i:i + 3]]
        for i in range(0, len(polled), 3)]
    rows.append([(t(lang, "btn_any_provider"), WizardProviderCb(provider=None))])
    rows += [[(t(lang, "btn_provider_idle", name=title, reason=reason), WizardProviderCb(provider=name))]
             for name, title, reason in idle]
    return _wizard(rows, lang)
