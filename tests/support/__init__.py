"""Test helpers only the tests use (the README transcript, the Hub stand-in, the migration killer). What the
benches use too lives in `testkit/`.

The stand-ins moved to `testkit/` from here: code written against their old names (`tests.support.fake_telegram`,
`.provider_server`, `.waiting`) still imports them, as the same modules. New code imports `testkit.…`.
"""

import sys as _sys

from testkit import fake_telegram as _fake_telegram
from testkit import provider_server as _provider_server
from testkit import waiting as _waiting

for _module in (_fake_telegram, _provider_server, _waiting):
    _sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module
