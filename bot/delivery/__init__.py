"""The parts of the alert sender (`bot.sender.AlertSender` composes them), one job each:

- `claims`    which deliveries this sender may send while several replicas share one outbox (claims with expiry,
              renewal, take-over of dead senders' deliveries);
- `planning`  which users are due and what they hear: quiet hours, blocked users, the digest of their unheard
              events turned into deliveries written in one transaction with the cursors;
- `rendering` an event into the text and buttons of a message, per language and currency;
- `jobs`      the messages waiting in memory, handed out chat by chat as Telegram's per-chat limit allows;
- `policy`    what each Telegram error means for a delivery (the table that retry behaviour is changed in).
"""
