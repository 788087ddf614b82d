"""The default database address, importable without SQLAlchemy (the settings read it; CLI start-up stays light)."""

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///gpuradar.sqlite3"
