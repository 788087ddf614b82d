start =
    👋 <b>GPU Radar</b> считает, сколько видеопамяти нужно под задачу с LLM, какие GPU подходят и где их можно арендовать прямо сейчас.
    Я слежу за { $providers } и пишу, когда подходящая GPU появляется или дешевеет.
    Попробуйте: <code>/estimate 70B QLoRA ctx 8k</code>, затем <code>/subscribe 13B LoRA до 300 ₽/ч</code>.

    Подробнее: /help
help =
    <b>Что я понимаю</b>
    /estimate &lt;задача&gt; [фильтры, как у /subscribe] — видеопамять, подходящие GPU, самые дешёвые предложения
    /offers [GPU или задача] [фильтры, как у /subscribe] — предложения в наличии, от дешёвых
    /subscribe &lt;задача или GPU&gt; [до 300 ₽/ч] [на runpod] [x8] [почасово|помесячно] [регион msk]
    /subs — ваши подписки · /unsubscribe
    /when &lt;GPU или задача&gt; [фильтры] — как часто бывает в наличии и сколько держится; или просто спросите: <code>как долго держится H100 в наличии?</code>
    /history &lt;GPU&gt; [фильтры] [7d] — график цен · /providers — за кем я слежу
    /settings — валюта, тихие часы, группировка · /lang — язык

    Примеры: { $examples }
    И обучение на предпочтениях: <code>8B LoRA DPO</code>, ORPO, KTO, SimPO.
    В любом чате: <code>@{ $bot } 70B QLoRA</code> или <code>@{ $bot } H100 x8</code>.
unknown =
    Простите, я не понял. Пришлите задачу или команду, например:
    { $examples }

    Все команды: /help
unknown_command = Такой команды я не знаю. Все команды: /help
input_cut = ✂️ Сообщение длинное: я прочитал { $limit ->
        [one] первый { $limit } символ
        [few] первые { $limit } символа
        [many] первые { $limit } символов
       *[other] первые { $limit } символа
    }.
error = У меня что-то пошло не так; попробуйте, пожалуйста, через минуту.
estimate_usage = Напишите задачу после команды (<code>/estimate 13B LoRA</code>) или нажмите пример:
est_header = 🧮 <b>{ $workload }</b>
est_vram = Видеопамять на GPU: <b>{ $per_gpu } ГиБ</b> (рекомендуется { $recommended } ГиБ, с запасом)
est_vram_total = Видеопамять всего: <b>{ $total } ГиБ</b> на одном устройстве (рекомендуется { $recommended } ГиБ, с запасом); ни одна GPU столько не вмещает
est_vram_total_named = Видеопамять всего: <b>{ $total } ГиБ</b> на одном устройстве (рекомендуется { $recommended } ГиБ, с запасом); ни одна { $cards } столько не вмещает
est_vram_first_fit = На GPU в первой подходящей конфигурации, { $gpu } × { $count }: <b>{ $per_gpu } ГиБ</b>
est_cpu_ram = Оперативная память для offload: { $gib } ГиБ
est_breakdown = Из чего: { $items }
bd_weights = веса
bd_trainable_states = градиенты + оптимизатор
bd_activations = активации
bd_logits = логиты
bd_kv_cache = KV-кэш
bd_overhead = накладные
est_assumptions = Допущения: { $items }
est_fits_title = <b>Подходят</b> (память на GPU / доступно):
est_fit_line = • { $gpu } × { $count }: { $per_gpu } / { $usable } ГиБ ({ $util }%)
est_fits_more = …и ещё { $n } { $n ->
        [one] конфигурация
        [few] конфигурации
        [many] конфигураций
       *[other] конфигурации
    }
est_no_fit = Ничто не помещается в один сервер до 8 GPU.
est_no_fit_count = Ни одна конфигурация из { $count } GPU (столько вы просили) не вмещает эту задачу.
est_no_fit_named = В запрошенную конфигурацию { $where } ничего не помещается.
est_no_fit_named_any = На { $cards } ничего не помещается, даже по 8 карт в сервере.
est_remedies_title = <b>Попробуйте:</b>
est_remedy_line = • { $change }: { $per_gpu } ГиБ на GPU, помещается на { $gpu } × { $count }
est_remedy_line_nofit = • { $change }: { $per_gpu } ГиБ на GPU — всё ещё больше, чем есть у любой карты
query_with_changes = { $query }, с изменением: { $changes }
est_changed = 🛠 Пересчитано с изменением: { $changes }
est_changed_from = Изменено: { $items }
btn_remedy_offload_optimizer = 🛠 Оптимизатор в ОЗУ
btn_remedy_offload_all = 🛠 Всё в ОЗУ
btn_remedy_fused_ce = 🛠 Слитная кросс-энтропия
btn_remedy_micro_batch_1 = 🛠 Микробатч 1
btn_remedy_qlora = 🛠 QLoRA
btn_remedy_shorter_context = 🛠 Контекст вдвое короче
btn_remedy_fp8 = 🛠 Веса FP8
btn_remedy_precompute_ref = 🛠 Опорная модель заранее
btn_remedy_int4 = 🛠 Веса INT4
btn_remedy_zero3_more_cards = 🛠 ZeRO-3 на большем числе карт
est_offers_title = <b>Дешевле всего в наличии</b> (вся конфигурация, в час · в месяц):
est_no_keeping = Ни одна конфигурация не успевает за этой целью ни при каком числе карт. Уменьшите поток запросов, требуемую скорость ответа или длину промпта.
est_no_offers = Подходящих предложений в наличии сейчас нет. Нажмите «Сообщить», и я напишу, когда появятся.
est_no_offers_count = Ни одна конфигурация из { $count } GPU не вмещает эту задачу, так что под эти фильтры не подойдёт ни одно предложение.
est_filters_said = Только предложения, о которых вы просили: { $filters }.
est_time_title = <b>Время</b> на { $tokens } { $tokens ->
        [one] токен
        [few] токена
        [many] токенов
       *[other] токена
    } обучения:
est_time_title_pairs = <b>Время</b> на { $tokens } { $tokens ->
        [one] токен
        [few] токена
        [many] токенов
       *[other] токена
    } обучения, оба ответа в { $pairs } { $pairs ->
        [one] паре
       *[other] парах
    }:
est_time_line = • { $gpu } × { $count }: ~{ $hours } ч{ $cost }
est_time_cost = , ~{ $cost } по самому дешёвому предложению
offer_line = • { $provider }: { $what }{ $location } — <b>{ $per_hour }</b>/ч · { $per_month }/мес{ $extra } · { $link }
offer_link = <a href="{ $url }">заказать</a>
offer_nolink = без ссылки
btn_assumptions = 📋 Допущения
btn_assumptions_hide = 📋 Скрыть допущения
btn_notify = 🔔 Сообщить, когда появится
btn_more_offers = Ещё предложения ›
offers_title = <b>В наличии{ $filter }</b>, сначала самые дешёвые конфигурации — страница { $page }/{ $pages }:
offers_filter = {" "}для { $what }
offers_none = Сейчас в наличии нет предложений{ $filter }. /subscribe — и я сообщу, когда появятся.
listed_title = <b>Цены по прайс-листам (наличие неизвестно)</b>, из публичных прайс-листов облаков — вся конфигурация, в час · в месяц:
btn_prev = ‹ Назад
btn_next = Дальше ›
unknown_gpu = Не знаю GPU «{ $name }». Попробуйте, например: H100, A100 80GB, RTX 4090, L40S.
sub_ask_kind = За чем следить?
btn_kind_workload = За задачей (например, 13B LoRA)
btn_kind_gpu = За моделью GPU
sub_ask_workload =
    Пришлите задачу, например:
    { $examples }
sub_ask_gpu = Выберите GPU или пришлите название:
sub_ask_price = Максимальная цена в час, { $currency }? Следующим шагом уточню: за всю конфигурацию или за одну GPU.
sub_ask_basis = { $price }/ч — это цена всей конфигурации или каждой GPU?
btn_basis_total = { $price }/ч за всю конфигурацию
btn_basis_gpu = { $price } за GPU-час
btn_any_price = Любая цена
sub_ask_provider = Какие провайдеры?
btn_any_provider = Все провайдеры
btn_provider_idle = ⚪ { $name } · { $reason }
sub_providers_idle = <i>Здесь не опрашиваются, поэтому не предлагаю: { $names }.</i>
sub_provider_off = выключен
sub_provider_needs_key = нужен ключ API
sub_provider_not_polled = { $name } этот бот не опрашивает ({ $reason }): от него ничего не придёт. Выберите другого провайдера.
btn_cancel = Отмена
sub_cancelled = Отменено, ничего не изменилось.
sub_bad_price = Пришлите число, например 300 или 2.5, или нажмите кнопку.
sub_bad_price_not_number = Это не цена. Пришлите число, например 300 или 2,5 (знак валюты можно), или нажмите кнопку.
sub_bad_price_negative = Порог цены не может быть отрицательным. Пришлите положительное число, например 300 или 2,5, или нажмите кнопку.
sub_bad_price_zero = С порогом ноль не подойдёт ничего. Пришлите положительное число, например 300 или 2,5, или нажмите кнопку.
sub_bad_price_too_large = Столько не стоит ни одно предложение (не больше { $high }). Пришлите число поменьше или нажмите кнопку.
sub_pick_button = Пожалуйста, нажмите одну из кнопок выше (или /cancel).
sub_saved =
    ✅ Слежу: { $what }{ $filters }.
    Подписок: { $n } из { $limit }. Управление — /subs.
sub_keeping_cards = ; на картах, которые успевают за целью: { $cards }
sub_target_none = Ни одна карта не успевает за этой целью ни при каком числе GPU, на котором помещается задача, — оповещать было бы не о чем. Уменьшите поток запросов, требуемую скорость ответа или длину промпта, либо посчитайте одну реплику через «N пользователей».
sub_fit_none = Ни одна конфигурация { $cards } × { $count } не вмещает эту задачу — оповещать было бы не о чем, подписка не сохранена.
sub_fit_none_any = Эта задача не помещается ни в одну конфигурацию { $cards } до 8 карт в сервере — оповещать было бы не о чем, подписка не сохранена.
sub_fit_any_card = GPU
sub_fit_from = Она помещается на { $count } { $count ->
        [one] такой GPU
       *[other] таких GPU
    } — укажите столько или не указывайте число карт.
sub_fit_never = И до 8 таких карт её не вмещают: /estimate покажет, что изменить, чтобы поместилось (QLoRA, выгрузка на CPU).
sub_keeping_more = {" "}и ещё { $n }
sub_exists = ℹ️ Вы уже следите за этим: { $what }{ $filters }.
sub_matches_now = <b>Уже подходит сейчас:</b>
sub_not_polled = ⚠️ Этот бот не опрашивает { $providers }, поэтому оттуда ничего не придёт. Выберите провайдера из /providers или поставьте эту подписку на паузу в /subs.
sub_no_matches_now = Сейчас ничего не подходит; напишу, как только появится.
sub_limit = У вас уже { $limit } { $limit ->
        [one] подписка
        [few] подписки
        [many] подписок
       *[other] подписки
    } — это максимум. Сначала удалите одну в /subs.
sub_need_gib = нужно { $gib } ГиБ на GPU
sub_need_gib_on = нужно { $gib } ГиБ на GPU при { $count } GPU
sub_need_none = не помещается в одну GPU; слежу за конфигурациями из нескольких GPU
sub_need_gib_from = на одной такой карте не помещается: нужно { $gib } ГиБ на GPU при { $count } GPU и больше
f_price = {" "}· до { $price }/ч за всю конфигурацию
f_price_gpu = {" "}· до { $price }/GPU-ч
f_price_month = {" "}· до { $price }/мес за всю конфигурацию
f_price_gpu_month = {" "}· до { $price } за GPU в месяц
# слова предложенной команды /subscribe (bot/subscribe_query.py читает их на любом из языков)
sub_cmd_providers = на { $providers }
sub_cmd_region = регион { $region }
sub_respelled = Чтобы следить за этим, пришлите <code>/subscribe { $command }</code>.
sub_cap_total = 💰 Порог понят как { $price }/ч за всю конфигурацию, сколько бы в ней ни было GPU. Имели в виду { $price } за GPU-час? Пришлите <code>/subscribe { $query } до { $price }/GPU-ч</code>.
sub_cap_gpu = 💰 Порог понят как { $price } за GPU-час: конфигурация × { $n } GPU может стоить до { $total }/ч. Имели в виду { $price }/ч за всю конфигурацию? Пришлите <code>/subscribe { $query } до { $price }/ч</code>.
sub_cap_total_month = 💰 Порог понят как { $price }/мес за всю конфигурацию, сколько бы в ней ни было GPU. Имели в виду { $price } за GPU в месяц? Пришлите <code>/subscribe { $query } до { $price }/мес за GPU</code>.
sub_cap_gpu_month = 💰 Порог понят как { $price } за GPU в месяц: конфигурация × { $n } GPU может стоить до { $total }/мес. Имели в виду { $price }/мес за всю конфигурацию? Пришлите <code>/subscribe { $query } до { $price }/мес</code>.
f_providers = {" "}· у { $providers }
f_count = {" "}· × { $count } GPU
f_billing = {" "}· { $billing }
f_region = {" "}· регион { $region }
billing_hourly = почасово
billing_monthly = помесячно
billing_spot = spot
deep_link_bad = Ссылка повреждена или устарела. Пришлите /subscribe с описанием задачи.
subs_empty = Подписок нет. Попробуйте <code>/subscribe 13B LoRA</code> или <code>/subscribe H100</code>.
subs_title = <b>Ваши подписки</b> ({ $n } из { $limit }):
subs_line = { $n }. { $what }{ $filters }{ $paused }
subs_paused = {" "}⏸ на паузе
btn_pause = ⏸ { $n }
btn_resume = ▶️ { $n }
btn_delete = 🗑 { $n }
sub_paused = Поставлено на паузу.
sub_resumed = Возобновлено.
sub_deleted = Удалено.
sub_not_found = Этой подписки уже нет.
unsub_no_such = Подписки { $n } нет. Ваши подписки пронумерованы так:
unsub_no_such_none = Подписки { $n } нет: у вас нет подписок.
unsub_usage = Пришлите <code>/unsubscribe N</code> (номер из /subs) или <code>/unsubscribe all</code>.
unsub_done = Подписка { $n } удалена.
unsub_all_done = { $n ->
        [one] Удалена { $n } подписка, других нет.
        [few] Удалены все { $n } подписки.
        [many] Удалены все { $n } подписок.
       *[other] Удалены все { $n } подписки.
    }
history_no_cap = На графике цен видны все цены, поэтому ценовой порог к нему не применяется. Как часто в наличии было предложение дешевле порога, покажет <code>/when { $text }</code>.
history_usage = Укажите GPU, например <code>/history H100</code>, можно с фильтрами и периодом: <code>/history H100 x8 у runpod 7d</code>.
history_empty = Истории цен для { $gpu } пока нет.
history_slow = График { $gpu } рисуется слишком долго. Попробуйте через минуту или возьмите период короче, например <code>/history { $gpu } 7d</code>.
history_caption = { $gpu }: самая низкая цена в наличии за GPU-час по провайдерам, { $currency }
chart_y = { $currency } за GPU-час
chart_x = дата (UTC)
providers_title = <b>Провайдеры</b>:
provider_ok = ✅ { $name } — последний успешный опрос { $when }
provider_degraded = ⚠️ { $name } — сбоит с { $since }: { $reason }; последний успех { $when }
provider_unknown = ⏳ { $name } — ещё не опрашивался
vat_note = <i>Цены с НДС { $rate }% там, где продавец его начисляет; у зарубежных площадок НДС нет.</i>
provider_needs_key = 🔑 { $name } — нужен ключ API: задайте { $settings }
provider_off = ⏸ { $name } — выключен
provider_unknown_gpu = ❓ { $count ->
        [one] { $count } предложение
        [few] { $count } предложения
        [many] { $count } предложений
       *[other] { $count } предложения
    } с неизвестной GPU <code>{ $name }</code>
never = никогда
settings_title =
    <b>Настройки</b>
    Валюта: { $currency }
    Тихие часы: { $quiet } (ваше время, UTC{ $tz })
    Группировка уведомлений: { $grouping }

    Тихие часы: <code>/settings quiet 23-8</code> или <code>/settings quiet off</code>.
    Часовой пояс: <code>/settings tz +5</code> или <code>/settings tz Новосибирск</code>.
quiet_off = выключены
quiet_range = { $start }:00–{ $end }:00
on = вкл
off = выкл
settings_saved = Сохранено.
quiet_bad = Пришлите тихие часы двумя числами, например <code>/settings quiet 23-8</code>, или <code>/settings quiet off</code>.
quiet_bad_hours = Часы — от 0 до 23, а в «{ $given }» есть час вне этого диапазона. Например: <code>/settings quiet 23-8</code>.
settings_use_lang = Язык меняется не в /settings, а командой /lang (например, <code>/lang ru</code>).
settings_unknown = Неизвестная настройка «{ $given }». /settings понимает <code>quiet 23-8</code>, <code>quiet off</code> и <code>tz +3</code>; язык — /lang, валюта — кнопка под /settings.
btn_my_subs = 📋 Мои подписки
btn_language = 🌐 Язык
lang_choose = Выберите язык:
lang_set = Язык: русский.
admin_stats =
    Пользователи: { $users } (активных { $active_users })
    Подписки: { $subscriptions } (активных { $active_subscriptions })
    Предложений в наличии в кэше: { $offers }
admin_testalert = 🔔 Тестовое уведомление: путь уведомлений до этого чата работает.
admin_degraded = ⚠️ Провайдер { $name } сбоит уже { $minutes } { $minutes ->
        [one] минуту
        [few] минуты
        [many] минут
       *[other] минуты
    }: { $reason }
inline_example_title = { $example }
inline_example_desc = Опишите задачу: размер модели, метод, контекст…
inline_syntax_title = Не понял «{ $query }»
inline_syntax_desc = Примеры: 13B LoRA · 70B QLoRA ctx 8k · инференс 70B int4, контекст 32k
inline_est_title = { $workload }: { $per_gpu } ГиБ на GPU
inline_est_title_total = { $workload }: всего { $per_gpu } ГиБ
inline_est_desc = Подходят: { $fits }
inline_offer_title = { $what } — { $per_hour }/ч у { $provider }{ $spot }
inline_offer_desc = { $per_month }/мес{ $location } · подходит для { $workload }
inline_card_offer_desc = { $per_month }/мес{ $location }
inline_cards_header = <b>{ $what }</b>, в наличии сейчас:
inline_cards_none_title = Сейчас нет в наличии: { $what }
inline_cards_none_desc = Кнопка под сообщением следит за появлением
btn_subscribe = 🔔 Подписаться
cmd_start = Что умеет бот
cmd_estimate = Видеопамять и GPU под задачу
cmd_offers = Предложения в наличии, от дешёвых
cmd_subscribe = Следить за задачей или GPU
cmd_subs = Ваши подписки
cmd_unsubscribe = Удалить подписки
cmd_history = График цен на GPU
cmd_providers = Провайдеры и их состояние
cmd_settings = Валюта, тихие часы, группировка
cmd_lang = Язык
cmd_help = Помощь и примеры
per_hour = /ч
per_month = /мес
ask_method = Что посчитать для <b>{ $workload }</b>?
ask_training = <b>{ $workload }</b>: как дообучать? LoRA учит небольшие адаптеры, QLoRA — то же на 4-битной базе (меньше всего памяти), полное — все веса, заморозка — только последние слои.
btn_method_inference = Инференс
btn_method_lora = LoRA
btn_method_qlora = QLoRA
btn_method_full = Полное дообучение
btn_method_freeze = Заморозка слоёв
sub_ask_again = Пришлите другое название или нажмите кнопку выше.
sub_delete_confirm = Удалить подписку { $n }: { $what }{ $filters }?
unsub_all_confirm = Удалить { $n ->
        [one] { $n } подписку
        [few] все { $n } подписки
        [other] все { $n } подписки
       *[many] все { $n } подписок
    }? Отменить это будет нельзя.
btn_delete_yes = 🗑 Удалить
btn_keep = Оставить
sub_kept = Оставлено.
btn_currency_switch = Показывать цены в { $currency }
btn_grouping_on = Собирать уведомления в одно сообщение
btn_grouping_off = Присылать каждое уведомление отдельно
tz_bad = Не знаю часовой пояс «{ $given }». Пришлите смещение от UTC, например <code>/settings tz +3</code> или <code>/settings tz -5</code>, или город: <code>/settings tz Новосибирск</code>.
history_one_point = { $gpu }: пока известна только одна цена — { $price } за GPU-час у { $provider } ({ $date }). Для графика нужна вторая точка: она появится со следующим изменением.
history_spot = {" "}· спот
history_cheapest_now = Дешевле всего сейчас: { $provider }, { $price } за GPU-час (жирная линия).

## скорость, ранжирование и доли карт (core.speed, core.ranking)
est_fit_tight = {" "}— впритык: без запаса
est_speed_title = <b>Скорость</b> ({ $concurrency } одновременно, контекст { $context } { $context ->
        [one] токен
        [few] токена
        [other] токена
       *[many] токенов
    }):
est_speed_line = • { $gpu } × { $count }: промпт { $prefill } ток/с · ответ { $decode } ток/с на пользователя · всего { $aggregate } ток/с{ $mark }
est_speed_target = 🎯 Цель: { $target }
est_speed_keeps_mark = {" "}✓
est_speed_slow_mark = {" "}(не успевает за целью)
est_not_fitting_mark = {" "}(не помещается)
est_job_cost = {" "}· задача ~{ $cost }
offer_what_slice = { $gpu }, { $share }% одной карты (доля vGPU)
offer_spot = {" "}· <i>спот: могут прервать</i>
inline_spot = {" "}(спот)
offer_tight = {" "}· ⚠️ <i>впритык: без запаса</i>
inline_tight = {" "}(впритык)
list_and = { $head } и { $last }
label_ctx_io = контекст { $ctx } (вход { $prompt } + выход { $output })
btn_open_market = 📊 Открыть рынок
menu_market = Рынок
label_ctx = контекст { $ctx }
label_batch = батч { $n }
label_gpus = { $n } GPU
