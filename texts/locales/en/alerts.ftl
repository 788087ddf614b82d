alert_appeared = 🟢 <b>Available: { $what }</b> at { $provider }{ $where }
alert_back_in_stock = 🔁 <b>Back in stock: { $what }</b> at { $provider }{ $where }
alert_price_drop = 📉 <b>Cheaper: { $what }</b> at { $provider }{ $where }
alert_where = {" "}({ $location })
alert_billing_monthly = {" "}· monthly
alert_billing_spot = {" "}· spot/interruptible
alert_price = 💰 { $per_gpu_hour }/GPU-hour · { $per_hour }/h · { $per_month }/month
alert_vat = {" "}(VAT { $rate }% included)
alert_price_slice = 💰 { $per_hour }/h · { $per_month }/month
alert_was = {"   "}was { $old } per GPU-hour ({ $change })
alert_was_slice = {"   "}was { $old }/h for this share of the card ({ $change })
alert_fits_workload = ✅ { $query }: needs { $need } GiB per GPU; { $gpu } gives { $have } GiB — fits
alert_tight = {" "}(⚠️ tight: no safety margin)
alert_keeps_up = {" "}and keeps up with the target
alert_fits_gpu = ✅ You watch: { $query }
alert_under_cap = {" "}(under your { $cap }/GPU-hour)
alert_under_cap_total = {" "}(under your { $cap }/h for the whole configuration)
alert_under_cap_month = {" "}(under your { $cap } per GPU per month)
alert_under_cap_total_month = {" "}(under your { $cap }/month for the whole configuration)
alert_order = 🔗 <a href="{ $url }">Order at { $provider }</a>
alert_group_header = 🔔 <b>{ $n } { $n ->
        [one] offer matches
       *[other] offers match
    } your subscriptions</b>
alert_more = ➕ { $n ->
        [one] { $n } more offer matches: /offers lists it
       *[other] { $n } more offers match: /offers lists them
    } with the rest in stock, cheapest first.
alert_stop = 🔕 Stop: { $query }
alert_stopped = 🔕 Alerts for “{ $query }” are paused. Resume them in /subs.
alert_stop_gone = This subscription no longer exists.
alert_stop_already = Already paused. Resume it in /subs.
