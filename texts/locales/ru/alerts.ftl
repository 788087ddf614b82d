alert_appeared = 🟢 <b>В наличии: { $what }</b> у { $provider }{ $where }
alert_back_in_stock = 🔁 <b>Снова в наличии: { $what }</b> у { $provider }{ $where }
alert_price_drop = 📉 <b>Подешевело: { $what }</b> у { $provider }{ $where }
alert_where = {" "}({ $location })
alert_billing_monthly = {" "}· помесячно
alert_billing_spot = {" "}· spot/прерываемые
alert_price = 💰 { $per_gpu_hour } за GPU-час · { $per_hour }/ч · { $per_month }/мес
alert_vat = {" "}(с НДС { $rate }%)
alert_price_slice = 💰 { $per_hour }/ч · { $per_month }/мес
alert_was = {"   "}было { $old } за GPU-час ({ $change })
alert_was_slice = {"   "}было { $old }/ч за эту долю карты ({ $change })
alert_fits_workload = ✅ { $query }: нужно { $need } ГиБ на GPU; у { $gpu } — { $have } ГиБ, подходит
alert_tight = {" "}(⚠️ впритык: без запаса)
alert_keeps_up = {" "}и успевает за целью
alert_fits_gpu = ✅ Вы следите: { $query }
alert_under_cap = {" "}(дешевле вашего порога { $cap } за GPU-час)
alert_under_cap_total = {" "}(дешевле вашего порога { $cap }/ч за всю конфигурацию)
alert_under_cap_month = {" "}(дешевле вашего порога { $cap } за GPU в месяц)
alert_under_cap_total_month = {" "}(дешевле вашего порога { $cap }/мес за всю конфигурацию)
alert_order = 🔗 <a href="{ $url }">Заказать у { $provider }</a>
alert_group_header = 🔔 <b>{ $n ->
        [one] { $n } подходящее предложение
        [few] { $n } подходящих предложения
        [many] { $n } подходящих предложений
       *[other] { $n } подходящих предложения
    }</b>
alert_more = ➕ { $n ->
        [one] И ещё { $n } подходящее предложение
        [few] И ещё { $n } подходящих предложения
        [many] И ещё { $n } подходящих предложений
       *[other] И ещё { $n } подходящих предложения
    }: все предложения в наличии — в /offers, самые дешёвые первыми.
alert_stop = 🔕 Не присылать: { $query }
alert_stopped = 🔕 Оповещения по «{ $query }» приостановлены. Возобновить — в /subs.
alert_stop_gone = Этой подписки больше нет.
alert_stop_already = Уже на паузе. Возобновить — в /subs.
