# Bounds, abuse and privacy (issue 13): pages of /subs, alerts in a group by choice, stale buttons, input limits,
# rate limits.
subs_page = — page { $page }/{ $pages }
subs_in_group = {" "}👥 alerts to a group
sub_group_note = 🔒 Alerts for this subscription will come to your private chat with me (open it and press Start if you have not yet). To get them in this group instead, tap the button.
btn_alerts_here = 🔔 Send its alerts to this group
alerts_here_done = Done: alerts for this subscription will be posted in this group.
button_stale = This button is out of date. Send the command again.
sub_bad_count = The number of GPUs must be between { $low } and { $high }.
sub_bad_price_cap = The price cap must be above 0 and at most { $high } per GPU-hour.
rate_limited = ⏳ Too many requests in a row. Please try again in { $seconds } { $seconds ->
        [one] second
       *[other] seconds
    }.
