# Availability statistics (storage/availability.py, bot/availability_view.py): durations, the alert line, marks, /when.
avail_minutes = { $n ->
    [one] { $n } minute
   *[other] { $n } minutes
}
avail_hours = { $n ->
    [one] { $n } hour
   *[other] { $n } hours
}
avail_days = { $n ->
    [one] { $n } day
   *[other] { $n } days
}
avail_alert_short = ⏱ Last 7 days: appeared { $n ->
    [one] { $n } time
   *[other] { $n } times
}, lasted a median { $stay } — book now
avail_alert_normal = ⏱ Last 7 days: appeared { $n ->
    [one] { $n } time
   *[other] { $n } times
}, lasted a median { $stay }
avail_alert_long = ⏱ Usually stays for days
avail_mark_short = ⚡
avail_mark_legend = ⚡ — usually gone within the hour
when_usage = Name a GPU or a workload, optionally with a price cap, e.g. <code>/when H100 under $2.5</code> or <code>/when 70B QLoRA under 250 ₽</code>.
when_unknown = I don’t know the GPU or workload “{ $text }”. Try e.g. <code>/when H100</code> or <code>/when 13B LoRA</code>.
when_nothing_fits = No GPU configuration fits “{ $text }”.
when_no_history = No availability history for { $what } yet: the bot has not seen it at any provider it watches.
when_what_gpu = { $gpu } × { $count }
when_what_workload = a configuration that fits { $workload }
when_under = {" "}under { $cap }/GPU-hour
when_under_whole = {" "}under { $cap }/hour for the whole configuration
when_under_month = {" "}under { $cap } per GPU per month
when_under_whole_month = {" "}under { $cap }/month for the whole configuration
when_filters = {" "}({ $filters })
when_share = In the last { $days ->
    [one] { $days } day
   *[other] { $days } days
} { $what } was in stock { $share } of the time
when_share_thin = In the { $observed } observed so far { $what } was in stock { $share } of the time
when_comeback = after selling out it came back within a median { $gap }
when_stay = it usually stayed a median { $stay }
when_now_out = right now: sold out for { $since }
when_now_out_atleast = right now: sold out for at least { $since }
when_now_in = right now: in stock for { $since }, from { $price }/GPU-hour
when_now_in_atleast = right now: in stock for at least { $since }, from { $price }/GPU-hour
when_now_unknown = right now: no fresh poll of its providers
when_providers = Providers: { $names }
stats_header = { $days }-day availability: in stock · appeared · median / p90 stay · median comeback · price now / min / median · trend
trend_cheaper = cheaper
trend_steady = steady
trend_dearer = dearer
cmd_when = When is a GPU usually in stock
cli_stats_help = Availability statistics per offer group: share of time in stock, appearances, how long it stays, how soon it comes back, prices and trend
cli_stats_bad_days = --days must be between 1 and { $high }.
cli_stats_none = No availability history matches.
cli_stats_title = Last { $days ->
        [one] { $days } day
       *[other] { $days } days
    }, prices per GPU-hour in { $currency } (now/min/median), trend against the 7-day median:
cli_stats_headers = provider|card|GPUs|region|billing|in stock|appeared|stay median/p90 (n)|comeback|now|price|trend|observed
# a table cell's duration: $n comes formatted in the language's number style
cli_stats_minutes = { $n }m
cli_stats_hours = { $n }h
cli_stats_days = { $n }d
cli_export_help = Open data: offer snapshots and change events since a time, streamed as CSV or JSON lines (schema: docs/open-data.md)
cli_export_bad_since = --since takes a duration such as 30d, 12h or 2w.
cli_export_parquet_out = Parquet is a binary file: give it one with --out FILE.
cli_export_no_parquet = Parquet export needs pyarrow: pip install 'gpuradar[parquet]'.
cli_export_done = { $n ->
    [one] { $n } row
   *[other] { $n } rows
} written to { $out }.
history_strip_title = Availability by provider (blank: not observed)
history_strip_in = in stock
history_strip_out = sold out
history_strip_share_of = { $share } (observed { $observed })
history_strip_line = In stock over the last { $days ->
    [one] { $days } day
   *[other] { $days } days
} (share of the observed time): { $shares }
