"""Provider pollers: one module per provider (fetch + pure parse), a shared polite HTTP client, the scheduler."""
