"""Every text the bot shows, in Russian and English (HTML parse mode).

`t(lang, key, **values)` formats one. Both languages must have the same keys and the same placeholders
(tests/test_bot_texts.py checks it), so a missing translation is a failing test, not a KeyError in a chat.
User input is escaped by the callers before it reaches a placeholder.
"""

from __future__ import annotations

from string import Formatter
from typing import Any

LANGS = ("ru", "en")

EXAMPLES = ("13B LoRA", "70B QLoRA ctx 8k", "Qwen2.5-72B inference 32k", "7B LoRA, 5k examples x 3 epochs")
EXAMPLES_RU = ("13B LoRA", "70B QLoRA ctx 8k", "инференс 70B int4, контекст 32k", "полное дообучение 7B")

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        # onboarding and help
        "start": (
            "👋 <b>GPU Radar</b> tells you how much VRAM an LLM job needs, which GPUs fit it, and where they can be "
            "rented right now.\n"
            "It watches Selectel, HOSTKEY, Vast.ai, RunPod, CloudRift and Vultr, and alerts you when a fitting GPU "
            "appears or gets cheaper.\n"
            "Try: <code>/estimate 70B QLoRA ctx 8k</code>, then <code>/subscribe 13B LoRA under $2/h</code>.\n\n"
            "More: /help"
        ),
        "help": (
            "<b>What I understand</b>\n"
            "/estimate &lt;workload&gt; — VRAM, GPUs that fit, cheapest offers\n"
            "/offers [GPU or workload] — offers in stock, cheapest first\n"
            "/subscribe &lt;workload or GPU&gt; [under 300 ₽/h] [on runpod] [x8] [hourly|monthly] [region eu]\n"
            "/subs — your subscriptions · /unsubscribe\n"
            "/history &lt;GPU&gt; — price chart · /providers — who is watched\n"
            "/settings — currency, quiet hours, grouping · /lang — language\n\n"
            "Examples: {examples}\n"
            "Inline: type <code>@{bot} 70B QLoRA</code> in any chat."
        ),
        "unknown": (
            "Sorry, I did not understand that. Send a workload or a command, for example:\n{examples}\n\n"
            "All commands: /help"
        ),
        "unknown_command": "I do not know that command. All commands: /help",
        "input_cut": "✂️ Your message was long: I read its first {limit} characters.",
        "error": "Something went wrong on my side; please try again in a minute.",
        # estimate
        "estimate_usage": "Tell me the workload after the command, for example:\n{examples}",
        "est_header": "🧮 <b>{workload}</b>",
        "est_vram": "VRAM per GPU: <b>{per_gpu} GiB</b> (recommended {recommended} GiB, with a safety margin)",
        "est_cpu_ram": "CPU RAM for offload: {gib} GiB",
        "est_breakdown": "Breakdown: {items}",
        "bd_weights": "weights",
        "bd_trainable_states": "gradients + optimizer",
        "bd_activations": "activations",
        "bd_logits": "logits",
        "bd_kv_cache": "KV cache",
        "bd_overhead": "overhead",
        "est_assumptions": "Assumed: {items}",
        "est_fits_title": "<b>Fits</b> (memory per GPU / usable):",
        "est_fit_line": "• {gpu} × {count}: {per_gpu} / {usable} GiB ({util}%)",
        "est_fits_more": "…and {n} more configurations",
        "est_no_fit": "Nothing fits in one node of up to 8 GPUs.",
        "est_offers_title": "<b>Cheapest in stock now</b> (per hour · per month):",
        "est_no_offers": "No fitting offer is in stock right now. Tap “Notify me” and I will write when one appears.",
        "est_time_title": "<b>Time</b> for {tokens} training tokens:",
        "est_time_line": "• {gpu} × {count}: ~{hours} h{cost}",
        "est_time_cost": ", ~{cost} at the cheapest offer",
        "offer_line": "• {provider}: {gpu} × {count}{location} — <b>{per_hour}</b>/h · {per_month}/mo · {link}",
        "offer_link": "<a href=\"{url}\">order</a>",
        "offer_nolink": "no link",
        "btn_notify": "🔔 Notify me when it is available",
        "btn_more_offers": "More offers ›",
        # offers
        "offers_title": "<b>In stock{filter}</b>, cheapest per GPU-hour first — page {page}/{pages}:",
        "offers_filter": " for {what}",
        "offers_none": "No offers in stock{filter} right now. /subscribe and I will tell you when one appears.",
        "btn_prev": "‹ Back",
        "btn_next": "Next ›",
        "unknown_gpu": "I do not know a GPU called “{name}”. Try, for example: H100, A100 80GB, RTX 4090, L40S.",
        # subscribe
        "sub_ask_kind": "What should I watch for you?",
        "btn_kind_workload": "A workload (e.g. 13B LoRA)",
        "btn_kind_gpu": "A GPU model",
        "sub_ask_workload": "Send the workload, for example:\n{examples}",
        "sub_ask_gpu": "Choose a GPU or send its name:",
        "sub_ask_price": "Highest price per GPU-hour, in {currency}?",
        "btn_any_price": "Any price",
        "sub_ask_provider": "Which providers?",
        "btn_any_provider": "All providers",
        "btn_cancel": "Cancel",
        "sub_cancelled": "Cancelled. Nothing was changed.",
        "sub_bad_price": "Send a number such as 300 or 2.5, or tap a button.",
        "sub_saved": "✅ Now watching: {what}{filters}.\nSubscriptions: {n} of {limit}. Manage them with /subs.",
        "sub_exists": "ℹ️ You already watch this: {what}{filters}.",
        "sub_matches_now": "<b>Already matching now:</b>",
        "sub_no_matches_now": "Nothing matches right now; I will write as soon as something does.",
        "sub_limit": "You already have {limit} subscriptions, the maximum. Delete one in /subs first.",
        "sub_need_gib": "needs {gib} GiB per GPU",
        "sub_need_none": "fits no single GPU; watching multi-GPU configurations",
        "f_price": " · up to {price}/GPU-h",
        "f_providers": " · on {providers}",
        "f_count": " · × {count} GPUs",
        "f_billing": " · {billing}",
        "f_region": " · region {region}",
        "billing_hourly": "hourly",
        "billing_monthly": "monthly",
        "billing_spot": "spot",
        "deep_link_bad": "This link is broken or has expired. Send /subscribe with the workload instead.",
        # subs
        "subs_empty": "You have no subscriptions. Try <code>/subscribe 13B LoRA</code> or "
                      "<code>/subscribe H100</code>.",
        "subs_title": "<b>Your subscriptions</b> ({n} of {limit}):",
        "subs_line": "{n}. {what}{filters}{paused}",
        "subs_paused": " ⏸ paused",
        "btn_pause": "⏸ {n}",
        "btn_resume": "▶️ {n}",
        "btn_delete": "🗑 {n}",
        "sub_paused": "Paused.",
        "sub_resumed": "Resumed.",
        "sub_deleted": "Deleted.",
        "sub_not_found": "That subscription no longer exists.",
        "unsub_usage": "Send <code>/unsubscribe N</code> (the number from /subs) or <code>/unsubscribe all</code>.",
        "unsub_done": "Subscription {n} deleted.",
        "unsub_all_done": "All {n} subscriptions deleted.",
        # bounds, abuse and privacy (issue 13)
        "subs_page": "— page {page}/{pages}",
        "subs_in_group": " 👥 alerts to a group",
        "sub_group_note": "🔒 Alerts for this subscription will come to your private chat with me (open it and "
                          "press Start if you have not yet). To get them in this group instead, tap the button.",
        "btn_alerts_here": "🔔 Send its alerts to this group",
        "alerts_here_done": "Done: alerts for this subscription will be posted in this group.",
        "button_stale": "This button is out of date. Send the command again.",
        "sub_bad_count": "The number of GPUs must be between {low} and {high}.",
        "sub_bad_price_cap": "The price cap must be above 0 and at most {high} per GPU-hour.",
        "rate_limited": "⏳ Too many requests in a row. Please try again in {seconds} s.",
        # history
        "history_usage": "Name a GPU, for example <code>/history H100</code>.",
        "history_empty": "No price history for {gpu} yet.",
        "history_caption": "{gpu}: cheapest in-stock price per GPU-hour by provider, {currency}",
        "chart_y": "{currency} per GPU-hour",
        "chart_x": "date (UTC)",
        # providers
        "providers_title": "<b>Providers</b>:",
        "provider_ok": "✅ {name} — last success {when}",
        "provider_degraded": "⚠️ {name} — degraded since {since}: {reason}; last success {when}",
        "provider_unknown": "⏳ {name} — not polled yet",
        "never": "never",
        # settings and language
        "settings_title": (
            "<b>Settings</b>\nCurrency: {currency}\nQuiet hours: {quiet}\nAlert grouping: {grouping}\n\n"
            "Quiet hours: send <code>/settings quiet 23-8</code> (your local time, UTC{tz}) or "
            "<code>/settings quiet off</code>."
        ),
        "quiet_off": "off",
        "quiet_range": "{start}:00–{end}:00",
        "on": "on",
        "off": "off",
        "btn_currency": "Currency: {currency}",
        "btn_grouping": "Grouping: {state}",
        "settings_saved": "Saved.",
        "quiet_bad": "Send quiet hours as two hours, e.g. <code>/settings quiet 23-8</code>, or "
                     "<code>/settings quiet off</code>.",
        "lang_choose": "Choose the language:",
        "lang_set": "Language: English.",
        # admin
        "admin_stats": "Users: {users} ({active_users} active)\nSubscriptions: {subscriptions} "
                       "({active_subscriptions} active)\nIn-stock offers cached: {offers}",
        "admin_testalert": "🔔 Test alert: the alert path to this chat works.",
        "admin_degraded": "⚠️ Provider {name} has been degraded for {minutes} min: {reason}",
        # inline
        "inline_example_title": "{example}",
        "inline_example_desc": "Type a workload: model size, method, context…",
        "inline_syntax_title": "I could not read “{query}”",
        "inline_syntax_desc": "Examples: 13B LoRA · 70B QLoRA ctx 8k · Qwen2.5-72B inference 32k",
        "inline_est_title": "{workload}: {per_gpu} GiB per GPU",
        "inline_est_desc": "Fits: {fits}",
        "inline_offer_title": "{gpu} × {count} — {per_hour}/h at {provider}",
        "inline_offer_desc": "{per_month}/mo{location} · fits {workload}",
        "btn_subscribe": "🔔 Subscribe",
        # command menu
        "cmd_start": "What the bot does",
        "cmd_estimate": "VRAM and GPUs for a workload",
        "cmd_offers": "Offers in stock, cheapest first",
        "cmd_subscribe": "Watch a workload or a GPU",
        "cmd_subs": "Your subscriptions",
        "cmd_unsubscribe": "Delete subscriptions",
        "cmd_history": "Price chart of a GPU",
        "cmd_providers": "Watched providers and their health",
        "cmd_settings": "Currency, quiet hours, grouping",
        "cmd_lang": "Language",
        "cmd_help": "Help and examples",
        # units
        "per_hour": "/h",
        "per_month": "/mo",
    },
    "ru": {
        "start": (
            "👋 <b>GPU Radar</b> считает, сколько видеопамяти нужно под задачу с LLM, какие GPU подходят и где их "
            "можно арендовать прямо сейчас.\n"
            "Я слежу за Selectel, HOSTKEY, Vast.ai, RunPod, CloudRift и Vultr и пишу, когда подходящая GPU "
            "появляется или дешевеет.\n"
            "Попробуйте: <code>/estimate 70B QLoRA ctx 8k</code>, затем <code>/subscribe 13B LoRA до 300 ₽/ч</code>."
            "\n\nПодробнее: /help"
        ),
        "help": (
            "<b>Что я понимаю</b>\n"
            "/estimate &lt;задача&gt; — видеопамять, подходящие GPU, самые дешёвые предложения\n"
            "/offers [GPU или задача] — предложения в наличии, от дешёвых\n"
            "/subscribe &lt;задача или GPU&gt; [до 300 ₽/ч] [на runpod] [x8] [почасово|помесячно] [регион msk]\n"
            "/subs — ваши подписки · /unsubscribe\n"
            "/history &lt;GPU&gt; — график цен · /providers — за кем я слежу\n"
            "/settings — валюта, тихие часы, группировка · /lang — язык\n\n"
            "Примеры: {examples}\n"
            "В любом чате: <code>@{bot} 70B QLoRA</code>."
        ),
        "unknown": (
            "Простите, я не понял. Пришлите задачу или команду, например:\n{examples}\n\n"
            "Все команды: /help"
        ),
        "unknown_command": "Такой команды я не знаю. Все команды: /help",
        "input_cut": "✂️ Сообщение длинное: я прочитал первые {limit} символов.",
        "error": "У меня что-то пошло не так; попробуйте, пожалуйста, через минуту.",
        "estimate_usage": "Напишите задачу после команды, например:\n{examples}",
        "est_header": "🧮 <b>{workload}</b>",
        "est_vram": "Видеопамять на GPU: <b>{per_gpu} ГиБ</b> (рекомендуется {recommended} ГиБ, с запасом)",
        "est_cpu_ram": "Оперативная память для offload: {gib} ГиБ",
        "est_breakdown": "Из чего: {items}",
        "bd_weights": "веса",
        "bd_trainable_states": "градиенты + оптимизатор",
        "bd_activations": "активации",
        "bd_logits": "логиты",
        "bd_kv_cache": "KV-кэш",
        "bd_overhead": "накладные",
        "est_assumptions": "Допущения: {items}",
        "est_fits_title": "<b>Подходят</b> (память на GPU / доступно):",
        "est_fit_line": "• {gpu} × {count}: {per_gpu} / {usable} ГиБ ({util}%)",
        "est_fits_more": "…и ещё {n} конфигураций",
        "est_no_fit": "Ничто не помещается в один сервер до 8 GPU.",
        "est_offers_title": "<b>Дешевле всего в наличии</b> (в час · в месяц):",
        "est_no_offers": "Подходящих предложений в наличии сейчас нет. Нажмите «Сообщить», и я напишу, когда появятся.",
        "est_time_title": "<b>Время</b> на {tokens} токенов обучения:",
        "est_time_line": "• {gpu} × {count}: ~{hours} ч{cost}",
        "est_time_cost": ", ~{cost} по самому дешёвому предложению",
        "offer_line": "• {provider}: {gpu} × {count}{location} — <b>{per_hour}</b>/ч · {per_month}/мес · {link}",
        "offer_link": "<a href=\"{url}\">заказать</a>",
        "offer_nolink": "без ссылки",
        "btn_notify": "🔔 Сообщить, когда появится",
        "btn_more_offers": "Ещё предложения ›",
        "offers_title": "<b>В наличии{filter}</b>, от дешёвых за GPU-час — страница {page}/{pages}:",
        "offers_filter": " для {what}",
        "offers_none": "Сейчас в наличии нет предложений{filter}. /subscribe — и я сообщу, когда появятся.",
        "btn_prev": "‹ Назад",
        "btn_next": "Дальше ›",
        "unknown_gpu": "Не знаю GPU «{name}». Попробуйте, например: H100, A100 80GB, RTX 4090, L40S.",
        "sub_ask_kind": "За чем следить?",
        "btn_kind_workload": "За задачей (например, 13B LoRA)",
        "btn_kind_gpu": "За моделью GPU",
        "sub_ask_workload": "Пришлите задачу, например:\n{examples}",
        "sub_ask_gpu": "Выберите GPU или пришлите название:",
        "sub_ask_price": "Максимальная цена за GPU-час, {currency}?",
        "btn_any_price": "Любая цена",
        "sub_ask_provider": "Какие провайдеры?",
        "btn_any_provider": "Все провайдеры",
        "btn_cancel": "Отмена",
        "sub_cancelled": "Отменено, ничего не изменилось.",
        "sub_bad_price": "Пришлите число, например 300 или 2.5, или нажмите кнопку.",
        "sub_saved": "✅ Слежу: {what}{filters}.\nПодписок: {n} из {limit}. Управление — /subs.",
        "sub_exists": "ℹ️ Вы уже следите за этим: {what}{filters}.",
        "sub_matches_now": "<b>Уже подходит сейчас:</b>",
        "sub_no_matches_now": "Сейчас ничего не подходит; напишу, как только появится.",
        "sub_limit": "У вас уже {limit} подписок — это максимум. Сначала удалите одну в /subs.",
        "sub_need_gib": "нужно {gib} ГиБ на GPU",
        "sub_need_none": "не помещается в одну GPU; слежу за конфигурациями из нескольких GPU",
        "f_price": " · до {price}/GPU-ч",
        "f_providers": " · у {providers}",
        "f_count": " · × {count} GPU",
        "f_billing": " · {billing}",
        "f_region": " · регион {region}",
        "billing_hourly": "почасово",
        "billing_monthly": "помесячно",
        "billing_spot": "spot",
        "deep_link_bad": "Ссылка повреждена или устарела. Пришлите /subscribe с описанием задачи.",
        "subs_empty": "Подписок нет. Попробуйте <code>/subscribe 13B LoRA</code> или <code>/subscribe H100</code>.",
        "subs_title": "<b>Ваши подписки</b> ({n} из {limit}):",
        "subs_line": "{n}. {what}{filters}{paused}",
        "subs_paused": " ⏸ на паузе",
        "btn_pause": "⏸ {n}",
        "btn_resume": "▶️ {n}",
        "btn_delete": "🗑 {n}",
        "sub_paused": "Поставлено на паузу.",
        "sub_resumed": "Возобновлено.",
        "sub_deleted": "Удалено.",
        "sub_not_found": "Этой подписки уже нет.",
        "unsub_usage": "Пришлите <code>/unsubscribe N</code> (номер из /subs) или <code>/unsubscribe all</code>.",
        "unsub_done": "Подписка {n} удалена.",
        "unsub_all_done": "Удалены все подписки: {n}.",
        # bounds, abuse and privacy (issue 13)
        "subs_page": "— страница {page}/{pages}",
        "subs_in_group": " 👥 оповещения в группу",
        "sub_group_note": "🔒 Оповещения по этой подписке придут вам в личный чат со мной (откройте его и нажмите "
                          "«Старт», если ещё не сделали этого). Чтобы получать их в этой группе, нажмите кнопку.",
        "btn_alerts_here": "🔔 Присылать оповещения в эту группу",
        "alerts_here_done": "Готово: оповещения по этой подписке будут приходить в эту группу.",
        "button_stale": "Эта кнопка устарела. Отправьте команду ещё раз.",
        "sub_bad_count": "Число GPU должно быть от {low} до {high}.",
        "sub_bad_price_cap": "Ограничение цены должно быть больше 0 и не больше {high} за GPU-час.",
        "rate_limited": "⏳ Слишком много запросов подряд. Попробуйте через {seconds} с.",
        "history_usage": "Укажите GPU, например <code>/history H100</code>.",
        "history_empty": "Истории цен для {gpu} пока нет.",
        "history_caption": "{gpu}: самая низкая цена в наличии за GPU-час по провайдерам, {currency}",
        "chart_y": "{currency} за GPU-час",
        "chart_x": "дата (UTC)",
        "providers_title": "<b>Провайдеры</b>:",
        "provider_ok": "✅ {name} — последний успешный опрос {when}",
        "provider_degraded": "⚠️ {name} — сбоит с {since}: {reason}; последний успех {when}",
        "provider_unknown": "⏳ {name} — ещё не опрашивался",
        "never": "никогда",
        "settings_title": (
            "<b>Настройки</b>\nВалюта: {currency}\nТихие часы: {quiet}\nГруппировка уведомлений: {grouping}\n\n"
            "Тихие часы: пришлите <code>/settings quiet 23-8</code> (ваше время, UTC{tz}) или "
            "<code>/settings quiet off</code>."
        ),
        "quiet_off": "выключены",
        "quiet_range": "{start}:00–{end}:00",
        "on": "вкл",
        "off": "выкл",
        "btn_currency": "Валюта: {currency}",
        "btn_grouping": "Группировка: {state}",
        "settings_saved": "Сохранено.",
        "quiet_bad": "Пришлите тихие часы двумя числами, например <code>/settings quiet 23-8</code>, или "
                     "<code>/settings quiet off</code>.",
        "lang_choose": "Выберите язык:",
        "lang_set": "Язык: русский.",
        "admin_stats": "Пользователи: {users} (активных {active_users})\nПодписки: {subscriptions} "
                       "(активных {active_subscriptions})\nПредложений в наличии в кэше: {offers}",
        "admin_testalert": "🔔 Тестовое уведомление: путь уведомлений до этого чата работает.",
        "admin_degraded": "⚠️ Провайдер {name} сбоит уже {minutes} мин: {reason}",
        "inline_example_title": "{example}",
        "inline_example_desc": "Опишите задачу: размер модели, метод, контекст…",
        "inline_syntax_title": "Не понял «{query}»",
        "inline_syntax_desc": "Примеры: 13B LoRA · 70B QLoRA ctx 8k · инференс 70B int4, контекст 32k",
        "inline_est_title": "{workload}: {per_gpu} ГиБ на GPU",
        "inline_est_desc": "Подходят: {fits}",
        "inline_offer_title": "{gpu} × {count} — {per_hour}/ч у {provider}",
        "inline_offer_desc": "{per_month}/мес{location} · подходит для {workload}",
        "btn_subscribe": "🔔 Подписаться",
        "cmd_start": "Что умеет бот",
        "cmd_estimate": "Видеопамять и GPU под задачу",
        "cmd_offers": "Предложения в наличии, от дешёвых",
        "cmd_subscribe": "Следить за задачей или GPU",
        "cmd_subs": "Ваши подписки",
        "cmd_unsubscribe": "Удалить подписки",
        "cmd_history": "График цен на GPU",
        "cmd_providers": "Провайдеры и их состояние",
        "cmd_settings": "Валюта, тихие часы, группировка",
        "cmd_lang": "Язык",
        "cmd_help": "Помощь и примеры",
        "per_hour": "/ч",
        "per_month": "/мес",
    },
}


def t(lang: str, key: str, **values: Any) -> str:
    """The text `key` in `lang` (English when the language is unknown), formatted with `values`."""
    table = TEXTS.get(lang) or TEXTS["en"]
    return table[key].format(**values) if values else table[key]


def examples(lang: str) -> tuple[str, ...]:
    return EXAMPLES_RU if lang == "ru" else EXAMPLES


def examples_block(lang: str) -> str:
    return "\n".join(f"<code>{e}</code>" for e in examples(lang))


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}
