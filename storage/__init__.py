"""Persistence shared by the scrapers and the bot: SQLAlchemy 2 models, sessions, Alembic migrations."""
