"""/start (with `sub_<token>` deep links that subscribe in one tap) and /help."""

from __future__ import annotations

from aiogram import Bot, Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot import keyboards
from bot.callbacks import MenuCb
from bot.estimates import Estimator
from bot.formatting import MAX_INPUT, cut_input
from bot.handlers.subs import render_subs
from bot.market_button import set_chat_menu
from bot.offer_cache import OfferCache
from bot.subscribing import subscribe_text
from bot.texts import examples, t
from bot.tokens import QueryTokens
from core.providers import provider_info, provider_title
from storage.user_tables import User

router = Router(name="start")


def start_text(lang: str, provider_names: list[str]) -> str:
    """The welcome, naming the providers actually watched for stock (display names from the one catalog); a
    price-only source (`stock_known` False: a hyperscaler's price list) alerts nobody, so it is not named here."""
    names = [provider_title(n) for n in provider_names if provider_info(n).stock_known] or ["—"]
    joined = names[0] if len(names) == 1 else t(lang, "list_and", head=", ".join(names[:-1]), last=names[-1])
    return t(lang, "start", providers=joined)



async def start_keyboard(lang: str, tokens: QueryTokens) -> InlineKeyboardMarkup:
    """The examples as buttons (each answers with its estimate), "My subscriptions" and "Language"."""
    return keyboards.start_keyboard(lang, [(ex, await tokens.stored(ex)) for ex in examples(lang)])


DEEP_LINK_PREFIX = "sub_"
# Telegram carries at most 64 characters of a start parameter; a typed "/start sub_…" can be longer. Allow the
# base64 of a full MAX_INPUT-character text (4 characters per 3 bytes, up to 4 bytes a character) and no more.
MAX_TOKEN_CHARS = 1 + (MAX_INPUT * 4 * 4 + 2) // 3


@router.message(CommandStart(deep_link=True), flags={"rate": "deep_link"})
async def start_deep_link(message: Message, command: CommandObject, session: AsyncSession, user: User, lang: str,
                          estimator: Estimator, offers: OfferCache, tokens: QueryTokens,
                          provider_names: list[str], bot: Bot, webapp_url: str | None = None) -> None:
    await set_chat_menu(bot, webapp_url, message.chat, lang)  # the market button in this user's language
    payload = command.args or ""
    token = payload[len(DEEP_LINK_PREFIX):] if payload.startswith(DEEP_LINK_PREFIX) else None
    query = await tokens.resolve(token) if token and len(token) <= MAX_TOKEN_CHARS else None
    if query is not None:
        # The same input limit as every other entry: a typed "/start sub_<very long base64>" is cut, with a note.
        query, cut = cut_input(query)
    if not query:  # unknown, forged, or nothing readable left (never echoed)
        await message.answer(start_text(lang, provider_names), reply_markup=await start_keyboard(lang, tokens))
        if payload.startswith(DEEP_LINK_PREFIX):
            await message.answer(t(lang, "deep_link_bad"))
        return
    if cut:
        await message.answer(t(lang, "input_cut", limit=MAX_INPUT))
    reply = await subscribe_text(session, user, query, lang=lang, estimator=estimator, cache=offers,
                                 chat=message.chat)
    await message.answer(reply.text, reply_markup=reply.markup, disable_web_page_preview=True)


@router.message(CommandStart())
async def start(message: Message, lang: str, provider_names: list[str], tokens: QueryTokens, bot: Bot,
                webapp_url: str | None = None) -> None:
    await message.answer(start_text(lang, provider_names), reply_markup=await start_keyboard(lang, tokens))
    await set_chat_menu(bot, webapp_url, message.chat, lang)  # the market button in this user's language


@router.callback_query(MenuCb.filter())
async def menu(query: CallbackQuery, callback_data: MenuCb, session: AsyncSession, user: User, lang: str) -> None:
    """"My subscriptions" answers with /subs; "Language" with the language chooser (the welcome stays)."""
    await query.answer()
    if not isinstance(query.message, Message):
        return
    if callback_data.what == "subs":
        text, kb = await render_subs(session, user, lang)
        await query.message.answer(text, reply_markup=kb, disable_web_page_preview=True)
    else:
        await query.message.answer(t(lang, "lang_choose"), reply_markup=keyboards.language_keyboard())


@router.message(Command("help"))
async def help_(message: Message, lang: str, bot_username: str) -> None:
    sample = " · ".join(f"<code>{e}</code>" for e in examples(lang))
    await message.answer(t(lang, "help", examples=sample, bot=bot_username))
