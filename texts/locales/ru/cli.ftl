cli_offers_help = предложения в наличии из базы, сначала самые дешёвые конфигурации
cli_offers_headers = Провайдер|GPU|×|Локация|Оплата|₽/ч|$/ч|₽/GPU-ч|$/GPU-ч|Доступно
cli_offers_none = Подходящих предложений в наличии нет. Обновите базу: `gpuradar scrape --once`.
cli_offers_unknown_gpu = Неизвестная видеокарта «{ $name }». Например: H100, A100 80GB, RTX 4090, L40S.
cli_offers_db_error = Не удалось прочитать базу предложений: { $error }
cli_offers_fits = Подходит для: { $workload }
cli_offers_listed_title = Цены по прайс-листам (наличие неизвестно), из публичных прайс-листов облаков:
cli_offers_listed_headers = Провайдер|GPU|×|Локация|Оплата|₽/ч|$/ч|₽/GPU-ч|$/GPU-ч
cli_offers_count = { $n } { $n ->
        [one] предложение
        [few] предложения
        [many] предложений
       *[other] предложения
    }.
cli_offers_hourly = почасовая
cli_offers_monthly = помесячная
cli_offers_spot = спот
cli_providers_yes = да
cli_providers_no = нет
cli_providers_help = провайдеры: включён / нужен ключ / выключен, в порядке / сбои; `check ИМЯ` — проба без сохранения
cli_providers_headers = Провайдер|Настройка|Состояние|С|Последний успех|Последняя ошибка|НДС
cli_providers_enabled = включён
cli_providers_disabled = выключен
cli_providers_price_only = { $setup }; цена из прайс-листа, наличие неизвестно
cli_providers_needs = нужен ключ: { $settings }
cli_providers_ok = в порядке
cli_providers_degraded = сбои
cli_providers_never = ещё не опрашивался
cli_providers_db_error = Не удалось прочитать базу предложений: { $error }
cli_providers_unknown = Неизвестный провайдер «{ $name }». Известные: { $known }.
cli_providers_need_name = Какой провайдер? `gpuradar providers check ИМЯ`, например `gpuradar providers check immers`.
cli_providers_check_title = { $title } ({ $name }): { $status }
cli_providers_status_ok = ответ выглядит верным
cli_providers_status_suspect = ответу нельзя верить
cli_providers_status_failed = нет ответа
cli_providers_error = Причина: { $error }
cli_providers_needs_line = Сначала задайте: { $settings }
cli_providers_rows = Строк по `{ $rows }`: { $n } (с GPU и ценой: { $usable })
cli_providers_fields = Поля (в скольких строках локатор нашёл значение):
cli_providers_field_none = ← ничего не нашёл
cli_providers_sample = Первые строки как прочитаны:
cli_providers_records = Прочитано записей: { $records }; пропущено как неверные: { $skipped }
cli_providers_problem = пропущено: { $problem }
cli_providers_offers = Предложений: { $n } (в наличии: { $in_stock })
cli_providers_unknown_gpus = Названия GPU не из каталога (оставлены как есть): { $names }
cli_providers_offer_headers = GPU|×|Локация|Оплата|Цена|В наличии
cli_providers_stored = Ничего не сохранено.
cli_providers_vat_none = без НДС
cli_providers_vat_included = НДС { $rate } % включён
cli_providers_vat_added = НДС { $rate } % сверху
cli_providers_vat_unconfirmed = { $terms } (не подтверждено)
cli_providers_vat_title = Условия по НДС и где они указаны:
cli_providers_vat_line = { $title }: { $terms }; источник: { $source }
cli_providers_unknown_title = Названия GPU, которых нет в каталоге (их предложения никому не показываются, пока не сопоставлены):
cli_providers_unknown_line = { $title }: { $count ->
        [one] { $count } предложение
        [few] { $count } предложения
        [many] { $count } предложений
       *[other] { $count } предложения
    } с неизвестной GPU `{ $name }`
cli_providers_enable = Всё верно? Включите: PROVIDERS__{ $upper }__ENABLED=true
cli_providers_is_enabled = Провайдер включён: сервис опрашивает его каждые { $interval } с.
cli_scrape_help = опросить провайдеров, сохранить и показать предложения
cli_scrape_unknown = Неизвестный провайдер «{ $name }». Известные: { $known }.
cli_scrape_none_enabled = Ни один провайдер не включён (PROVIDERS__<ИМЯ>__ENABLED).
cli_scrape_db_error = Не удалось подготовить базу предложений: { $error }
cli_scrape_headers = Провайдер|Статус|Предложений|Событий|Ошибка
cli_scrape_ok = в порядке
cli_scrape_suspect = сомнительно
cli_scrape_failed = сбой
cli_scrape_rates_cbr = Курсы валют: Банк России, { $as_of } ({ $rates }).
cli_scrape_rates_cache = Курсы валют: Банк России недоступен; взяты последние сохранённые курсы на { $as_of } ({ $rates }).
cli_scrape_rates_fallback = Курсы валют: Банк России недоступен, сохранённых курсов нет, поэтому взяты запасные из FX_FALLBACK_RUB_PER ({ $rates }); пересчёт рублей и долларов приблизительный.
cli_scrape_no_offers = В этом опросе нет надёжных предложений.
cli_scrape_running = Опрашиваю { $names } по расписанию; Ctrl+C — остановка.
cli_scrape_stopped = Остановлено.
cli_db_help = схема базы данных (миграции Alembic)
cli_db_upgraded = База данных на ревизии { $rev } ({ $url }).
cli_db_downgraded = База данных откачена до { $rev } ({ $url }).
cli_db_current = Ревизия базы данных: { $rev } (последняя: { $head }).
cli_db_empty = нет (пустая база)
cli_db_failed = Миграция не удалась: { $error }
cli_est_moe = (MoE { $total } / { $active } активных)
cli_est_grad_ckpt_on = пересчёт активаций
cli_est_grad_ckpt_off = без пересчёта активаций
cli_est_offload = выгрузка в ОЗУ: { $what }
cli_est_offers_title = Дешевле всего в наличии (вся конфигурация, в час)
cli_est_offer_line = { $provider }: { $what } — { $price } { $currency }/ч
cli_est_spot = спот
cli_est_workload = Задача
cli_est_assumed = Предположения
cli_est_memory = Память на один GPU
cli_est_memory_total = Память всего, на одном устройстве (ни одна GPU столько не вмещает)
cli_est_memory_total_named = Память всего, на одном устройстве (ни одна { $cards } столько не вмещает)
cli_est_first_fit = на GPU в первой подходящей конфигурации, { $gpu } × { $count }: { $per_gpu }
cli_est_on = на
cli_est_weights = веса
cli_est_trainable_states = градиенты + оптимизатор
cli_est_activations = активации
cli_est_logits = логиты / loss
cli_est_kv_cache = KV-кэш
cli_est_overhead = накладные
cli_est_peak = прогноз пика
cli_est_recommended = рекомендуется (+{ $m } запас)
cli_est_runtime = + контекст CUDA / NCCL
cli_est_cpu = нужно ОЗУ
cli_est_fits = Помещается на
cli_est_gpu = GPU
cli_est_count = шт.
cli_est_need = нужно/GPU
cli_est_usable = доступно
cli_est_load = загрузка
cli_est_more = … и ещё { $n } { $n ->
        [one] конфигурация
        [few] конфигурации
        [many] конфигураций
       *[other] конфигурации
    }
cli_est_none = Ни одна конфигурация до 8 GPU в одном узле не подходит.
cli_est_no_fit = Не помещается на { $where }.
cli_est_try = Попробуйте: { $cli } ({ $change }): { $per_gpu } ГиБ на GPU, { $where }
cli_est_try_fits = помещается на { $gpu } × { $count }
cli_est_try_nofit = всё ещё больше, чем есть у любой карты
cli_est_advice = Что поможет
cli_est_time = Время ({ $tokens } { $tokens ->
        [one] токен
        [few] токена
        [many] токенов
       *[other] токена
    })
cli_est_tps = токенов/с
cli_est_hours = часов
cli_est_tight = впритык
cli_est_no_fit_mark = не помещается
cli_est_speed = Скорость ({ $n } одновременно, контекст { $ctx })
cli_est_prefill = промпт ток/с
cli_est_decode = ответ ток/с на пользователя
cli_est_aggregate = всего ток/с
cli_est_gib = ГиБ
webhook_no_url = Для режима вебхука нужен WEBHOOK__URL: публичный адрес https://, на который Telegram будет присылать обновления (ваш балансировщик), например WEBHOOK__URL=https://bot.example.com/telegram/webhook.
webhook_not_https = WEBHOOK__URL должен начинаться с https:// (Telegram присылает обновления только по HTTPS).
webhook_no_secret = Для режима вебхука нужен WEBHOOK__SECRET: от 1 до 256 символов A-Z, a-z, 0-9, _ и -, один и тот же на всех репликах. Telegram присылает его с каждым обновлением, чтобы поддельные запросы можно было отклонить. Например: WEBHOOK__SECRET=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
run_no_token = BOT_TOKEN не задан: получите токен у @BotFather и запустите `BOT_TOKEN=... gpuradar run`.
run_bad_settings = Настройки неверны: { $error }
cli_opt_unknown = { $option } { $value } — неизвестное значение; возможны: { $choices }.
cli_opt_positive = { $option } должно быть положительным числом.
cli_config_unreadable = Не удаётся прочитать файл конфигурации { $path }.
cli_config_not_json = { $path } — не JSON-файл config.json.
cli_config_fields = В { $path } нет полей config.json Hugging Face (hidden_size, num_hidden_layers, num_attention_heads, vocab_size).
cli_gpu_unknown = GPU { $gpu } нет в каталоге (например: H100, A100 80GB, RTX 4090).
cli_kv_dtype = --kv-dtype может быть: { $choices }.
run_bad_token = Telegram не принял BOT_TOKEN: это не действующий токен бота. Скопируйте его заново у @BotFather (/mybots → API Token).
run_telegram_unreachable = Telegram Bot API по адресу { $api } недоступен ({ $attempts ->
        [one] { $attempts } попытка
        [few] { $attempts } попытки
        [other] { $attempts } попытки
       *[many] { $attempts } попыток
    }): проверьте сеть, прокси или TELEGRAM_API_URL.
run_port_in_use = Порт { $port } на { $host } уже занят (или недоступен): укажите другой в WEB__PORT (и WEB__HOST).
run_db_missing = Папки базы данных { $path } нет: создайте её или укажите другой путь в DATABASE_URL.
run_db_not_writable = В базу данных { $path } нельзя писать: исправьте права или укажите другой путь в DATABASE_URL.
cli_engine = --engine может быть: { $choices }.
run_db_bad_url = DATABASE_URL — не адрес базы данных: укажите sqlite+aiosqlite:///путь/к/gpuradar.sqlite3 или postgresql+asyncpg://пользователь:пароль@хост:5432/gpuradar.
run_db_unknown = В DATABASE_URL указана неизвестная база данных или драйвер «{ $scheme }»: укажите sqlite+aiosqlite:///путь/к/gpuradar.sqlite3 или postgresql+asyncpg://пользователь:пароль@хост:5432/gpuradar (не postgres://).
run_db_not_async = В DATABASE_URL указан драйвер «{ $scheme }», с которым бот работать не может (нужен асинхронный): укажите sqlite+aiosqlite:///… или postgresql+asyncpg://….
run_db_unreachable = Не удалось открыть базу данных { $where } ({ $error }): проверьте хост, порт, пользователя и пароль, что сервер запущен и база существует.
cli_est_target = Цель: { $target }
cli_est_keeps_up = успевает
cli_est_keeps_yes = да
cli_est_keeps_no = нет
cli_est_too_slow = не успевает за целью
