"""One router per feature. `routers()` gives them in the order the dispatcher must try them: the fallback that
answers anything not understood comes last."""

from __future__ import annotations

from aiogram import Router


def routers(admin_ids: frozenset[int]) -> list[Router]:
    from bot.handlers import (
        admin,
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
    )

    return [start.router, admin.make_router(admin_ids), subscribe.router, estimate.router, offers.router, subs.router,
            history.router, providers.router, user_settings.router, inline.router, fallback.router]
