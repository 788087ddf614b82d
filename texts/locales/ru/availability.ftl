# Статистика наличия (storage/availability.py, bot/availability_view.py): длительности, строка в оповещении, метки, /when.
avail_minutes = { $n ->
    [one] { $n } минуту
    [few] { $n } минуты
    [other] { $n } минуты
   *[many] { $n } минут
}
avail_hours = { $n ->
    [one] { $n } час
    [few] { $n } часа
    [other] { $n } часа
   *[many] { $n } часов
}
avail_days = { $n ->
    [one] { $n } день
    [few] { $n } дня
    [other] { $n } дня
   *[many] { $n } дней
}
avail_alert_short = ⏱ За 7 дней появлялось { $n ->
    [one] { $n } раз
    [few] { $n } раза
    [other] { $n } раза
   *[many] { $n } раз
}, держалось в среднем { $stay } — бронируйте сразу
avail_alert_normal = ⏱ За 7 дней появлялось { $n ->
    [one] { $n } раз
    [few] { $n } раза
    [other] { $n } раза
   *[many] { $n } раз
}, держалось в среднем { $stay }
avail_alert_long = ⏱ Обычно держится днями
avail_mark_short = ⚡
avail_mark_legend = ⚡ — обычно разбирают за час
when_usage = Назовите GPU или задачу, можно с ценовым порогом, например <code>/when H100 до $2.5</code> или <code>/when 70B QLoRA до 250 ₽</code>.
when_unknown = Не знаю GPU или задачу «{ $text }». Попробуйте, например, <code>/when H100</code> или <code>/when 13B LoRA</code>.
when_nothing_fits = Ни одна конфигурация GPU не подходит для «{ $text }».
when_no_history = Истории наличия пока нет ({ $what }): бот ещё не видел такого ни у одного из провайдеров.
when_what_gpu = { $gpu } × { $count }
when_what_workload = конфигурация под { $workload }
when_under = {" "}дешевле { $cap } за GPU-час
when_under_whole = {" "}дешевле { $cap } в час за всю конфигурацию
when_under_month = {" "}дешевле { $cap } за GPU в месяц
when_under_whole_month = {" "}дешевле { $cap } в месяц за всю конфигурацию
when_filters = {" "}({ $filters })
when_share = За { $days ->
    [one] последний { $days } день
    [few] последние { $days } дня
    [other] последние { $days } дня
   *[many] последние { $days } дней
} { $what } была в наличии { $share } времени
when_share_thin = За { $observed } наблюдений { $what } была в наличии { $share } времени
when_comeback = после распродажи снова появлялась в среднем через { $gap }
when_stay = обычно держалась в среднем { $stay }
when_now_out = сейчас: нет в наличии уже { $since }
when_now_out_atleast = сейчас: нет в наличии не меньше { $since }
when_now_in = сейчас: в наличии уже { $since }, от { $price } за GPU-час
when_now_in_atleast = сейчас: в наличии не меньше { $since }, от { $price } за GPU-час
when_now_unknown = сейчас: свежих опросов её провайдеров нет
when_providers = Провайдеры: { $names }
stats_header = Наличие за { $days } дн.: в наличии · появлялось · медиана / p90 · медиана возврата · цена сейчас / мин / медиана · тренд
trend_cheaper = дешевле
trend_steady = без изменений
trend_dearer = дороже
cmd_when = Когда GPU обычно бывает в наличии
cli_stats_help = Статистика наличия по группам предложений: доля времени в наличии, появления, сколько держится, как скоро возвращается, цены и тренд
cli_stats_bad_days = --days должно быть от 1 до { $high }.
cli_stats_none = Нет истории наличия под эти условия.
cli_stats_title = За { $days } дн., цены за GPU-час в { $currency } (сейчас/мин/медиана), тренд к медиане за 7 дней:
cli_stats_headers = провайдер|карта|GPU|регион|оплата|в наличии|появлялось|держится медиана/p90 (n)|возврат|сейчас|цена|тренд|наблюдали
# a table cell's duration: $n comes formatted in the language's number style
cli_stats_minutes = { $n } мин
cli_stats_hours = { $n } ч
cli_stats_days = { $n } дн.
cli_export_help = Открытые данные: снимки предложений и события изменений с указанного момента, потоком в CSV или JSON lines (схема: docs/open-data.md)
cli_export_bad_since = --since принимает длительность, например 30d, 12h или 2w.
cli_export_parquet_out = Parquet — двоичный файл: укажите его через --out FILE.
cli_export_no_parquet = Для выгрузки в Parquet нужен pyarrow: pip install 'gpuradar[parquet]'.
cli_export_done = { $n ->
    [one] Записана { $n } строка
    [few] Записано { $n } строки
    [other] Записано { $n } строки
   *[many] Записано { $n } строк
} в { $out }.
history_strip_title = Наличие по провайдерам (пусто — не наблюдали)
history_strip_in = в наличии
history_strip_out = нет в наличии
history_strip_share_of = { $share } (наблюдали { $observed })
history_strip_line = В наличии за { $days ->
    [one] последний { $days } день
    [few] последние { $days } дня
    [other] последние { $days } дня
   *[many] последние { $days } дней
} (доля времени наблюдений): { $shares }
