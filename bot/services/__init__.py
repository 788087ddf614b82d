"""What a user's action changes, one service per subject, each owning its transaction: it writes through the
repository (`storage.subscriptions`) and commits before the handler tells the user it is done, so "saved" is never
said of something a later failure could roll back. Handlers parse, call a service, and answer; they never commit.

- `settings`       language, currency, quiet hours, time zone, alert grouping (and the process's memory of them);
- `subscriptions`  pausing, resuming, deleting a subscription, and where its alerts go.

Creating a subscription from text is `bot.subscribing` (it also says what matches now).
"""
