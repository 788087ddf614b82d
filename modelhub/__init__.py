"""Model lookup on the Hugging Face Hub: a model the catalog lacks, read from its repository.

Not a GPU provider (those are `scrapers/`): a front end asks for it through `core.hub.ArchLookup`, and `gpuradar/`
wires a `HubResolver` with the database cache (`storage.hub_cache.HubCacheStore`) into the bot and the CLI.

    settings.py   HubSettings: endpoint, token, timeouts, body caps, the global concurrency cap
    client.py     fetch_arch: one bounded lookup (two GETs), no cache
    resolver.py   HubResolver: in-process and shared caches, one request per name, every failure a HubError
"""

from modelhub.client import fetch_arch
from modelhub.resolver import HubCache, HubResolver
from modelhub.settings import DEFAULT_ENDPOINT, HubSettings

__all__ = ["DEFAULT_ENDPOINT", "HubCache", "HubResolver", "HubSettings", "fetch_arch"]
