"""Shared pytest fixtures. Keep this file small: fixtures live in tests/support/ and are registered here."""

# `provider_server`: a stand-in for the providers' APIs on 127.0.0.1 (tests/support/provider_server.py).
pytest_plugins = ["tests.support.provider_server"]
