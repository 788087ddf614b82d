"""The Telegram bot: aiogram 3 routers, texts in Russian and English, the alert sender."""

from bot.lazy_aiogram import install as _defer_aiogram_type_builds

_defer_aiogram_type_builds()  # before anything imports aiogram: see bot/lazy_aiogram.py
