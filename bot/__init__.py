"""The Telegram bot: aiogram 3 routers, texts in Russian and English, the alert sender."""
