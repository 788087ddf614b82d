"""One short module per provider: `async fetch(client, settings) -> payload` and a pure
`parse(payload, settings=None) -> list[Offer]` (gpuhunt style: parsing is tested without any network)."""
