"""The market at a glance: a Telegram Mini App (and plain web page) served by `gpuradar run`'s own web server.

api.py (the page and the public reads; `mount`) · writes.py (what acts for a signed-in user) · services.py (what the
routes share) · auth.py (initData) · guard.py (limits, security headers) · matrix.py · rows.py · estimate.py ·
history.py · subs.py · static/ (the page: HTML, CSS and vanilla JS, no build step, shipped in the wheel).
"""
