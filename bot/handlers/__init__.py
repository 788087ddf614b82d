"""One router per feature. `routers()` gives them in the order the dispatcher must try them: the fallback that
answers anything not understood comes last."""

from __future__ import annotations

from aiogram import Router


def _fresh(router: Router) -> Router:
    """A copy of a module-level feature router for one dispatcher. aiogram attaches a router to a single parent,
    while tests and benches build several dispatchers in one process. Copies the registered handlers; feature
    routers therefore keep their filters on the handlers (the admin router, which filters the whole router, is
    built per call instead)."""
    copy = Router(name=router.name)
    for event, observer in router.observers.items():
        copy.observers[event].handlers.extend(observer.handlers)
    return copy


def routers(admin_ids: frozenset[int]) -> list[Router]:
    from bot.handlers import (
        admin,
        alerts,
        estimate,
        fallback,
        history,
        inline,
        offers,
        providers,
        start,
        subs,
        subscribe,
        user_settings,
        when,
    )

    features = [start.router, subscribe.router, estimate.router, offers.router, subs.router, history.router,
                providers.router, user_settings.router, inline.router, alerts.router, when.router]
    return [_fresh(features[0]), admin.make_router(admin_ids), *(_fresh(r) for r in features[1:]),
            _fresh(fallback.router)]
