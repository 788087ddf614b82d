// GPU Radar's market page: the Telegram Mini App and the public read-only view. Vanilla JS, no build step, no CDN.
// Every text from the server is set with textContent (never as HTML); the API answers JSON only.
"use strict";
(function () {
  const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;
  const hash = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  // Telegram hands the page its signed launch data: through telegram-web-app.js when loaded, else in the hash.
  const initData = (tg && tg.initData) || hash.get("tgWebAppData") || "";
  const state = { texts: {}, lang: "en", currency: "RUB", matrix: null, estimate: null, signedIn: false,
                  open: new Set(), range: "7d", historyGpu: null };

  function theme() {
    let params = tg && tg.themeParams ? tg.themeParams : null;
    if (!params && hash.get("tgWebAppThemeParams")) {
      try { params = JSON.parse(hash.get("tgWebAppThemeParams")); } catch (e) { params = null; }
    }
    if (!params) return;
    const map = { bg_color: "--bg", text_color: "--text", hint_color: "--hint", link_color: "--link",
                  button_color: "--button", button_text_color: "--button-text", secondary_bg_color: "--secondary-bg" };
    for (const [k, v] of Object.entries(map)) {
      if (typeof params[k] === "string" && /^#[0-9a-fA-F]{3,8}$/.test(params[k])) {
        document.documentElement.style.setProperty(v, params[k]);
      }
    }
  }

  function launchLang() {
    const asked = query.get("lang");
    if (asked === "ru" || asked === "en") return asked;
    let code = "";
    try {
      const user = new URLSearchParams(initData).get("user");
      if (user) code = JSON.parse(user).language_code || "";
    } catch (e) { code = ""; }
    code = (code || navigator.language || "en").toLowerCase().split("-")[0];
    return ["ru", "uk", "be", "kk"].includes(code) ? "ru" : "en";
  }

  const T = (key) => state.texts[key] || key;
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function status(text, isError) {
    const s = $("status");
    s.textContent = text || "";
    s.className = isError ? "hint error" : "hint";
  }

  async function api(path, options) {
    const opts = Object.assign({ headers: {} }, options || {});
    if (initData) opts.headers["X-Telegram-Init-Data"] = initData;
    if (opts.body && typeof opts.body !== "string") {
      opts.body = JSON.stringify(opts.body);
      opts.headers["Content-Type"] = "application/json";
    }
    const sep = path.includes("?") ? "&" : "?";
    const response = await fetch(path + sep + "lang=" + state.lang, opts);
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok && response.status !== 422) {
      const own = { 429: "web_rate_limited", 403: "web_forbidden" }[response.status];
      const err = new Error(own ? T(own) : (body && body.message) || T("web_error"));
      err.status = response.status;
      throw err;
    }
    return { status: response.status, body };
  }

  function when(iso) {
    const d = new Date(iso);
    return d.toLocaleDateString(state.lang === "ru" ? "ru-RU" : "en-GB", { day: "numeric", month: "short" });
  }

  // ------------------------------------------------------------------------------------------------ the matrix
  function cellNode(cell, gpuIds, provider, label) {
    if (!cell) return el("td", { class: "cell empty" }, "");
    if (!cell.in_stock) {
      return el("td", { class: "cell out", title: T("web_out_of_stock") },
                el("span", { class: "meta" }, T("web_last_seen") + " " + when(cell.last_seen)));
    }
    const count = cell.fraction ? Math.max(1, Math.round(cell.fraction * 100)) + "%" : "×" + cell.count;
    const meta = [count, cell.region_name || cell.region || ""].filter(Boolean).join(" · ");
    const td = el("td", { class: "cell", "data-gpu": gpuIds.join(","), "data-provider": provider,
                          "data-price": cell.per_gpu_hour[state.currency] },
                  el("div", { class: "price" }, cell.text[state.currency]),
                  el("div", { class: "meta" }, meta),
                  cell.spot ? el("div", { class: "spot" }, T("web_spot")) : null);
    td.addEventListener("click", () => { selectCell(td); showOffers(gpuIds, provider, 0, label); });
    return td;
  }

  function selectCell(td) {
    document.querySelectorAll("td.cell.selected").forEach((n) => n.classList.remove("selected"));
    td.classList.add("selected");
  }

  function renderMatrix() {
    const m = state.matrix;
    const table = $("matrix");
    table.replaceChildren();
    if (!m) return;
    const narrowed = state.estimate && state.estimate.ok ? state.estimate.cells : null;
    const providers = m.providers.filter((p) => !narrowed ||
      Object.values(narrowed).some((cells) => cells[p.id]));
    const head = el("tr", {}, el("th", { class: "card" }, T("web_card")));
    for (const p of providers) head.append(el("th", { "data-provider": p.id }, p.name));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    for (const fam of m.families) {
      const variants = narrowed ? fam.variants.filter((v) => narrowed[v.id]) : fam.variants;
      if (!variants.length) continue;
      const ids = variants.map((v) => v.id);
      const multi = fam.variants.length > 1;
      const open = state.open.has(fam.family);
      const name = el("th", { class: "card", title: multi ? T("web_expand") : T("web_history") },
                      el("span", { class: "toggle" }, multi ? (open ? "▾" : "▸") : ""), fam.family);
      name.addEventListener("click", () => {
        if (multi) { open ? state.open.delete(fam.family) : state.open.add(fam.family); renderMatrix(); }
        if (!multi) showHistory(ids[0], fam.family);
      });
      const row = el("tr", { class: "family", "data-family": fam.family }, name);
      for (const p of providers) {
        let cell = fam.cells[p.id];
        if (narrowed) cell = bestOf(variants.map((v) => narrowed[v.id] && narrowed[v.id][p.id]));
        row.append(cellNode(cell, ids, p.id, fam.family));
      }
      body.append(row);
      if (!multi || !open) continue;
      for (const v of variants) {
        const vname = el("th", { class: "card", title: T("web_history") }, v.name);
        vname.addEventListener("click", () => showHistory(v.id, v.name));
        const vrow = el("tr", { class: "variant", "data-gpu": v.id }, vname);
        for (const p of providers) {
          vrow.append(cellNode(narrowed ? narrowed[v.id] && narrowed[v.id][p.id] : v.cells[p.id], [v.id], p.id,
                               v.name));
        }
        body.append(vrow);
      }
    }
    table.append(body);
  }

  function bestOf(cells) {
    let best = null;
    for (const c of cells) {
      if (!c) continue;
      const price = c.per_gpu_hour[state.currency];
      if (!best || (price !== null && (best.per_gpu_hour[state.currency] === null ||
                                       price < best.per_gpu_hour[state.currency]))) best = c;
    }
    return best;
  }

  // ------------------------------------------------------------------------------------------- one cell's offers
  function offerItem(o, extra) {
    const p = o.prices[state.currency];
    const other = o.prices[state.currency === "RUB" ? "USD" : "RUB"];
    const li = el("li", { class: "offer", "data-key": o.key, "data-gpu": o.gpu || "" },
      el("div", {}, el("b", {}, o.provider_name), " · ", o.what, o.region_name ? " (" + o.region_name + ")" : "",
         o.spot ? el("span", { class: "spot" }, " · " + T("web_spot")) : null),
      el("div", {}, el("span", { class: "price" }, p.text.per_hour), " " + T("web_per_hour") + " · ",
         p.text.per_month + " " + T("web_per_month") + " · ",
         el("span", { class: "meta" }, other.text.per_hour + " / " + other.text.per_month)),
      el("div", { class: "meta" }, p.text.per_gpu_hour + " " + T("web_per_gpu_hour") + " · " +
         T("web_billing") + ": " + (o.billing_name || o.billing)),
      extra || null,
      o.url ? el("a", { href: o.url, target: "_blank", rel: "noopener noreferrer" }, T("web_order")) : null);
    return li;
  }

  async function showOffers(gpuIds, provider, offset, label) {
    const panel = $("panel");
    panel.hidden = false;
    panel.replaceChildren(el("p", { class: "hint" }, T("web_loading")));
    try {
      const { body } = await api("/api/offers?gpu=" + encodeURIComponent(gpuIds.join(",")) +
                                 "&provider=" + encodeURIComponent(provider) + "&currency=" + state.currency +
                                 "&offset=" + (offset || 0));
      const close = el("button", { class: "link", type: "button" }, T("web_close"));
      close.addEventListener("click", () => { panel.hidden = true; });
      const list = el("ul", { class: "list", id: "cell-offers" });
      for (const o of body.offers) list.append(offerItem(o));
      const hist = el("button", { class: "small ghost", type: "button", id: "cell-history" }, T("web_history"));
      const where = body.offers.length ? body.offers[0].provider_name : provider;
      hist.addEventListener("click", () => showHistory(gpuIds[0], label || "", provider, where));
      let sub = null;
      if (state.signedIn && label) {  // "Notify me" for the row's card (a family name covers its variants)
        sub = el("button", { class: "small", type: "button", id: "subscribe-row" }, T("web_subscribe_card"));
        sub.addEventListener("click", () => subscribe(label));
      }
      let more = null;
      if (body.next_offset !== null && body.next_offset !== undefined) {
        more = el("button", { class: "small ghost", type: "button", id: "cell-more" }, T("web_more"));
        more.addEventListener("click", () => showOffers(gpuIds, provider, body.next_offset, label));
      }
      const parts = [el("div", { class: "row" }, el("h2", {}, T("web_offers_title")),
                        el("span", { class: "spacer" }), sub, hist, close), list, more,
                     body.vat ? el("p", { class: "hint small" }, body.vat) : null];
      panel.replaceChildren(...parts.filter(Boolean));  // replaceChildren would write a null as "null"
      panel.scrollIntoView({ block: "nearest" });
    } catch (e) {
      panel.replaceChildren(el("p", { class: "error" }, e.message));
    }
  }

  // ------------------------------------------------------------------------------------------------ the workload
  async function runEstimate(text) {
    status(T("web_loading"));
    try {
      const { body } = await api("/api/estimate?currency=" + state.currency, { method: "POST", body: { text } });
      state.estimate = body;
      status("");
      renderEstimate();
      renderMatrix();
    } catch (e) {
      status(e.message, true);
    }
  }

  function renderEstimate() {
    const box = $("estimate");
    const est = state.estimate;
    $("workload-clear").hidden = !est;
    if (!est) { box.hidden = true; box.replaceChildren(); return; }
    box.hidden = false;
    if (!est.ok) { box.replaceChildren(el("p", { class: "error", id: "estimate-error" }, est.message)); return; }
    const parts = [el("h2", { id: "estimate-workload" }, est.workload),
                   el("p", {}, T("web_vram_per_gpu") + ": " + est.memory.per_gpu_gib + " GiB")];
    if (est.assumptions.length) {
      parts.push(el("p", { class: "hint small", id: "assumptions" }, T("web_assumptions") + ": " +
                    est.assumptions.join("; ")));
    }
    if (est.target) {  // a serving target said: the fits that keep up come first, the rest are marked
      parts.push(el("p", { id: "target" }, "🎯 " + T("web_target") + ": " + est.target));
    }
    if (est.fits.length) {
      const fits = el("ul", { class: "list small", id: "fits" });
      for (const f of est.fits.slice(0, 8)) {
        fits.append(el("li", { "data-gpu": f.gpu, "data-count": f.count },
          f.gpu_name + " × " + f.count + " — " + f.per_gpu_gib + " / " + f.usable_gib + " GiB",
          f.tight ? el("span", { class: "tight" }, " · " + T("web_tight")) : null,
          f.keeps_up === false ? el("span", { class: "slow" }, " · " + T("web_too_slow")) : null));
      }
      parts.push(el("h2", {}, T("web_fits_title")), fits);
    } else {
      const rem = el("ul", { class: "list", id: "remedies" });
      for (const r of est.remedies) rem.append(el("li", {}, r));
      parts.push(el("p", {}, T("web_remedies")), rem);
    }
    parts.push(el("h2", {}, T("web_fitting_offers")));
    if (est.filters) parts.push(el("p", { class: "hint small", id: "filters" }, est.filters));  // as the bot says it
    if (est.offers.length) {
      const list = el("ul", { class: "list", id: "fit-offers" });
      for (const o of est.offers.slice(0, 20)) {
        const bits = [T("web_vram_per_gpu") + " " + o.per_gpu_gib + " GiB"];
        if (o.hours !== null && o.hours !== undefined) {
          bits.push(T("web_job_time") + " " + o.hours.toFixed(1) + " " + T("web_hours_unit") +
                    (o.job_cost_text ? " · " + o.job_cost_text : ""));
        }
        if (o.decode_tokens_per_s) bits.push(o.decode_tokens_per_s + " " + T("web_speed"));
        list.append(offerItem(o, el("div", { class: "meta" }, bits.join(" · "),
                                    o.tight ? el("span", { class: "tight" }, " · " + T("web_tight")) : null)));
      }
      parts.push(list);
      if (est.vat) parts.push(el("p", { class: "hint small" }, est.vat));
    } else {
      parts.push(el("p", { class: "hint", id: "no-offers" }, T("web_no_offers")));
    }
    if (state.signedIn) {
      const sub = el("button", { type: "button", id: "subscribe" }, T("web_subscribe"));
      sub.addEventListener("click", () => subscribe(est.query));
      parts.push(sub);
    }
    box.replaceChildren(...parts);
  }

  // ------------------------------------------------------------------------------------------------- the history
  async function showHistory(gpu, label, provider, providerName) {
    state.historyGpu = gpu;
    state.historyLabel = label;
    state.historyProvider = provider || "";
    state.historyProviderName = providerName || "";
    const box = $("history");
    box.hidden = false;
    box.replaceChildren(el("p", { class: "hint" }, T("web_loading")));
    try {
      const { body } = await api("/api/history?gpu=" + encodeURIComponent(gpu) + "&range=" + state.range +
                                 "&currency=" + state.currency +
                                 (provider ? "&provider=" + encodeURIComponent(provider) : ""));
      renderHistory(body, label);
      box.scrollIntoView({ block: "nearest" });
    } catch (e) {
      box.replaceChildren(el("p", { class: "error" }, e.message));
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    return n;
  }

  function renderHistory(data, label) {
    const box = $("history");
    const ranges = el("div", { class: "ranges" });
    for (const r of ["24h", "7d", "30d"]) {
      const b = el("button", { type: "button", class: "small ghost" + (r === state.range ? " on" : ""),
                               "data-range": r }, T("web_range_" + r));
      b.addEventListener("click", () => {
        state.range = r; showHistory(state.historyGpu, label, state.historyProvider, state.historyProviderName);
      });
      ranges.append(b);
    }
    const close = el("button", { class: "link", type: "button" }, T("web_close"));
    close.addEventListener("click", () => { box.hidden = true; });
    const title = T("web_history") + " · " + label + (state.historyProviderName ? " · " + state.historyProviderName : "");
    const parts = [el("div", { class: "row" }, el("h2", { id: "history-title" }, title),
                      el("span", { class: "spacer" }), close), ranges];
    const kinds = Object.keys(data.series);
    const prices = kinds.flatMap((k) => data.series[k].map((p) => p.price)).filter((p) => p !== null);
    if (!prices.length) {
      parts.push(el("p", { class: "hint", id: "no-history" }, T("web_no_history")));
    } else {
      parts.push(chart(data, kinds, prices));
      const legend = el("div", { class: "legend" });
      for (const k of kinds) legend.append(el("span", { class: k }, k === "spot" ? "- - " + T("web_spot") :
                                                "— " + T("web_on_demand")));
      legend.append(el("span", { class: "meta" }, "▮ " + T("web_in_stock_strip")));
      parts.push(legend);
      const st = data.stats;
      if (st && st.share !== null && st.share !== undefined) {
        let line = T("web_stock_share") + ": " + Math.round(st.share * 100) + "%";
        if (st.median_stay) line += " · " + T("web_median_stay") + ": " + Math.round(st.median_stay / 60) + " " +
                                    T("web_minutes_unit");
        parts.push(el("p", { class: "hint small", id: "stock-stats" }, line));
      }
    }
    if (state.signedIn) {
      const sub = el("button", { type: "button", class: "small", id: "subscribe-card" }, T("web_subscribe_card"));
      sub.addEventListener("click", () => subscribe(label));
      parts.push(sub);
    }
    box.replaceChildren(...parts);
  }

  function chart(data, kinds, prices) {
    const W = 640, H = 220, L = 48, R = 8, TOP = 10, STRIP = 14, B = 34;
    const plotH = H - TOP - B - STRIP;
    const lo = Math.min(...prices), hi = Math.max(...prices);
    const pad = (hi - lo) * 0.1 || hi * 0.1 || 1;
    const y0 = Math.max(0, lo - pad), y1 = hi + pad;
    const t0 = Date.parse(data.since), t1 = Date.parse(data.until);
    const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
    const y = (p) => TOP + (1 - (p - y0) / (y1 - y0)) * plotH;
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": T("web_history") });
    root.append(svg("line", { class: "axis", x1: L, y1: TOP + plotH, x2: W - R, y2: TOP + plotH }));
    root.append(svg("line", { class: "axis", x1: L, y1: TOP, x2: L, y2: TOP + plotH }));
    const money = (p) => p === null ? "—" : (state.currency === "USD" ? "$" + p.toFixed(2) : p.toFixed(p < 100 ? 2 : 0) + " ₽");
    for (const p of [y0, (y0 + y1) / 2, y1]) {
      const tx = svg("text", { class: "label", x: 2, y: y(p) + 3 });
      tx.textContent = money(p);
      root.append(tx);
    }
    for (const t of [t0, (t0 + t1) / 2, t1]) {
      const tx = svg("text", { class: "label", x: Math.min(x(t), W - 60), y: H - 4 });
      tx.textContent = when(new Date(t).toISOString());
      root.append(tx);
    }
    const step = (t1 - t0) / Math.max(1, data.series[kinds[0]].length);
    for (const k of kinds) {
      let d = "", pen = false;
      for (const p of data.series[k]) {
        const t = Date.parse(p.at);
        if (p.price === null) { pen = false; continue; }
        d += (pen ? " L" : " M") + x(t).toFixed(1) + " " + y(p.price).toFixed(1) +
             " L" + x(t + step).toFixed(1) + " " + y(p.price).toFixed(1);
        pen = true;
      }
      if (d) root.append(svg("path", { class: "series " + k, d: d.trim(), "data-kind": k }));
    }
    // Availability: one strip per kind under the plot, opacity = the share of each bucket something was in stock.
    const stripTop = TOP + plotH + 4;
    kinds.forEach((k, i) => {
      const h = STRIP / kinds.length;
      for (const p of data.series[k]) {
        if (!p.in_stock) continue;
        const t = Date.parse(p.at);
        const r = svg("rect", { class: "stock " + k, x: x(t).toFixed(1), y: (stripTop + i * h).toFixed(1),
                                width: Math.max(1, x(t + step) - x(t)).toFixed(1), height: (h - 1).toFixed(1),
                                "fill-opacity": Math.max(0.15, p.in_stock).toFixed(2) });
        root.append(r);
      }
    });
    const cursor = svg("line", { class: "cursor", x1: -10, y1: TOP, x2: -10, y2: TOP + plotH });
    const value = svg("text", { class: "value", x: L + 4, y: TOP + 12, id: "chart-value" });
    root.append(cursor, value);
    const hover = (ev) => {
      const box = root.getBoundingClientRect();
      const px = ((ev.clientX - box.left) / box.width) * W;
      const t = t0 + ((px - L) / (W - L - R)) * (t1 - t0);
      const i = Math.min(data.series[kinds[0]].length - 1, Math.max(0, Math.floor((t - t0) / step)));
      cursor.setAttribute("x1", px); cursor.setAttribute("x2", px);
      const bits = kinds.map((k) => (k === "spot" ? T("web_spot") : T("web_on_demand")) + " " +
                                    money(data.series[k][i].price));
      value.textContent = when(data.series[kinds[0]][i].at) + ": " + bits.join(" · ");
    };
    root.addEventListener("mousemove", hover);
    root.addEventListener("touchmove", (ev) => { if (ev.touches[0]) hover(ev.touches[0]); }, { passive: true });
    return el("div", { id: "chart" }, root);
  }

  // ----------------------------------------------------------------------------------------------- subscriptions
  async function subscribe(text) {
    status(T("web_loading"));
    try {
      const { status: code, body } = await api("/api/subscriptions", { method: "POST", body: { text } });
      status(body.text || "", code === 422);
      renderSubs(body);
    } catch (e) {
      status(e.message, true);
    }
  }

  async function loadSubs() {
    try {
      const { body } = await api("/api/subscriptions");
      renderSubs(body);
    } catch (e) {
      status(e.message, true);
    }
  }

  async function act(path, method, body) {
    try {
      const { body: answer } = await api(path, { method, body });
      renderSubs(answer);
    } catch (e) {
      status(e.message, true);
    }
  }

  function renderSubs(data) {
    const box = $("subs");
    box.hidden = false;
    const list = el("ul", { class: "list", id: "subs-list" });
    for (const s of data.subscriptions) {
      const toggle = el("button", { type: "button", class: "small ghost" }, s.paused ? T("web_resume") : T("web_pause"));
      toggle.addEventListener("click", () => act("/api/subscriptions/" + s.id + "/pause", "POST", { paused: !s.paused }));
      const del = el("button", { type: "button", class: "small ghost" }, T("web_delete"));
      del.addEventListener("click", () => act("/api/subscriptions/" + s.id, "DELETE"));
      list.append(el("li", { "data-id": s.id, class: s.paused ? "paused" : "" },
        el("div", {}, s.n + ". " + s.what + (s.filters ? " " + s.filters : ""),
           s.paused ? el("span", { class: "meta" }, " · " + T("web_paused")) : null),
        el("div", { class: "row" }, toggle, del)));
    }
    box.replaceChildren(el("h2", {}, T("web_my_subs")),
                        data.subscriptions.length ? list : el("p", { class: "hint" }, T("web_no_subs")));
  }

  // ------------------------------------------------------------------------------------------------------ start
  function applyTexts() {
    document.documentElement.lang = state.lang;
    document.title = T("web_title");
    $("title").textContent = T("web_title");
    $("subtitle").textContent = T("web_subtitle");
    $("workload-label").textContent = T("web_workload_label");
    $("workload").placeholder = T("web_workload_placeholder");
    $("workload-go").textContent = T("web_workload_go");
    $("workload-clear").textContent = T("web_workload_clear");
    $("currency-label").textContent = T("web_currency");
  }

  async function start() {
    theme();
    if (tg && tg.ready) { tg.ready(); if (tg.expand) tg.expand(); }
    state.lang = launchLang();
    state.currency = query.get("currency") === "USD" || query.get("currency") === "RUB" ? query.get("currency")
      : (state.lang === "ru" ? "RUB" : "USD");
    $("currency").value = state.currency;
    try {
      // The three at once: the first render waits for the slowest, not for their sum.
      const [{ body: texts }, { body: who }, { body: matrix }] = await Promise.all(
        [api("/api/texts"), api("/api/me"), api("/api/matrix")]);
      state.texts = texts.texts;
      state.signedIn = !!who.signed_in;
      applyTexts();
      if (!state.signedIn) { $("readonly").hidden = false; $("readonly").textContent = T("web_read_only"); }
      state.matrix = matrix;
      renderMatrix();
      if (state.signedIn) await loadSubs();
      const asked = (query.get("q") || "").trim();  // opened from an /offers or /estimate answer: start there
      if (asked) { $("workload").value = asked; await runEstimate(asked); }
    } catch (e) {
      status(e.message, true);
    }
    $("workload-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = $("workload").value.trim();
      if (text) runEstimate(text);
    });
    $("workload-clear").addEventListener("click", () => {
      state.estimate = null; $("workload").value = ""; renderEstimate(); renderMatrix();
    });
    $("currency").addEventListener("change", () => {
      state.currency = $("currency").value;
      renderMatrix();
      if (state.estimate && state.estimate.ok) runEstimate(state.estimate.query);
      if (!$("history").hidden && state.historyGpu) {
        showHistory(state.historyGpu, state.historyLabel, state.historyProvider, state.historyProviderName);
      }
    });
    document.body.setAttribute("data-ready", "1");
    // When the first render was done, counted from the navigation's start (bench/webapp.py reads it).
    document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  }

  document.addEventListener("DOMContentLoaded", start);
})();
