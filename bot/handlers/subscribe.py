"""/subscribe: at once with text (`/subscribe 13B LoRA до 300 ₽/ч`), or, bare, a short wizard with inline
keyboards: what (workload or GPU) -> which -> price cap -> what the cap bounds (the whole configuration per hour, or
each GPU-hour: two buttons) -> providers -> stored.

Each typed answer is checked where it is given (a workload that cannot be estimated, a GPU we do not know, a price
that is not a number is refused at that step, with examples, and the step is asked again). Any command ends the
wizard (`WizardCancel`, a dispatcher middleware): `/help` mid-wizard is help, never the price answer."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, F, Router
from aiogram.filters import Command, CommandObject, StateFilter
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, Message, TelegramObject
from sqlalchemy.ext.asyncio import AsyncSession

from bot import keyboards
from bot.callbacks import WizardBasisCb, WizardCancelCb, WizardGpuCb, WizardKindCb, WizardPriceCb, WizardProviderCb
from bot.estimates import Estimator, Failure
from bot.formatting import esc, money
from bot.handlers.common import argument
from bot.offer_cache import OfferCache
from bot.subscribe_query import gpu_list, parse_subscribe
from bot.subscribing import subscribe_request, subscribe_text
from bot.texts import examples_block, t
from core.limits import MAX_PRICE, price_ok
from core.providers import provider_names, provider_title
from storage.user_tables import User

router = Router(name="subscribe")


class Wizard(StatesGroup):
    kind = State()
    target = State()
    price = State()
    basis = State()
    provider = State()


class WizardCancel(BaseMiddleware):
    """A command typed while the wizard waits for an answer ends the wizard (and says so), then runs as usual."""

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]], event: TelegramObject,
                       data: dict[str, Any]) -> Any:
        state: FSMContext | None = data.get("state")
        text = getattr(event, "text", None) or ""
        if state is not None and text.startswith("/") and isinstance(event, Message):
            # The state the FSM middleware read for this update moments ago (no second read of the database).
            current = data["raw_state"] if "raw_state" in data else await state.get_state()
            if current is not None and current.startswith(Wizard.__full_group_name__):
                await state.clear()
                if not text.startswith(("/subscribe", "/cancel")):  # those say what happens themselves
                    await event.answer(t(data.get("lang", "en"), "sub_cancelled"))
        return await handler(event, data)


@router.message(Command("subscribe", magic=F.args.strip()))
async def subscribe(message: Message, command: CommandObject, state: FSMContext, session: AsyncSession, user: User,
                    lang: str, estimator: Estimator, offers: OfferCache,
                    provider_setup: dict[str, str] | None = None) -> None:
    text = await argument(message, command, lang)
    await state.clear()
    reply = await subscribe_text(session, user, text, lang=lang, estimator=estimator, cache=offers,
                                 chat=message.chat, setup=provider_setup)
    await message.answer(reply.text, reply_markup=reply.markup, disable_web_page_preview=True)


@router.message(Command("subscribe"), flags={"rate": "wizard"})
async def start_wizard(message: Message, state: FSMContext, lang: str) -> None:
    """A bare /subscribe: the wizard (rate-limited: each start writes the conversation state)."""
    await state.set_state(Wizard.kind)
    await message.answer(t(lang, "sub_ask_kind"), reply_markup=keyboards.wizard_kind_keyboard(lang))


@router.message(Command("cancel"))
async def cancel_command(message: Message, state: FSMContext, lang: str) -> None:
    await state.clear()
    await message.answer(t(lang, "sub_cancelled"))


@router.callback_query(WizardCancelCb.filter())
async def cancel(query: CallbackQuery, state: FSMContext, lang: str) -> None:
    await state.clear()
    await query.answer()
    if isinstance(query.message, Message):
        await query.message.edit_text(t(lang, "sub_cancelled"))


@router.callback_query(Wizard.kind, WizardKindCb.filter())
async def chose_kind(query: CallbackQuery, callback_data: WizardKindCb, state: FSMContext, lang: str) -> None:
    await state.update_data(kind=callback_data.kind)
    await state.set_state(Wizard.target)
    await query.answer()
    if not isinstance(query.message, Message):
        return
    if callback_data.kind == "gpu":
        await query.message.edit_text(t(lang, "sub_ask_gpu"), reply_markup=keyboards.wizard_gpu_keyboard(lang))
    else:
        await query.message.edit_text(t(lang, "sub_ask_workload", examples=examples_block(lang)))


async def _ask_price(target_message: Message, state: FSMContext, target: str, lang: str, currency: str,
                     edit: bool) -> None:
    await state.update_data(target=target)
    await state.set_state(Wizard.price)
    markup = keyboards.wizard_price_keyboard(lang, currency)
    text = t(lang, "sub_ask_price", currency=currency)
    if edit:
        await target_message.edit_text(text, reply_markup=markup)
    else:
        await target_message.answer(text, reply_markup=markup)


@router.callback_query(Wizard.target, WizardGpuCb.filter())
async def chose_gpu(query: CallbackQuery, callback_data: WizardGpuCb, state: FSMContext, lang: str,
                    currency: str) -> None:
    await query.answer()
    if isinstance(query.message, Message):
        await _ask_price(query.message, state, callback_data.gpu, lang, currency, edit=True)


@router.message(Wizard.target, F.text)
async def typed_target(message: Message, state: FSMContext, lang: str, currency: str,
                       estimator: Estimator) -> None:
    """The workload or GPU, checked now: a phrase that is not one is refused here and asked again."""
    text = await argument(message, None, lang)
    kind = (await state.get_data()).get("kind", "workload")
    target = parse_subscribe(text).target
    if kind == "gpu":
        if gpu_list(target) is None:
            await message.answer(t(lang, "unknown_gpu", name=esc(target)) + "\n" + t(lang, "sub_ask_again"))
            return
    else:
        result = estimator.get(target) if target else None
        if result is None or isinstance(result, Failure):
            why = esc(result.message(lang)) if isinstance(result, Failure) else ""
            await message.answer((why + "\n\n" if why else "") +
                                 t(lang, "sub_ask_workload", examples=examples_block(lang)))
            return
    await _ask_price(message, state, text, lang, currency, edit=False)


def polled(setup: dict[str, str] | None) -> list[str]:
    """The providers this deployment polls (enabled, with what they need), in the installed catalog's order."""
    return sorted(n for n in provider_names() if setup is None or setup.get(n, "enabled") == "enabled")


def not_polled_reason(lang: str, state: str) -> str:
    """Why a provider is not polled here, in a few words: switched off, or a key the operator has not set."""
    return t(lang, "sub_provider_needs_key") if state.startswith("needs:") else t(lang, "sub_provider_off")


async def _ask_provider(target_message: Message, state: FSMContext, lang: str, edit: bool,
                        setup: dict[str, str] | None) -> None:
    """Only providers that are polled are offered; the others are shown greyed, with why (pressing one says so
    and the wizard stays at this step): a subscription to a provider nobody polls would never alert."""
    await state.set_state(Wizard.provider)
    names = polled(setup)
    idle = sorted((n for n in provider_names() if n not in names), key=lambda n: provider_title(n).lower())
    text = t(lang, "sub_ask_provider")
    greyed: list[tuple[str, str, str]] = []
    if idle and setup is not None:
        greyed = [(n, provider_title(n), not_polled_reason(lang, setup.get(n, "disabled"))) for n in idle]
        text += "\n" + t(lang, "sub_providers_idle", names=esc(", ".join(provider_title(n) for n in idle)))
    markup = keyboards.wizard_provider_keyboard(lang, [(n, provider_title(n)) for n in names], greyed)
    if edit:
        await target_message.edit_text(text, reply_markup=markup)
    else:
        await target_message.answer(text, reply_markup=markup)


async def _ask_basis(target_message: Message, state: FSMContext, price: float, lang: str, currency: str,
                     edit: bool) -> None:
    """A cap is a price per hour of the whole configuration or of each GPU: asked, never guessed."""
    await state.set_state(Wizard.basis)
    shown = money(price, currency, lang, exact=True)
    markup = keyboards.wizard_basis_keyboard(lang, shown)
    text = t(lang, "sub_ask_basis", price=shown)
    if edit:
        await target_message.edit_text(text, reply_markup=markup)
    else:
        await target_message.answer(text, reply_markup=markup)


@router.callback_query(Wizard.price, WizardPriceCb.filter())
async def chose_price(query: CallbackQuery, callback_data: WizardPriceCb, state: FSMContext, lang: str,
                      currency: str, provider_setup: dict[str, str] | None = None) -> None:
    await state.update_data(price=callback_data.price)
    await query.answer()
    if not isinstance(query.message, Message):
        return
    if callback_data.price is None:
        await _ask_provider(query.message, state, lang, edit=True, setup=provider_setup)
    else:
        await _ask_basis(query.message, state, callback_data.price, lang, currency, edit=True)


@router.callback_query(Wizard.basis, WizardBasisCb.filter())
async def chose_basis(query: CallbackQuery, callback_data: WizardBasisCb, state: FSMContext, lang: str,
                      provider_setup: dict[str, str] | None = None) -> None:
    await state.update_data(basis=callback_data.basis)
    await query.answer()
    if isinstance(query.message, Message):
        await _ask_provider(query.message, state, lang, edit=True, setup=provider_setup)


# A typed price: a number with an optional currency sign or word ("150", "150,5", "$2.5", "150 руб", "2 usd").
_TYPED_PRICE = re.compile(r"^\s*(?:\$|usd\s*)?(?P<sign>[-−–])?\s*(?P<n>\d[\d\s\u00a0\u202f]*(?:[.,]\d+)?)\s*"
                          r"(?:₽|руб\w*\.?|р\.?|rub\w*|\$|usd|dollars?|долл\w*)?\s*"
                          r"(?:/\s*(?:ч|час|h|hr|hour))?\s*$", re.IGNORECASE)


def read_price(text: str) -> tuple[float | None, str | None]:
    """(price, None), or (None, why): "negative", "too_large", "zero", "not_number"."""
    m = _TYPED_PRICE.match(text)
    if m is None:
        return None, "not_number"
    if m.group("sign"):
        return None, "negative"
    value = float(re.sub(r"[\s\u00a0\u202f]", "", m.group("n")).replace(",", "."))
    if value <= 0:
        return None, "zero"
    if not price_ok(value):
        return None, "too_large"
    return value, None


@router.message(Wizard.price, F.text)
async def typed_price(message: Message, state: FSMContext, lang: str, currency: str) -> None:
    """A price typed instead of a button: each wrong answer gets its own reason, the step is asked again."""
    price, problem = read_price(message.text or "")
    if price is None:
        await message.answer(t(lang, f"sub_bad_price_{problem}", high=money(MAX_PRICE, currency, lang)))
        return
    await state.update_data(price=price)
    await _ask_basis(message, state, price, lang, currency, edit=False)


@router.message(StateFilter(Wizard.kind, Wizard.basis, Wizard.provider), F.text)
async def typed_at_a_button_step(message: Message, lang: str) -> None:
    """Free text where the wizard asks for a button: say so (the step and its buttons stay as they are)."""
    await message.answer(t(lang, "sub_pick_button"))


@router.callback_query(Wizard.provider, WizardProviderCb.filter())
async def chose_provider(query: CallbackQuery, callback_data: WizardProviderCb, state: FSMContext,
                         session: AsyncSession, user: User, lang: str, estimator: Estimator,
                         offers: OfferCache, provider_setup: dict[str, str] | None = None) -> None:
    if callback_data.provider is not None and callback_data.provider not in provider_names():
        await query.answer(t(lang, "button_stale"))  # a forged provider: the wizard stays where it is
        return
    if callback_data.provider is not None and callback_data.provider not in polled(provider_setup):
        state_of = (provider_setup or {}).get(callback_data.provider, "disabled")
        await query.answer(t(lang, "sub_provider_not_polled", name=provider_title(callback_data.provider),
                             reason=not_polled_reason(lang, state_of)), show_alert=True)
        return  # greyed: nothing to watch there; the wizard stays at this step
    data = await state.get_data()
    await state.clear()
    await query.answer()
    req = parse_subscribe(str(data.get("target", "")))
    price = data.get("price")
    if isinstance(price, int | float) and price_ok(float(price)):
        req.max_price, req.price_currency, req.price_monthly = float(price), user.currency, False  # a button: per hour
        req.price_basis = "gpu" if data.get("basis") == "gpu" else "total"
    if callback_data.provider is not None:
        req.providers = [callback_data.provider]
    chat = query.message.chat if query.message is not None else None
    reply = await subscribe_request(session, user, req, lang=lang, estimator=estimator, cache=offers, chat=chat)
    if isinstance(query.message, Message):
        await query.message.edit_text(reply.text, reply_markup=reply.markup, disable_web_page_preview=True)
