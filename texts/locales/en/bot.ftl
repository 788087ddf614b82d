start =
    👋 <b>GPU Radar</b> tells you how much VRAM an LLM job needs, which GPUs fit it, and where they can be rented right now.
    It watches { $providers }, and alerts you when a fitting GPU appears or gets cheaper.
    Try: <code>/estimate 70B QLoRA ctx 8k</code>, then <code>/subscribe 13B LoRA under $2/h</code>.

    More: /help
help =
    <b>What I understand</b>
    /estimate &lt;workload&gt; [filters as for /subscribe] — VRAM, GPUs that fit, cheapest offers
    /offers [GPU or workload] [filters as for /subscribe] — offers in stock, cheapest first
    /subscribe &lt;workload or GPU&gt; [under 300 ₽/h] [on runpod] [x8] [hourly|monthly] [region eu]
    /subs — your subscriptions · /unsubscribe
    /when &lt;GPU or workload&gt; [filters] — how often it is in stock and how long it stays; or just ask: <code>how long does an H100 stay in stock?</code>
    /history &lt;GPU&gt; [filters] [7d] — price chart · /providers — who is watched
    /settings — currency, quiet hours, grouping · /lang — language

    Examples: { $examples }
    Preference tuning too: <code>8B LoRA DPO</code>, ORPO, KTO, SimPO.
    Inline: type <code>@{ $bot } 70B QLoRA</code> or <code>@{ $bot } H100 x8</code> in any chat.
unknown =
    Sorry, I did not understand that. Send a workload or a command, for example:
    { $examples }

    All commands: /help
unknown_command = I do not know that command. All commands: /help
input_cut = ✂️ Your message was long: I read its first { $limit } { $limit ->
        [one] character
       *[other] characters
    }.
error = Something went wrong on my side; please try again in a minute.
estimate_usage = Tell me the workload after the command (<code>/estimate 13B LoRA</code>), or tap an example:
est_header = 🧮 <b>{ $workload }</b>
est_vram = VRAM per GPU: <b>{ $per_gpu } GiB</b> (recommended { $recommended } GiB, with a safety margin)
est_vram_total = VRAM in all: <b>{ $total } GiB</b> on one device (recommended { $recommended } GiB, with a safety margin); no single GPU holds it
est_vram_total_named = VRAM in all: <b>{ $total } GiB</b> on one device (recommended { $recommended } GiB, with a safety margin); no single { $cards } holds it
est_vram_first_fit = Per GPU on the first configuration that fits, { $gpu } × { $count }: <b>{ $per_gpu } GiB</b>
est_cpu_ram = CPU RAM for offload: { $gib } GiB
est_breakdown = Breakdown: { $items }
bd_weights = weights
bd_trainable_states = gradients + optimizer
bd_activations = activations
bd_logits = logits
bd_kv_cache = KV cache
bd_overhead = overhead
est_assumptions = Assumed: { $items }
est_fits_title = <b>Fits</b> (memory per GPU / usable):
est_fit_line = • { $gpu } × { $count }: { $per_gpu } / { $usable } GiB ({ $util }%)
est_fits_more = …and { $n } more { $n ->
        [one] configuration
       *[other] configurations
    }
est_no_fit = Nothing fits in one node of up to 8 GPUs.
est_no_fit_count = Nothing fits on { $count } { $count ->
        [one] GPU
       *[other] GPUs
    } of any card, the count asked for.
est_no_fit_named = Nothing fits on { $where }, the configuration asked for.
est_no_fit_named_any = Nothing fits on { $cards }, even 8 to a server.
est_remedies_title = <b>Try:</b>
est_remedy_line = • { $change }: { $per_gpu } GiB per GPU, fits on { $gpu } × { $count }
est_remedy_line_nofit = • { $change }: { $per_gpu } GiB per GPU, still more than any card holds
query_with_changes = { $query }, with { $changes }
est_changed = 🛠 Re-estimated with: { $changes }
est_changed_from = Changed: { $items }
btn_remedy_offload_optimizer = 🛠 Offload optimizer
btn_remedy_offload_all = 🛠 Offload all to CPU
btn_remedy_fused_ce = 🛠 Fused cross-entropy
btn_remedy_micro_batch_1 = 🛠 Micro-batch 1
btn_remedy_qlora = 🛠 QLoRA
btn_remedy_shorter_context = 🛠 Half the context
btn_remedy_fp8 = 🛠 FP8 weights
btn_remedy_precompute_ref = 🛠 Precompute reference
btn_remedy_int4 = 🛠 INT4 weights
btn_remedy_zero3_more_cards = 🛠 ZeRO-3 on more cards
est_offers_title = <b>Cheapest in stock now</b> (whole configuration, per hour · per month):
est_no_keeping = No configuration keeps up with that target, at any number of cards. Ask for fewer requests, a slower answer or a shorter prompt.
est_no_offers = No fitting offer is in stock right now. Tap “Notify me” and I will write when one appears.
est_no_offers_count = No configuration of { $count } { $count ->
        [one] GPU
       *[other] GPUs
    } holds this workload, so no offer can pass these filters.
est_filters_said = Only offers you asked for: { $filters }.
est_time_title = <b>Time</b> for { $tokens } training { $tokens ->
        [one] token
       *[other] tokens
    }:
est_time_title_pairs = <b>Time</b> for { $tokens } training { $tokens ->
        [one] token
       *[other] tokens
    }, both answers of { $pairs } { $pairs ->
        [one] pair
       *[other] pairs
    }:
est_time_line = • { $gpu } × { $count }: ~{ $hours } h{ $cost }
est_time_cost = , ~{ $cost } at the cheapest offer
offer_line = • { $provider }: { $what }{ $location } — <b>{ $per_hour }</b>/h · { $per_month }/mo{ $extra } · { $link }
offer_link = <a href="{ $url }">order</a>
offer_nolink = no link
btn_assumptions = 📋 Assumptions
btn_assumptions_hide = 📋 Hide assumptions
btn_notify = 🔔 Notify me when it is available
btn_more_offers = More offers ›
offers_title = <b>In stock{ $filter }</b>, cheapest configuration first — page { $page }/{ $pages }:
offers_filter = {" "}for { $what }
offers_none = No offers in stock{ $filter } right now. /subscribe and I will tell you when one appears.
listed_title = <b>Listed prices (availability unknown)</b>, from the clouds' public price lists — whole configuration, per hour · per month:
btn_prev = ‹ Back
btn_next = Next ›
unknown_gpu = I do not know a GPU called “{ $name }”. Try, for example: H100, A100 80GB, RTX 4090, L40S.
sub_ask_kind = What should I watch for you?
btn_kind_workload = A workload (e.g. 13B LoRA)
btn_kind_gpu = A GPU model
sub_ask_workload =
    Send the workload, for example:
    { $examples }
sub_ask_gpu = Choose a GPU or send its name:
sub_ask_price = Highest price per hour, in { $currency }? On the next step: for the whole configuration or per GPU.
sub_ask_basis = Is { $price }/h the price of the whole configuration or of each GPU?
btn_basis_total = { $price }/h for the whole configuration
btn_basis_gpu = { $price } per GPU-hour
btn_any_price = Any price
sub_ask_provider = Which providers?
btn_any_provider = All providers
btn_provider_idle = ⚪ { $name } · { $reason }
sub_providers_idle = <i>Not polled here, so not offered: { $names }.</i>
sub_provider_off = switched off
sub_provider_needs_key = needs an API key
sub_provider_not_polled = { $name } is not polled on this bot ({ $reason }): nothing from it would ever reach you. Pick another provider.
btn_cancel = Cancel
sub_cancelled = Cancelled. Nothing was changed.
sub_bad_price = Send a number such as 300 or 2.5, or tap a button.
sub_bad_price_not_number = That is not a price. Send a number such as 300 or 2.5 (a currency sign is fine), or tap a button.
sub_bad_price_negative = A price cap cannot be negative. Send a positive number such as 300 or 2.5, or tap a button.
sub_bad_price_zero = A cap of zero would never match anything. Send a positive number such as 300 or 2.5, or tap a button.
sub_bad_price_too_large = That is more than any offer costs (at most { $high }). Send a smaller number, or tap a button.
sub_pick_button = Please tap one of the buttons above (or /cancel).
sub_saved =
    ✅ Now watching: { $what }{ $filters }.
    Subscriptions: { $n } of { $limit }. Manage them with /subs.
sub_keeping_cards = ; on the cards that keep up with the target: { $cards }
sub_target_none = No card keeps up with that target on any GPU count that holds the workload, so no offer could ever be alerted. Ask for fewer requests, a slower answer or a shorter prompt, or estimate one replica with «N users».
sub_fit_none = No { $cards } × { $count } holds this workload, so no offer could ever be alerted; nothing was stored.
sub_fit_none_any = No { $cards } holds this workload, even 8 to a server, so no offer could ever be alerted; nothing was stored.
sub_fit_any_card = GPU
sub_fit_from = It fits on { $count } { $count ->
        [one] such GPU
       *[other] such GPUs
    }: ask for that many, or leave the count out.
sub_fit_never = Up to 8 of them do not hold it either: /estimate shows changes that would fit (QLoRA, offloading to CPU).
sub_keeping_more = {" "}and { $n } more
sub_exists = ℹ️ You already watch this: { $what }{ $filters }.
sub_matches_now = <b>Already matching now:</b>
sub_not_polled = ⚠️ This bot does not poll { $providers }, so nothing from there will reach you. Pick a provider from /providers, or pause this one in /subs.
sub_no_matches_now = Nothing matches right now; I will write as soon as something does.
sub_limit = You already have { $limit } { $limit ->
        [one] subscription
       *[other] subscriptions
    }, the maximum. Delete one in /subs first.
sub_need_gib = needs { $gib } GiB per GPU
sub_need_gib_on = needs { $gib } GiB per GPU on { $count } GPUs
sub_need_none = fits no single GPU; watching multi-GPU configurations
sub_need_gib_from = one such card cannot hold it: needs { $gib } GiB per GPU on { $count } { $count ->
        [one] GPU
       *[other] GPUs
    } or more
f_price = {" "}· up to { $price }/h for the whole configuration
f_price_gpu = {" "}· up to { $price }/GPU-h
f_price_month = {" "}· up to { $price }/month for the whole configuration
f_price_gpu_month = {" "}· up to { $price } per GPU per month
# the words of a suggested /subscribe command (bot/subscribe_query.py reads them back in either language)
sub_cmd_providers = on { $providers }
sub_cmd_region = region { $region }
sub_respelled = To watch it, send <code>/subscribe { $command }</code>.
sub_cap_total = 💰 Cap read as { $price }/h for the whole configuration, whatever the number of GPUs. Meant { $price } per GPU-hour? Send <code>/subscribe { $query } under { $price }/GPU-h</code>.
sub_cap_gpu = 💰 Cap read as { $price } per GPU-hour: a configuration × { $n } GPU may cost up to { $total }/h. Meant { $price }/h for the whole configuration? Send <code>/subscribe { $query } under { $price }/h</code>.
sub_cap_total_month = 💰 Cap read as { $price }/month for the whole configuration, whatever the number of GPUs. Meant { $price } per GPU per month? Send <code>/subscribe { $query } under { $price }/month per GPU</code>.
sub_cap_gpu_month = 💰 Cap read as { $price } per GPU per month: a configuration × { $n } GPU may cost up to { $total }/month. Meant { $price }/month for the whole configuration? Send <code>/subscribe { $query } under { $price }/month</code>.
f_providers = {" "}· on { $providers }
f_count = {" "}· × { $count } { $count ->
        [one] GPU
       *[other] GPUs
    }
f_billing = {" "}· { $billing }
f_region = {" "}· region { $region }
billing_hourly = hourly
billing_monthly = monthly
billing_spot = spot
deep_link_bad = This link is broken or has expired. Send /subscribe with the workload instead.
subs_empty = You have no subscriptions. Try <code>/subscribe 13B LoRA</code> or <code>/subscribe H100</code>.
subs_title = <b>Your subscriptions</b> ({ $n } of { $limit }):
subs_line = { $n }. { $what }{ $filters }{ $paused }
subs_paused = {" "}⏸ paused
btn_pause = ⏸ { $n }
btn_resume = ▶️ { $n }
btn_delete = 🗑 { $n }
sub_paused = Paused.
sub_resumed = Resumed.
sub_deleted = Deleted.
sub_not_found = That subscription no longer exists.
unsub_no_such = There is no subscription { $n }. Your subscriptions are numbered as below.
unsub_no_such_none = There is no subscription { $n }: you have no subscriptions.
unsub_usage = Send <code>/unsubscribe N</code> (the number from /subs) or <code>/unsubscribe all</code>.
unsub_done = Subscription { $n } deleted.
unsub_all_done = { $n ->
        [one] Deleted { $n } subscription, none left.
       *[other] All { $n } subscriptions deleted.
    }
history_no_cap = A price chart shows every price, so it takes no price cap. For how often one under your cap was in stock, ask <code>/when { $text }</code>.
history_usage = Name a GPU, for example <code>/history H100</code>, optionally with filters and a period: <code>/history H100 x8 on runpod 7d</code>.
history_empty = No price history for { $gpu } yet.
history_slow = The { $gpu } chart is taking too long to draw. Please try again in a minute, or ask for a shorter period, e.g. <code>/history { $gpu } 7d</code>.
history_caption = { $gpu }: cheapest in-stock price per GPU-hour by provider, { $currency }
chart_y = { $currency } per GPU-hour
chart_x = date (UTC)
providers_title = <b>Providers</b>:
provider_ok = ✅ { $name } — last success { $when }
provider_degraded = ⚠️ { $name } — degraded since { $since }: { $reason }; last success { $when }
provider_unknown = ⏳ { $name } — not polled yet
vat_note = <i>Prices include Russian VAT ({ $rate }%) where the seller charges it; foreign marketplaces charge none.</i>
provider_needs_key = 🔑 { $name } — needs an API key: set { $settings }
provider_off = ⏸ { $name } — switched off
provider_unknown_gpu = ❓ { $count ->
        [one] { $count } offer
       *[other] { $count } offers
    } with unknown GPU <code>{ $name }</code>
never = never
settings_title =
    <b>Settings</b>
    Currency: { $currency }
    Quiet hours: { $quiet } (your time, UTC{ $tz })
    Alert grouping: { $grouping }

    Quiet hours: <code>/settings quiet 23-8</code> or <code>/settings quiet off</code>.
    Time zone: <code>/settings tz +5</code> or <code>/settings tz Novosibirsk</code>.
quiet_off = off
quiet_range = { $start }:00–{ $end }:00
on = on
off = off
settings_saved = Saved.
quiet_bad = Send quiet hours as two hours, e.g. <code>/settings quiet 23-8</code>, or <code>/settings quiet off</code>.
quiet_bad_hours = Hours are 0-23: “{ $given }” has one outside that. For example <code>/settings quiet 23-8</code>.
settings_use_lang = The language is not a /settings setting: use /lang (for example <code>/lang en</code>).
settings_unknown = Unknown setting “{ $given }”. /settings knows <code>quiet 23-8</code>, <code>quiet off</code> and <code>tz +3</code>; the language is /lang, the currency is the button below /settings.
btn_my_subs = 📋 My subscriptions
btn_language = 🌐 Language
lang_choose = Choose the language:
lang_set = Language: English.
admin_stats =
    Users: { $users } ({ $active_users } active)
    Subscriptions: { $subscriptions } ({ $active_subscriptions } active)
    In-stock offers cached: { $offers }
admin_testalert = 🔔 Test alert: the alert path to this chat works.
admin_degraded = ⚠️ Provider { $name } has been degraded for { $minutes } { $minutes ->
        [one] minute
       *[other] minutes
    }: { $reason }
inline_example_title = { $example }
inline_example_desc = Type a workload: model size, method, context…
inline_syntax_title = I could not read “{ $query }”
inline_syntax_desc = Examples: 13B LoRA · 70B QLoRA ctx 8k · Qwen2.5-72B inference 32k
inline_est_title = { $workload }: { $per_gpu } GiB per GPU
inline_est_title_total = { $workload }: { $per_gpu } GiB in all
inline_est_desc = Fits: { $fits }
inline_offer_title = { $what } — { $per_hour }/h at { $provider }{ $spot }
inline_offer_desc = { $per_month }/mo{ $location } · fits { $workload }
inline_card_offer_desc = { $per_month }/mo{ $location }
inline_cards_header = <b>{ $what }</b>, in stock now:
inline_cards_none_title = No { $what } in stock right now
inline_cards_none_desc = The button under the message watches it for you
btn_subscribe = 🔔 Subscribe
cmd_start = What the bot does
cmd_estimate = VRAM and GPUs for a workload
cmd_offers = Offers in stock, cheapest first
cmd_subscribe = Watch a workload or a GPU
cmd_subs = Your subscriptions
cmd_unsubscribe = Delete subscriptions
cmd_history = Price chart of a GPU
cmd_providers = Watched providers and their health
cmd_settings = Currency, quiet hours, grouping
cmd_lang = Language
cmd_help = Help and examples
per_hour = /h
per_month = /mo
ask_method = What should I estimate for <b>{ $workload }</b>?
ask_training = <b>{ $workload }</b>: which way to fine-tune? LoRA trains small adapters, QLoRA the same on a 4-bit base (the least memory), full all the weights, freeze the last layers only.
btn_method_inference = Inference
btn_method_lora = LoRA
btn_method_qlora = QLoRA
btn_method_full = Full fine-tune
btn_method_freeze = Freeze layers
sub_ask_again = Send another name, or tap a button above.
sub_delete_confirm = Delete subscription { $n }: { $what }{ $filters }?
unsub_all_confirm = Delete all { $n } { $n ->
        [one] subscription
       *[other] subscriptions
    }? This cannot be undone.
btn_delete_yes = 🗑 Delete
btn_keep = Keep
sub_kept = Kept.
btn_currency_switch = Switch prices to { $currency }
btn_grouping_on = Group alerts into one message
btn_grouping_off = Send each alert separately
tz_bad = I do not know the time zone “{ $given }”. Send a UTC offset such as <code>/settings tz +3</code> or <code>/settings tz -5</code>, or a city: <code>/settings tz Berlin</code>.
history_one_point = { $gpu }: only one price seen so far — { $price } per GPU-hour at { $provider } ({ $date }). A chart needs a second point: it will come with the next change.
history_spot = {" "}· spot
history_cheapest_now = Cheapest now: { $provider }, { $price } per GPU-hour (the thick line).

## speed, ranking and slices (core.speed, core.ranking)
est_fit_tight = {" "}— tight: no safety margin
est_speed_title = <b>Speed</b> ({ $concurrency } at a time, context { $context ->
        [one] { $context } token
       *[other] { $context } tokens
    }):
est_speed_line = • { $gpu } × { $count }: prompt { $prefill } tok/s · answer { $decode } tok/s per user · { $aggregate } tok/s in total{ $mark }
est_speed_target = 🎯 Target: { $target }
est_speed_keeps_mark = {" "}✓
est_speed_slow_mark = {" "}(too slow for the target)
est_not_fitting_mark = {" "}(does not fit)
est_job_cost = {" "}· job ~{ $cost }
offer_what_slice = { $gpu }, { $share }% of one card (vGPU slice)
offer_spot = {" "}· <i>spot: may be interrupted</i>
inline_spot = {" "}(spot)
offer_tight = {" "}· ⚠️ <i>tight: no safety margin</i>
inline_tight = {" "}(tight)
list_and = { $head } and { $last }
label_ctx_io = ctx { $ctx } (input { $prompt } + output { $output })
btn_open_market = 📊 Open the market
menu_market = Market
label_ctx = ctx { $ctx }
label_batch = bs { $n }
label_gpus = { $n } { $n ->
        [one] GPU
       *[other] GPUs
    }
