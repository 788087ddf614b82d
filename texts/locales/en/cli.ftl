cli_offers_help = stored in-stock offers, cheapest configuration first
cli_offers_headers = Provider|GPU|×|Location|Billing|₽/h|$/h|₽/GPU-h|$/GPU-h|Available
cli_offers_none = No offers in stock match. Run `gpuradar scrape --once` to refresh the store.
cli_offers_unknown_gpu = Unknown GPU “{ $name }”. Try e.g. H100, A100 80GB, RTX 4090, L40S.
cli_offers_db_error = Cannot read the offer store: { $error }
cli_offers_fits = Fits { $workload }
cli_offers_listed_title = Listed prices (availability unknown), from the clouds' public price lists:
cli_offers_listed_headers = Provider|GPU|×|Location|Billing|₽/h|$/h|₽/GPU-h|$/GPU-h
cli_offers_count = { $n } { $n ->
        [one] offer
       *[other] offers
    }.
cli_offers_hourly = hourly
cli_offers_monthly = monthly
cli_offers_spot = spot
cli_providers_yes = yes
cli_providers_no = no
cli_providers_help = providers: enabled / needs key / off, healthy / degraded; `check NAME` tries one without storing
cli_providers_headers = Provider|Setup|Health|Since|Last success|Last error|VAT
cli_providers_enabled = enabled
cli_providers_disabled = off
cli_providers_price_only = { $setup }; listed price, availability unknown
cli_providers_needs = needs key: { $settings }
cli_providers_ok = healthy
cli_providers_degraded = degraded
cli_providers_never = not polled yet
cli_providers_db_error = Cannot read the offer store: { $error }
cli_providers_unknown = Unknown provider “{ $name }”. Known providers: { $known }.
cli_providers_need_name = Which provider? `gpuradar providers check NAME`, e.g. `gpuradar providers check immers`.
cli_providers_check_title = { $title } ({ $name }): { $status }
cli_providers_status_ok = answer looks right
cli_providers_status_suspect = answer not believable
cli_providers_status_failed = no answer
cli_providers_error = Reason: { $error }
cli_providers_needs_line = Set first: { $settings }
cli_providers_rows = Rows matched by `{ $rows }`: { $n } ({ $usable } with a GPU and a price)
cli_providers_fields = Fields (rows where the locator found a value):
cli_providers_field_none = ← matched nothing
cli_providers_sample = First rows as read:
cli_providers_records = Records read: { $records }; skipped as invalid: { $skipped }
cli_providers_problem = skipped: { $problem }
cli_providers_offers = Offers: { $n } ({ $in_stock } in stock)
cli_providers_unknown_gpus = GPU names not in the catalog (kept as spelled): { $names }
cli_providers_offer_headers = GPU|×|Location|Billing|Price|In stock
cli_providers_stored = Nothing was stored.
cli_providers_vat_none = no VAT
cli_providers_vat_included = VAT { $rate } % included
cli_providers_vat_added = VAT { $rate } % added
cli_providers_vat_unconfirmed = { $terms } (unconfirmed)
cli_providers_vat_title = VAT terms and where they are stated:
cli_providers_vat_line = { $title }: { $terms }; source: { $source }
cli_providers_unknown_title = GPU names the catalog does not know (their offers are shown to nobody until mapped):
cli_providers_unknown_line = { $title }: { $count ->
        [one] { $count } offer
       *[other] { $count } offers
    } with unknown GPU `{ $name }`
cli_providers_enable = Looks right? Enable it: PROVIDERS__{ $upper }__ENABLED=true
cli_providers_is_enabled = It is enabled: the service polls it every { $interval } s.
cli_scrape_help = poll providers, store the offers, print them
cli_scrape_unknown = Unknown provider “{ $name }”. Known providers: { $known }.
cli_scrape_none_enabled = No provider is enabled (PROVIDERS__<NAME>__ENABLED).
cli_scrape_db_error = Cannot prepare the offer store: { $error }
cli_scrape_headers = Provider|Status|Offers|Events|Error
cli_scrape_ok = ok
cli_scrape_suspect = suspect
cli_scrape_failed = failed
cli_scrape_rates_cbr = Exchange rates: Bank of Russia, { $as_of } ({ $rates }).
cli_scrape_rates_cache = Exchange rates: the Bank of Russia could not be reached; using its last rates kept, of { $as_of } ({ $rates }).
cli_scrape_rates_fallback = Exchange rates: the Bank of Russia could not be reached and none are kept, so the configured fallback FX_FALLBACK_RUB_PER is used ({ $rates }); rouble/dollar conversions are approximate.
cli_scrape_no_offers = No trusted offers in this scrape.
cli_scrape_running = Polling { $names } on schedule; Ctrl+C stops.
cli_scrape_stopped = Stopped.
cli_db_help = database schema (Alembic migrations)
cli_db_upgraded = Database at { $rev } ({ $url }).
cli_db_downgraded = Database downgraded to { $rev } ({ $url }).
cli_db_current = Database revision: { $rev } (latest: { $head }).
cli_db_empty = none (empty database)
cli_db_failed = Migration failed: { $error }
cli_est_moe = (MoE { $total } / { $active } active)
cli_est_grad_ckpt_on = gradient checkpointing
cli_est_grad_ckpt_off = no gradient checkpointing
cli_est_offload = offload to CPU: { $what }
cli_est_offers_title = Cheapest in stock now (whole configuration, per hour)
cli_est_offer_line = { $provider }: { $what } — { $price } { $currency }/h
cli_est_spot = spot
cli_est_workload = Workload
cli_est_assumed = Assumed
cli_est_memory = Memory per GPU
cli_est_memory_total = Memory in all, on one device (no single GPU holds it)
cli_est_memory_total_named = Memory in all, on one device (no single { $cards } holds it)
cli_est_first_fit = per GPU on the first configuration that fits, { $gpu } × { $count }: { $per_gpu }
cli_est_on = on
cli_est_weights = weights
cli_est_trainable_states = gradients + optimizer
cli_est_activations = activations
cli_est_logits = logits / loss
cli_est_kv_cache = KV cache
cli_est_overhead = overhead
cli_est_peak = predicted peak
cli_est_recommended = recommended (+{ $m } margin)
cli_est_runtime = + CUDA context / NCCL
cli_est_cpu = CPU RAM needed
cli_est_fits = Fits on
cli_est_gpu = GPU
cli_est_count = count
cli_est_need = need/GPU
cli_est_usable = usable
cli_est_load = load
cli_est_more = … and { $n } more { $n ->
        [one] configuration
       *[other] configurations
    }
cli_est_none = Nothing up to one 8-GPU node fits.
cli_est_no_fit = Does not fit on { $where }.
cli_est_advice = What would work
cli_est_try = Try: { $cli } ({ $change }): { $per_gpu } GiB per GPU, { $where }
cli_est_try_fits = fits on { $gpu } × { $count }
cli_est_try_nofit = still more than any card holds
cli_est_time = Time ({ $tokens } { $tokens ->
        [one] token
       *[other] tokens
    })
cli_est_tps = tokens/s
cli_est_hours = hours
cli_est_tight = tight
cli_est_no_fit_mark = does not fit
cli_est_speed = Speed ({ $n } at a time, context { $ctx })
cli_est_prefill = prompt tok/s
cli_est_decode = answer tok/s per user
cli_est_aggregate = total tok/s
cli_est_gib = GiB
webhook_no_url = Webhook mode needs WEBHOOK__URL: the public https:// address Telegram will post updates to (your load balancer), e.g. WEBHOOK__URL=https://bot.example.com/telegram/webhook.
webhook_not_https = WEBHOOK__URL must start with https:// (Telegram posts updates only over HTTPS).
webhook_no_secret = Webhook mode needs WEBHOOK__SECRET: 1-256 characters of A-Z, a-z, 0-9, _ and -, the same on every replica. Telegram sends it with every update so forged requests can be refused. For example: WEBHOOK__SECRET=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
run_no_token = BOT_TOKEN is not set: get one from @BotFather and run `BOT_TOKEN=... gpuradar run`.
run_bad_settings = The settings are not valid: { $error }
cli_opt_unknown = { $option } { $value } is not known; choose one of: { $choices }.
cli_opt_positive = { $option } must be a positive number.
cli_config_unreadable = Cannot read the config file { $path }.
cli_config_not_json = { $path } is not a JSON config.json.
cli_config_fields = { $path } lacks the fields of a Hugging Face config.json (hidden_size, num_hidden_layers, num_attention_heads, vocab_size).
cli_gpu_unknown = The GPU { $gpu } is not in the catalog (try e.g. H100, A100 80GB, RTX 4090).
cli_kv_dtype = --kv-dtype must be one of { $choices }.
run_bad_token = Telegram refused BOT_TOKEN: it is not a valid bot token. Copy it again from @BotFather (/mybots → API Token).
run_telegram_unreachable = Telegram Bot API at { $api } cannot be reached ({ $attempts ->
        [one] { $attempts } attempt
       *[other] { $attempts } attempts
    }): check the network, a proxy, or TELEGRAM_API_URL.
run_port_in_use = Port { $port } on { $host } is already in use (or not allowed): set another with WEB__PORT (and WEB__HOST).
run_db_missing = The database folder { $path } does not exist: create it or point DATABASE_URL elsewhere.
run_db_not_writable = The database { $path } cannot be written: fix its permissions or point DATABASE_URL elsewhere.
cli_engine = --engine must be one of { $choices }.
run_db_bad_url = DATABASE_URL is not a database URL: write it as sqlite+aiosqlite:///path/to/gpuradar.sqlite3 or postgresql+asyncpg://user:password@host:5432/gpuradar.
run_db_unknown = DATABASE_URL names a database or driver “{ $scheme }” that is not known: use sqlite+aiosqlite:///path/to/gpuradar.sqlite3 or postgresql+asyncpg://user:password@host:5432/gpuradar (not postgres://).
run_db_not_async = DATABASE_URL “{ $scheme }” names a driver the bot cannot use (it needs an asyncio one): use sqlite+aiosqlite:///… or postgresql+asyncpg://….
run_db_unreachable = Cannot open the database { $where } ({ $error }): check the host, the port, the user and password, and that the server is running and the database exists.
cli_est_target = Target: { $target }
cli_est_keeps_up = keeps up
cli_est_keeps_yes = yes
cli_est_keeps_no = no
cli_est_too_slow = too slow for the target
