"""The command line and the wiring of the running application: the one place that joins core, scrapers, bot."""

from bot.lazy_aiogram import install as _defer_aiogram_type_builds

_defer_aiogram_type_builds()  # before gpuradar.app imports aiogram: see bot/lazy_aiogram.py

# The provider catalog core and the bot read (names, spellings, VAT terms) comes from the providers' own definitions
# (scrapers.registry); core never imports scrapers, the wiring hands it over here (see docs/providers.md).
from core.providers import ProviderCatalog as _ProviderCatalog  # noqa: E402
from core.providers import install as _install_provider_catalog  # noqa: E402


def _provider_catalog() -> _ProviderCatalog:
    from scrapers.registry import catalog

    return catalog()


_install_provider_catalog(_provider_catalog)  # built on first read
