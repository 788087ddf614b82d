"""Build aiogram's Bot API type and method schemas when they are first used, not all of them when aiogram is imported.

aiogram declares its ~300 Telegram types with pydantic's `defer_build=True`, then ends `aiogram/types/__init__.py`
with a loop calling `model_rebuild(_types_namespace=...)` on every one of them, which builds every validator and
serializer at once (aiogram issue #1513, "High memory consumption due to importing any object from aiogram"). A
running bot validates a handful of them (Update, Message, InlineQuery, CallbackQuery and what our replies send). The
eager build cost this process about 110 MB of RSS and 3 s of start-up (bench/memory.py: aiogram 3.31, pydantic 2.13).
Its ~190 API methods (`TelegramMethod` models, no `defer_build`) are built as each class is defined: another ~26 MB.

`install()` makes that one loop record the namespace instead of building: each aiogram type module gets the names
its annotations refer to (the ones aiogram imports only under TYPE_CHECKING), so pydantic's own deferred build
resolves them whenever and wherever a type is first validated, exactly as the eager rebuild would have. Every other
`model_rebuild` call, and this one once aiogram is imported, behaves as pydantic's own. For the methods, the moment
`aiogram.methods.base` has defined `TelegramMethod`, its config gains `defer_build=True`, which every method class
inherits (their modules import the types they name, so nothing else is needed). Verified by
tests/bot/test_lazy_aiogram.py (every aiogram type and method still builds and validates; the deferral is in effect in
the bot) and by every end-to-end test, which runs the bot through this path.

This is the project's one patch of a library (aiogram's `TelegramObject.model_rebuild`, its types' base class,
never pydantic's own `BaseModel`), and it relies on two things no public API promises: aiogram's import loop
passing `_types_namespace`, and pydantic's `model_rebuild` keywords. So it is applied only to the versions it was
checked on (`CHECKED`: the lower bounds are pyproject's, the upper ones the newest minor release the suite passed on);
on any other version nothing is patched and aiogram builds its types eagerly as it does on its own (slower start,
more memory, the same behaviour), and tests/bot/test_lazy_aiogram.py fails loudly until the new version is checked and
added.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

from pydantic import BaseModel

_installed = False  # once per process
# (first, after last) minor version the mechanism was verified on, per distribution.
CHECKED: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "aiogram": ((3, 13), (3, 32)),
    "pydantic": ((2, 7), (2, 15)),
}


def checked_versions() -> bool:
    """Whether the installed aiogram and pydantic are versions this deferral was verified on."""
    for dist, (first, after) in CHECKED.items():
        try:
            parts = version(dist).split(".")
            minor = (int(parts[0]), int(parts[1]))
        except (PackageNotFoundError, ValueError, IndexError):
            return False
        if not first <= minor < after:
            return False
    return True


def install() -> None:
    """Defer aiogram's type builds; a no-op when aiogram.types is already imported (the work is done by then) and
    on versions the mechanism was not checked on (see the module's docstring)."""
    global _installed
    if _installed or "aiogram.types" in sys.modules or not checked_versions():
        return
    _installed = True
    pending: dict[str, Callable[[ModuleType], None]] = {}
    if "aiogram.types.base" not in sys.modules:
        pending["aiogram.types.base"] = _defer_type_rebuilds
    if "aiogram.methods.base" not in sys.modules:
        pending["aiogram.methods.base"] = _defer_method_builds
    if pending:
        sys.meta_path.insert(0, _AfterImport(pending))


def _defer_type_rebuilds(module: ModuleType) -> None:
    """aiogram's own base class of the Telegram types (not pydantic's BaseModel) gets a `model_rebuild` that, during
    aiogram.types' import loop, records the namespace instead of building; at any other time it is pydantic's."""
    pydantic_rebuild = BaseModel.__dict__["model_rebuild"].__func__

    def model_rebuild(cls: type[BaseModel], *, force: bool = False, raise_errors: bool = True,
                      _parent_namespace_depth: int = 2, _types_namespace: dict[str, Any] | None = None) -> bool | None:
        types_module = sys.modules.get(cls.__module__)
        if (_types_namespace is not None and not force and types_module is not None
                and cls.__module__.startswith("aiogram.types.") and _in_aiogram_import_loop()):
            names = vars(types_module)
            for name, value in _types_namespace.items():
                names.setdefault(name, value)
            return None  # still incomplete: pydantic builds it on first use (defer_build)
        return pydantic_rebuild(cls, force=force, raise_errors=raise_errors,
                                _parent_namespace_depth=_parent_namespace_depth, _types_namespace=_types_namespace)

    module.TelegramObject.model_rebuild = classmethod(model_rebuild)


def _defer_method_builds(module: ModuleType) -> None:
    """`TelegramMethod` defers the build of every method class defined after it."""
    module.TelegramMethod.model_config["defer_build"] = True


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a function on each of a few aiogram modules right after the module is executed, once."""

    def __init__(self, pending: dict[str, Callable[[ModuleType], None]]) -> None:
        self.pending = pending

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        after = self.pending.pop(fullname, None)
        if after is None:
            return None
        if not self.pending:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            after(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _in_aiogram_import_loop() -> bool:
    """Whether aiogram.types' own import is running its rebuild loop (`_types_namespace` is deleted after it)."""
    return hasattr(sys.modules.get("aiogram.types"), "_types_namespace")
