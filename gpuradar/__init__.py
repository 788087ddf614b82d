"""The command line and the wiring of the running application: the one place that joins core, scrapers, bot."""

from bot.lazy_aiogram import install as _defer_aiogram_type_builds

_defer_aiogram_type_builds()  # before gpuradar.app imports aiogram: see bot/lazy_aiogram.py
