/* The report page: leaderboard, head-to-head, rating history, per bot, gate, games and the viewer.
 * Everything is drawn from the JSON embedded in the page; nothing is fetched except, on request,
 * a game record next to the report (games/*.json) that the page does not carry. The leaderboard
 * and the gate's verdict are also in the HTML itself, for readers without JavaScript.
 */
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (sel, root) => (root || document).querySelector(sel);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
    return node;
  }
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, v);
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
    return node;
  }
  function put(host, ...kids) {
    host.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined));
  }
  const fmt = (v, digits) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits === undefined ? 0 : digits));
  const half = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
  const compact = (v) => (v >= 10000 ? `${(v / 1000).toFixed(v >= 100000 ? 0 : 1)}k` : String(v));
  /* A series colour: golden-angle hues, so neighbours in any order differ; two lightnesses past 12. */
  const seriesColour = (i) => `hsl(${Math.round((i * 137.508) % 360)}, 70%, ${i % 2 ? 34 : 44}%)`;
  /* A row's name as the page shows it: an older version of a bot is labelled so ("greedy (v1, older)"). */
  const display = (name) => (DATA.labels && DATA.labels[name]) || name;
  const joinWith = (parts, sep) => parts.reduce((acc, x) => acc.concat(acc.length ? [sep, x] : [x]), []);

  /* Contrast (WCAG) of a text colour on a background, both [r, g, b] 0..255. */
  function luminance(rgb) {
    const c = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  function contrast(a, b) {
    const la = luminance(a), lb = luminance(b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }
  function hslRgb(h, s, l) {
    s /= 100; l /= 100;
    const k = (n) => (n + h / 30) % 12;
    const a = s * Math.min(l, 1 - l);
    const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
    return [f(0), f(8), f(4)].map((v) => Math.round(v * 255));
  }

  /* ---------------------------------------------------------------- games */
  const RESULTS = (DATA.results || []).map((r, i) => ({
    key: r[0], seats: r[1], totals: r[2], ranks: r[3], strikes: r[4] || r[1].map(() => 0), forfeits: r[5],
    rounds: r[6], finished: r[7], order: i,
  }));
  RESULTS.forEach((g) => {
    g.winners = g.seats.filter((_, i) => g.ranks[i] === 1 && !g.forfeits.includes(i));
    g.strikeCount = g.strikes.reduce((a, b) => a + b, 0);
  });
  const BY_KEY = new Map(RESULTS.map((g) => [g.key, g]));
  const loaded = new Map(Object.entries(DATA.embedded || {}));

  function gamesOf(a, b) {
    return RESULTS.filter((g) => g.seats.includes(a) && (b === undefined || g.seats.includes(b)));
  }

  /* ------------------------------------------------------------ leaderboard */
  const LB_COLUMNS = [
    ["rank", "#", (r, i) => i + 1],
    ["name", "bot", (r) => r.name],
    ["elo", "Elo", (r) => r.elo],
    ["interval", "95% interval", (r) => r.elo_low],
    ["games", "games", (r) => r.games],
    ["avg_total", "avg total", (r) => r.avg_total],
    ["wins", "wins", (r) => r.wins],
    ["win_rate", "win %", (r) => r.win_rate],
    ["strikes", "strikes", (r) => r.strikes],
    ["timeouts", "timeouts", (r) => r.timeouts],
    ["forfeits", "forfeits", (r) => r.forfeits],
  ];
  let lbSort = { col: "rank", dir: 1 };

  function renderLeaderboard() {
    const host = $("#leaderboard-table");
    if (!host) return;
    host.removeAttribute("data-static");
    const rows = DATA.leaderboard.map((r, i) => ({ r: r, i: i }));
    const col = LB_COLUMNS.find((c) => c[0] === lbSort.col);
    rows.sort((x, y) => {
      const a = col[2](x.r, x.i), b = col[2](y.r, y.i);
      if (a === b) return x.i - y.i;
      if (a === null || a === undefined) return 1;
      if (b === null || b === undefined) return -1;
      return (a < b ? -1 : 1) * lbSort.dir;
    });
    const lows = DATA.leaderboard.map((r) => (r.elo_low === null ? r.elo : r.elo_low)).filter((v) => v !== null);
    const highs = DATA.leaderboard.map((r) => (r.elo_high === null ? r.elo : r.elo_high)).filter((v) => v !== null);
    const lo = Math.min(...lows), hi = Math.max(...highs);
    const span = hi - lo || 1;
    const W = 140;
    const x = (v) => 6 + ((v - lo) / span) * (W - 12);
    const head = el("tr", {}, LB_COLUMNS.map(([id, label]) =>
      el("th", { "data-col": id, class: id === lbSort.col ? (lbSort.dir > 0 ? "sorted asc" : "sorted desc") : "",
        title: "sort", onclick: () => { lbSort = { col: id, dir: lbSort.col === id ? -lbSort.dir : 1 }; renderLeaderboard(); } }, label)));
    const body = rows.map(({ r, i }) => {
      let bar = "—";
      if (r.elo !== null) {
        const g = svg("svg", { width: W, height: 14, class: "ci", role: "img",
          "aria-label": `${r.name}: Elo ${fmt(r.elo, 1)}, 95% interval ${fmt(r.elo_low, 1)} to ${fmt(r.elo_high, 1)}` });
        if (r.elo_low !== null && r.elo_high !== null) {
          g.append(svg("line", { x1: x(r.elo_low), x2: x(r.elo_high), y1: 7, y2: 7, class: "ci-bar" }));
          g.append(svg("line", { x1: x(r.elo_low), x2: x(r.elo_low), y1: 3, y2: 11, class: "ci-bar" }));
          g.append(svg("line", { x1: x(r.elo_high), x2: x(r.elo_high), y1: 3, y2: 11, class: "ci-bar" }));
        }
        g.append(svg("circle", { cx: x(r.elo), cy: 7, r: 3.5, class: "ci-dot" },
          svg("title", {}, `${r.name}: ${fmt(r.elo, 1)} [${fmt(r.elo_low, 1)}, ${fmt(r.elo_high, 1)}]`)));
        bar = el("span", {}, g, el("span", { class: "ci-text" }, r.elo_low === null || r.elo_high === null ? "—" : `${fmt(r.elo_low)} – ${fmt(r.elo_high)}`));
      }
      return el("tr", { "data-bot": r.name },
        el("td", { "data-col": "rank" }, i + 1),
        el("td", { "data-col": "name", title: display(r.name) }, el("a", { href: "#bots", onclick: () => showBot(r.name) }, display(r.name))),
        el("td", { "data-col": "elo", "data-value": r.elo }, fmt(r.elo, 1)),
        el("td", { "data-col": "interval", "data-low": r.elo_low, "data-high": r.elo_high }, bar),
        el("td", { "data-col": "games", "data-value": r.games },
          el("a", { href: "#games", onclick: () => filterGames(r.name) }, r.games)),
        el("td", { "data-col": "avg_total", "data-value": r.avg_total }, fmt(r.avg_total, 1)),
        el("td", { "data-col": "wins", "data-value": r.wins }, fmt(r.wins, Number.isInteger(r.wins) ? 0 : 1)),
        el("td", { "data-col": "win_rate" }, r.win_rate === null ? "—" : fmt(100 * r.win_rate, 1)),
        el("td", { "data-col": "strikes", "data-value": r.strikes }, r.strikes),
        el("td", { "data-col": "timeouts", "data-value": r.timeouts }, r.timeouts),
        el("td", { "data-col": "forfeits", "data-value": r.forfeits }, r.forfeits));
    });
    put(host, el("thead", {}, head), el("tbody", {}, body));
  }

  /* ----------------------------------------------------------- head-to-head */
  const cellScore = (cell) => (cell[1] + 0.5 * cell[2]) / cell[0];
  /* Blue ahead, orange behind (distinct for red-green colour blindness), grey for exactly level. */
  function cellColour(cell) {
    const score = cellScore(cell);
    if (score === 0.5) return hslRgb(210, 8, 90);
    const strong = cell[4] < DATA.significant_p;
    const t = Math.min(1, Math.abs(score - 0.5) * 2);
    if (score > 0.5) return strong ? hslRgb(212, 70, 48 - 18 * t) : hslRgb(208, 60, 88 - 12 * t);
    return strong ? hslRgb(28, 85, 36 - 8 * t) : hslRgb(32, 80, 88 - 12 * t);  // 36% and darker: white text 5:1
  }
  /* Dark or white text, whichever contrasts more (at least 4.5:1 on any background). */
  function textOn(rgb) {
    const dark = [17, 24, 39];
    return contrast(rgb, dark) >= contrast(rgb, [255, 255, 255]) ? "rgb(17,24,39)" : "rgb(255,255,255)";
  }

  function renderHeadToHead() {
    const host = $("#h2h-grid");
    if (!host) return;
    const names = DATA.bots;
    const table = el("table", { class: "h2h" });
    table.append(el("thead", {}, el("tr", {}, el("th", { class: "corner" }, "row vs column"),
      names.map((n) => el("th", { class: "col-label", title: display(n) }, el("span", {}, display(n)))))));
    const body = el("tbody");
    names.forEach((a, i) => {
      const tr = el("tr", {}, el("th", { class: "row-label", title: display(a) }, display(a)));
      names.forEach((b, j) => {
        const cell = DATA.h2h[i][j];
        if (i === j || !cell) {
          tr.append(el("td", { class: i === j ? "self" : "empty" }, ""));
          return;
        }
        const score = cellScore(cell);
        const sig = cell[4] < DATA.significant_p;
        const points = cell[1] + 0.5 * cell[2];
        const text = `${display(a)} vs ${display(b)}: ${half(points)}/${cell[0]} — ${cell[1]} won, ${cell[2]} level, ${cell[3]} lost ` +
          `(score ${(100 * score).toFixed(1)}%, p = ${cell[4]}${sig ? ", significant" : ""})`;
        const bg = cellColour(cell);
        tr.append(el("td", { class: "cell" + (sig ? " sig" : "") + (score === 0.5 ? " level" : ""),
          style: `background:rgb(${bg.join(",")});color:${textOn(bg)}`, title: text,
          "data-row": a, "data-col": b, "data-score": `${half(points)}/${cell[0]}`, onclick: () => openCell(i, j) },
          el("span", { class: "pct" }, `${Math.round(100 * score)}%`), el("span", { class: "sc" }, `${half(points)}/${cell[0]}`)));
      });
      body.append(tr);
    });
    table.append(body);
    put(host, table);
  }

  function openCell(i, j) {
    const a = DATA.bots[i], b = DATA.bots[j];
    const cell = DATA.h2h[i][j];
    const games = gamesOf(i, j);
    const panel = $("#h2h-detail");
    put(panel,
      el("h3", {}, `${display(a)} vs ${display(b)}`),
      el("p", {}, `${cell[0]} pairings: ${display(a)} scored ${half(cell[1] + 0.5 * cell[2])}/${cell[0]} — ranked ahead ${cell[1]}, level ${cell[2]}, behind ${cell[3]} ` +
        `(score ${(100 * cellScore(cell)).toFixed(1)}%, sign test p = ${cell[4]}; ` +
        `${cell[4] < DATA.significant_p ? "significant at 95%" : "not significant"}).`),
      pagedGames(games, { sort: "order", dir: 1, page: 0, id: "h2h-games" }));
    const first = games.find((g) => loaded.has(g.key)) || games[0];
    if (first) openGame(first.key);
  }

  /* --------------------------------------------------------- rating history */
  function niceTicks(lo, hi, want) {
    const raw = (hi - lo) / Math.max(want, 1);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Math.round(v / step) * step);
    return out;
  }

  /* The width of a chart label (11 px, bold if asked), measured by the browser's own text engine. */
  let measurer = null;
  function textWidth(text, bold) {
    if (!measurer) measurer = document.createElement("canvas").getContext("2d");
    measurer.font = `${bold ? "700" : "400"} 11px ${getComputedStyle(document.body).fontFamily}`;
    return measurer.measureText(text).width;
  }

  const picked = new Set();
  function renderHistory() {
    const host = $("#history-chart");
    if (!host || !DATA.history) return;
    const pts = DATA.history.points;
    if (pts.length === 0) { put(host, el("p", {}, "No games yet.")); return; }
    const n = DATA.bots.length;
    const labelAll = n <= 20;
    const shownLabels = DATA.bots.map((name, b) => labelAll || picked.has(name));
    const W = Math.max(300, Math.min(1300, host.clientWidth || 860));
    const longest = Math.max(0, ...DATA.bots.filter((_, b) => shownLabels[b]).map((s) => textWidth(display(s), true)));
    const R = longest ? Math.min(Math.round(W * 0.4), Math.ceil(longest) + 12) : 12;
    const fit = (name) => {  // a label cut to the margin, whole in its tooltip
      if (textWidth(name, true) <= R - 8) return name;
      let cut = name;
      while (cut.length > 1 && textWidth(cut + "…", true) > R - 8) cut = cut.slice(0, -1);
      return cut + "…";
    };
    const L = 44, T = 12, B = 34;
    const H = Math.max(W < 500 ? 240 : 320, labelAll ? 13 * n + T + B : 0);
    const vals = pts.flatMap((p) => p.elo.filter((v) => v !== null));
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (hi - lo < 1) { lo -= 50; hi += 50; }
    const ticks = niceTicks(lo, hi, 5);
    const step = ticks.length > 1 ? ticks[1] - ticks[0] : 50;
    lo = Math.min(lo, ticks[0]); hi = Math.max(hi, ticks[ticks.length - 1]);
    if (ticks[0] > lo) ticks.unshift(ticks[0] - step);
    lo = Math.min(lo, ticks[0]);
    const maxG = pts[pts.length - 1].games;
    const x = (g) => L + ((W - L - R) * g) / Math.max(maxG, 1);
    const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo);
    const chart = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart fixed", role: "img", "aria-label": "rating history" });
    for (const v of ticks) {
      if (v < lo - 1e-9 || v > hi + 1e-9) continue;
      chart.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }),
        svg("text", { x: L - 6, y: y(v) + 4, class: "axis ytick", "text-anchor": "end" }, v));
    }
    chart.append(svg("text", { x: (L + W - R) / 2, y: H - 4, class: "axis", "text-anchor": "middle" }, "games played"),
      svg("text", { x: L, y: H - 18, class: "axis" }, "0"),
      svg("text", { x: W - R, y: H - 18, class: "axis", "text-anchor": "end" }, maxG));
    (DATA.history.runs || []).forEach((start, k) => {
      chart.append(svg("line", { x1: x(start), x2: x(start), y1: T, y2: H - B, class: "run-start" }),
        svg("text", { x: x(start) + 3, y: T + 10, class: "axis" }, `run ${k + 2}`));
    });
    const ends = [];
    const someone = picked.size > 0;
    DATA.bots.forEach((name, b) => {
      const line = pts.filter((p) => p.elo[b] !== null).map((p) => `${x(p.games).toFixed(1)},${y(p.elo[b]).toFixed(1)}`);
      if (line.length === 0) return;
      const cls = "series" + (picked.has(name) ? " picked" : someone ? " faded" : "");
      chart.append(svg("polyline", { points: line.join(" "), class: cls, stroke: seriesColour(b), "data-bot": name },
        svg("title", {}, display(name))));
      const last = pts[pts.length - 1].elo[b];
      if (last !== null && shownLabels[b]) ends.push([y(last), name, b]);
    });
    /* labels: in order, at least 12 px apart, pushed back inside the chart from the bottom */
    ends.sort((a, c) => a[0] - c[0]);
    const ys = [];
    ends.forEach(([yy], k) => ys.push(Math.max(yy, k ? ys[k - 1] + 12 : T + 4)));
    for (let k = ys.length - 1; k >= 0; k--) ys[k] = Math.min(ys[k], k === ys.length - 1 ? H - B : ys[k + 1] - 12);
    ends.forEach(([, name, b], k) => {
      chart.append(svg("text", { x: W - R + 6, y: ys[k] + 4, class: "label" + (picked.has(name) ? " picked" : ""), fill: seriesColour(b), "data-bot": name }, fit(display(name)), svg("title", {}, display(name))));
    });
    const legend = el("div", { class: "legend-list", id: "history-legend" }, DATA.bots.map((name, b) =>
      el("button", { class: "chip" + (picked.has(name) ? " picked" : ""), "data-bot": name, title: `highlight ${display(name)}`,
        onclick: () => { if (picked.has(name)) picked.delete(name); else picked.add(name); renderHistory(); } },
      el("span", { class: "swatch", style: `background:${seriesColour(b)}` }), display(name))));
    put(host, chart, el("p", { class: "note" }, `${DATA.rating.model_name} Elo (fitted and anchored as the leaderboard, without intervals) after each checkpoint, by ${DATA.history.by}` +
      ((DATA.history.runs || []).length ? "; a dashed line starts a run (a pause of more than 10 minutes)" : "") +
      `. Click a name to highlight its line${labelAll ? "" : " and label it"}${picked.size ? " (click again to clear)" : ""}.`), legend);
  }

  /* ---------------------------------------------------------------- per bot */
  /* A bar chart drawn at its real pixel size; ``log``: a log scale (counts + 1) that keeps small bars visible. */
  function bars(counts, labels, opts) {
    const W = opts.width || 380, H = 160, L = 46, B = 32, T = 10;
    const max = Math.max(1, ...counts);
    const scale = opts.log ? (c) => Math.log10(c + 1) / Math.log10(max + 1) : (c) => c / max;
    const bw = (W - L - 4) / Math.max(counts.length, 1);
    const chart = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart small fixed", role: "img", "aria-label": opts.title });
    /* y labels: the maximum and 0 first, then the powers of ten (log) that keep 12 px from every kept one */
    const yOf = (v) => H - B - (H - B - T) * scale(v);
    const wanted = [max, 0].concat(opts.log ? [1, 10, 100, 1000, 10000, 100000, 1000000].filter((v) => v < max) : []);
    const kept = [];
    for (const v of wanted) if (kept.every((k) => Math.abs(yOf(k) - yOf(v)) >= 12)) kept.push(v);
    for (const v of kept) {
      if (v > 0) chart.append(svg("line", { x1: L, x2: W - 2, y1: yOf(v), y2: yOf(v), class: "grid" }));
      chart.append(svg("text", { x: L - 4, y: yOf(v) + 4, class: "axis ytick", "text-anchor": "end" }, compact(v)));
    }
    const labelChars = Math.max(1, ...labels.map((s) => String(s).length));
    const every = Math.max(1, Math.ceil((labelChars * 6 + 6) / bw));
    counts.forEach((c, k) => {
      const h = (H - B - T) * scale(c);
      chart.append(svg("rect", { x: L + k * bw + 1, y: H - B - h, width: Math.max(bw - 2, 1), height: h, class: opts.cls || "bar" },
        svg("title", {}, `${labels[k]}: ${c}`)));
      if (k % every === 0) {
        chart.append(svg("text", { x: L + k * bw + bw / 2, y: H - B + 12, class: "axis tiny xtick", "text-anchor": "middle" }, labels[k]));
      }
    });
    chart.append(svg("text", { x: (L + W) / 2, y: H - 3, class: "axis", "text-anchor": "middle" }, opts.title));
    return chart;
  }

  function showBot(name) {
    const select = $("#bot-select");
    if (select) { select.value = name; renderBot(); }
  }

  function opponentsTable(name) {
    const i = DATA.bots.indexOf(name);
    const rows = DATA.bots.map((other, j) => [other, j, DATA.h2h[i][j]]).filter((r) => r[2]);
    if (!rows.length) return el("p", {}, "No opponents yet.");
    return el("div", { class: "scroll", tabindex: 0 }, el("table", { class: "opponents", id: "opponents" },
      el("thead", {}, el("tr", {}, ["opponent", "score", "%", "ahead", "level", "behind", "p"].map((h) => el("th", {}, h)), el("th", {}, el("span", { class: "sr-only" }, "games")))),
      el("tbody", {}, rows.map(([other, j, c]) => el("tr", { "data-opponent": other },
        el("td", { "data-col": "name" }, display(other)),
        el("td", { "data-col": "score" }, `${half(c[1] + 0.5 * c[2])}/${c[0]}`),
        el("td", {}, (100 * cellScore(c)).toFixed(1)),
        el("td", {}, c[1]), el("td", {}, c[2]), el("td", {}, c[3]),
        el("td", { class: c[4] < DATA.significant_p ? "sig" : "" }, c[4]),
        el("td", {}, el("button", { class: "open", onclick: () => { $("#h2h").scrollIntoView(); openCell(i, j); } }, "games")))))));
  }

  /* Every version of the chosen bot, oldest first, with its Elo (an old version is rated with its own games). */
  function versionsTable(name) {
    const bot = (DATA.version_of || {})[name];
    const rows = (DATA.versions || []).filter((v) => v.bot === bot);
    if (rows.length < 2) return null;
    return el("div", {}, el("h3", {}, `Versions of ${bot} (${rows.length})`),
      el("div", { class: "scroll", tabindex: 0 }, el("table", { class: "versions", id: "versions" },
        el("thead", {}, el("tr", {}, ["", "version", "games", "Elo", "95% interval"].map((h, k) => el("th", {}, k ? h : el("span", { class: "sr-only" }, "number"))))),
        el("tbody", {}, rows.map((v) => el("tr", { "data-version": v.version, class: v.current ? "current" : "" },
          el("td", {}, `v${v.number}${v.current ? " (current)" : ""}`),
          el("td", { "data-col": "name", title: v.version }, v.version.length > 24 ? v.version.slice(0, 23) + "…" : v.version),
          el("td", {}, v.games),
          el("td", { "data-col": "elo", "data-value": v.elo }, fmt(v.elo, 1)),
          el("td", {}, v.elo_low === null ? "—" : `${fmt(v.elo_low)} – ${fmt(v.elo_high)}`)))))));
  }

  function renderBot() {
    const host = $("#bot-detail");
    const select = $("#bot-select");
    if (!host || !select) return;
    const name = select.value;
    const b = DATA.per_bot[name];
    if (!b) { put(host, el("p", {}, "No games yet.")); return; }
    const row = DATA.leaderboard.find((r) => r.name === name);
    const t = b.totals;
    const totalLabels = t.counts.map((_, k) => `${t.lo + k * t.width}${t.width > 1 ? "–" + (t.lo + (k + 1) * t.width - 1) : ""}`);
    const edges = DATA.time_bins_ms;
    const short = (e) => (e >= 1000 ? `${e / 1000}k` : String(e));
    const timeLabels = edges.map((e) => short(e)).concat([`>${short(edges[edges.length - 1])}`]);
    const d = b.decisions;
    const pct = (a, c) => (c ? `${(100 * a / c).toFixed(1)}%` : "—");
    const width = Math.max(280, Math.min(380, host.clientWidth - 8));
    put(host,
      el("div", { class: "facts" },
        el("div", {}, el("b", {}, "Elo "), `${fmt(row.elo, 1)} (${fmt(row.elo_low)} – ${fmt(row.elo_high)})`),
        el("div", {}, el("b", {}, "rounds won "), `${fmt(b.round_wins, Number.isInteger(b.round_wins) ? 0 : 1)} of ${b.rounds} (${pct(b.round_wins, b.rounds)})`),
        el("div", {}, el("b", {}, "ended a round "), `${b.finished} times (${pct(b.finished, b.rounds)} of its rounds)`),
        el("div", {}, el("b", {}, "finisher penalty "), `${b.penalised} of those ${b.finished} (${pct(b.penalised, b.finished)})`),
        el("div", {}, el("b", {}, "decisions "), d.count ? `${d.count}: median ${d.median} ms, 90% ${d.p90} ms, 99% ${d.p99} ms, max ${d.max} ms` : "no times in these records")),
      versionsTable(name),
      el("h3", {}, "Against each opponent"),
      opponentsTable(name),
      el("div", { class: "charts" },
        bars(t.counts, totalLabels, { title: `game totals (mean ${fmt(t.mean, 1)})`, width: width }),
        bars(d.bins, timeLabels, { title: "decision time, ms (a bar: up to its label; log scale)", cls: "bar time", log: true, width: width })),
      el("h3", {}, `Faults (${b.fault_count})`),
      b.faults.length === 0 ? el("p", {}, "None.") : el("div", { class: "scroll", tabindex: 0 }, el("table", { class: "faults" },
        el("thead", {}, el("tr", {}, el("th", {}, "kind"), el("th", {}, "game"), el("th", {}, "round"), el("th", {}, "action"), el("th", {}, "detail"))),
        el("tbody", {}, b.faults.map((f) => el("tr", {}, el("td", {}, f.kind),
          el("td", {}, f.game && (BY_KEY.has(f.game) || loaded.has(f.game)) ? el("a", { href: "#viewer", class: "fault-link", onclick: (e) => { e.preventDefault(); openGame(f.game, f.round, f.action); } }, f.game) : "—"),
          el("td", { "data-col": "round" }, f.round === null || f.round === undefined ? "—" : f.round + 1),
          el("td", {}, f.action === null || f.action === undefined ? "—" : f.action + 1),
          el("td", {}, f.detail)))))),
      b.fault_count > b.faults.length ? el("p", { class: "note" }, `${b.fault_count - b.faults.length} more not listed.`) : null);
  }

  function renderBots() {
    const select = $("#bot-select");
    if (!select) return;
    put(select, ...DATA.bots.map((n) => el("option", { value: n }, display(n))));
    select.addEventListener("change", renderBot);
    renderBot();
  }

  /* ------------------------------------------------------------------- gate */
  function renderGate() {
    const host = $("#gate-detail");
    const g = DATA.gate;
    if (!host || !g) return;
    const [lower, upper] = g.bounds;
    const [stopLo, stopHi] = g.stop_bounds || g.bounds;
    const hist = g.history && g.history.length ? g.history : [[g.games, g.llr]];
    const W = Math.max(300, Math.min(620, host.clientWidth || 620)), H = 240, L = 44, R = 84, T = 10, B = 30;
    const ys = hist.map((p) => p[1]).concat([lower, upper]);
    const lo = Math.min(...ys) * 1.1, hi = Math.max(...ys) * 1.1;
    const maxG = Math.max(1, ...hist.map((p) => p[0]));
    const x = (v) => L + ((W - L - R) * v) / maxG;
    const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo || 1);
    const chart = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart fixed", role: "img", "aria-label": "LLR" });
    chart.append(
      svg("line", { x1: L, x2: W - R, y1: y(upper), y2: y(upper), class: "bound accept" }),
      svg("text", { x: W - R + 4, y: y(upper) + 4, class: "label" }, `accept ${fmt(upper, 2)}`),
      svg("line", { x1: L, x2: W - R, y1: y(lower), y2: y(lower), class: "bound reject" }),
      svg("text", { x: W - R + 4, y: y(lower) + 4, class: "label" }, `reject ${fmt(lower, 2)}`));
    if (Math.abs(stopHi - upper) > 0.0005) chart.append(svg("line", { x1: L, x2: W - R, y1: y(stopHi), y2: y(stopHi), class: "stop-bound accept" }, svg("title", {}, `stops at ${fmt(stopHi, 3)}`)));
    if (Math.abs(stopLo - lower) > 0.0005) chart.append(svg("line", { x1: L, x2: W - R, y1: y(stopLo), y2: y(stopLo), class: "stop-bound reject" }, svg("title", {}, `stops at ${fmt(stopLo, 3)}`)));
    chart.append(
      svg("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "grid" }),
      svg("text", { x: L - 6, y: y(0) + 4, class: "axis", "text-anchor": "end" }, "0"),
      svg("polyline", { points: hist.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "), class: "series llr" }),
      svg("text", { x: (L + W - R) / 2, y: H - 4, class: "axis", "text-anchor": "middle" }, "games"),
      svg("text", { x: W - R, y: H - 16, class: "axis", "text-anchor": "end" }, maxG));
    const counts = g.pentanomial
      ? bars(g.pentanomial, ["0", "0.5", "1", "1.5", "2"], { title: "pentanomial: candidate's points per game pair", width: 300, cls: "bar penta" })
      : bars(g.block_scores || [], ["0", "¼", "½", "¾", "1"], { title: "block scores: the candidate's score per deal", width: 300, cls: "bar penta" });
    put(host,
      el("p", { class: "note" }, "The LLR against Wald's bounds (solid); dotted: where the test actually stops, moved in by the overshoot correction."),
      el("div", { class: "charts" }, chart, counts));
  }

  /* ------------------------------------------------------------------ games */
  const PAGE = 50;
  const GAME_SORTS = {
    order: (g) => g.order,
    key: (g) => g.key,
    winner: (g) => g.winners.map((b) => DATA.bots[b]).join(", "),
    forfeits: (g) => g.forfeits.length,
    strikes: (g) => g.strikeCount,
    rounds: (g) => (g.rounds === null ? -1 : g.rounds),
  };

  /* A sortable, paged table of ``games``; ``state`` keeps its sort and page across redraws. */
  function pagedGames(games, state) {
    const host = el("div", { class: "paged", id: state.id });
    const draw = () => {
      if (!games.length) { put(host, el("p", {}, "No games.")); return; }
      const key = GAME_SORTS[state.sort];
      const sorted = games.slice().sort((a, b) => {
        const x = key(a), y = key(b);
        return (x < y ? -1 : x > y ? 1 : a.order - b.order) * state.dir;
      });
      const pages = Math.ceil(sorted.length / PAGE);
      state.page = Math.min(Math.max(state.page, 0), pages - 1);
      const shown = sorted.slice(state.page * PAGE, (state.page + 1) * PAGE);
      const th = (id, label) => el("th", { "data-sort": id, class: "sortable" + (state.sort === id ? (state.dir > 0 ? " sorted asc" : " sorted desc") : ""),
        title: "sort", onclick: () => { state.dir = state.sort === id ? -state.dir : 1; state.sort = id; state.page = 0; draw(); } }, label);
      const name = (b) => display(DATA.bots[b]);
      const pager = el("div", { class: "pager" },
        el("button", { class: "prev", disabled: state.page === 0 ? "" : null, onclick: () => { state.page--; draw(); } }, "‹ previous"),
        el("span", { class: "page-of" }, `page ${state.page + 1} of ${pages} · ${sorted.length} games`),
        el("button", { class: "next", disabled: state.page >= pages - 1 ? "" : null, onclick: () => { state.page++; draw(); } }, "next ›"));
      put(host, pager, el("div", { class: "scroll", tabindex: 0 }, el("table", { class: "games" },
        el("thead", {}, el("tr", {}, th("order", "#"), th("key", "game"), el("th", {}, "seats: total (rank)"), th("winner", "winner"),
          th("forfeits", "forfeits"), th("strikes", "strikes"), th("rounds", "rounds"), el("th", {}, el("span", { class: "sr-only" }, "open")))),
        el("tbody", {}, shown.map((g) => el("tr", { "data-game": g.key },
          el("td", {}, g.order + 1),
          el("td", { class: "key" }, g.key),
          el("td", { class: "seats-cell" }, joinWith(g.seats.map((b, i) => el("span", { class: "seat-result" + (g.winners.includes(b) ? " won" : "") + (g.forfeits.includes(i) ? " forfeited" : "") },
            `${name(b)} ${g.totals[i]} (${g.forfeits.includes(i) ? "forfeit" : g.ranks[i]})`)), " · ")),
          el("td", { class: "winner" }, g.winners.length ? g.winners.map(name).join(", ") : "—"),
          el("td", { class: "forfeits" }, g.forfeits.map((i) => name(g.seats[i])).join(", ")),
          el("td", { class: "strikes" }, g.seats.map((b, i) => [name(b), g.strikes[i]]).filter((s) => s[1]).map((s) => `${s[0]} ${s[1]}`).join(", ")),
          el("td", {}, g.rounds === null ? "—" : g.rounds),
          el("td", {}, el("button", { class: "open", onclick: () => openGame(g.key) }, loaded.has(g.key) ? "view" : "open file"))))))),
      pages > 1 ? pager.cloneNode(true) : null);
      if (pages > 1) {  // the copy at the bottom needs its own listeners
        const bottom = host.lastChild;
        bottom.querySelector(".prev").addEventListener("click", () => { state.page--; draw(); });
        bottom.querySelector(".next").addEventListener("click", () => { state.page++; draw(); });
      }
    };
    draw();
    return host;
  }

  function filterGames(name) {
    const input = $("#games-filter");
    if (input) { input.value = name; renderGames(); }
  }

  const gamesState = { sort: "order", dir: 1, page: 0, id: "games-table" };
  function renderGames() {
    const host = $("#games-list");
    if (!host) return;
    const q = ($("#games-filter").value || "").trim().toLowerCase();
    const match = RESULTS.filter((g) => !q || g.key.toLowerCase().includes(q) || g.seats.some((b) => DATA.bots[b].toLowerCase() === q));
    gamesState.page = 0;
    put(host, el("p", { class: "note" }, `${match.length} games; ${loaded.size} of the ${RESULTS.length} records are in this file, ` +
      `the others open from ${DATA.records_dir}/ next to it. Click a heading to sort.`), pagedGames(match, gamesState));
  }

  /* ----------------------------------------------------------------- viewer */
  const view = { key: null, record: null, table: null, round: 0, done: 0, faceUp: false, timer: null, speed: 4 };

  /* Open a game in the viewer, at ``round`` and ``action`` (0-based) or at ``at.step``, else at its start. */
  function openGame(key, round, action, at) {
    const record = loaded.get(key);
    document.getElementById("viewer").scrollIntoView();
    at = at || { round: round, action: action };
    if (record) { showRecord(key, record, at); return; }
    const file = (DATA.files || {})[key];
    const host = $("#viewer-body");
    if (!file) { showProblem(`Game ${key} is not in this report's store: there is no record to open.`); return; }
    const picker = el("input", { type: "file", accept: ".json,application/json", id: "record-file" });
    picker.addEventListener("change", () => {
      const f = picker.files[0];
      if (!f) return;
      f.text().then((text) => showRecord(key, JSON.parse(text), at)).catch((e) => showProblem(`${f.name}: ${e.message}`));
    });
    const ask = () => put(host, el("div", { class: "problem" },
      el("p", {}, `This page does not carry game ${key}. A page opened from disk may not read other files, ` +
        `so choose ${DATA.records_dir}/${file} here (it sits next to the report in the run's folder):`), picker));
    if (location.protocol === "file:") { ask(); return; }  // browsers refuse file:// fetches
    put(host, el("p", {}, `Loading ${DATA.records_dir}/${file} …`));
    const url = `${DATA.records_dir}/${encodeURIComponent(file)}`;
    fetch(url).then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then((record) => { loaded.set(key, record); showRecord(key, record, at); })
      .catch(ask);
  }

  function showProblem(text) { put($("#viewer-body"), el("p", { class: "problem" }, text)); }

  /* Steps number every position of the game: round k's positions follow round k-1's. */
  function stepOf(round, done) {
    let s = 0;
    for (let k = 0; k < round; k++) s += view.record.rounds[k].actions.length + 1;
    return s + done;
  }
  function positionOf(step) {
    const rounds = view.record.rounds;
    for (let k = 0; k < rounds.length; k++) {
      const here = rounds[k].actions.length + 1;
      if (step < here) return [k, step];
      step -= here;
    }
    return [rounds.length - 1, rounds[rounds.length - 1].actions.length];
  }
  const lastStep = () => stepOf(view.record.rounds.length - 1, view.record.rounds[view.record.rounds.length - 1].actions.length);

  function showRecord(key, record, at) {
    pause();
    view.key = key; view.record = record;
    try { view.table = SkyjoTable.positions(record, DATA.presets); } catch (e) { showProblem(`cannot show ${key}: ${e.message}`); return; }
    view.round = 0; view.done = 0;
    if (at && Number.isInteger(at.round) && at.round >= 0 && at.round < record.rounds.length) {
      view.round = at.round;
      view.done = Number.isInteger(at.action) ? Math.max(0, Math.min(at.action, record.rounds[at.round].actions.length)) : 0;
    } else if (at && Number.isInteger(at.step)) {
      [view.round, view.done] = positionOf(Math.max(0, Math.min(at.step, lastStep())));
    }
    buildViewer();
    drawViewer();
    $("#viewer").focus({ preventScroll: true });
  }

  const cardClass = (v) => (v <= -1 ? "c-neg" : v === 0 ? "c-zero" : v <= 4 ? "c-low" : v <= 8 ? "c-mid" : "c-high");
  function card(value, state, extra) {
    if (state === SkyjoTable.REMOVED) return el("div", { class: "card removed" + (extra || "") }, "");
    if (state === SkyjoTable.HIDDEN) {
      if (view.faceUp && value !== undefined) return el("div", { class: `card peek ${cardClass(value)}${extra || ""}`, title: "face down in the game" }, value);
      return el("div", { class: "card hidden" + (extra || "") }, "");
    }
    return el("div", { class: `card ${cardClass(value)}${extra || ""}` }, value);
  }
  const actText = (a) => (a.act === "draw" || a.act === "take" ? a.act : `${a.act} ${a.pos}`);
  const reached = (e) => e.round < view.round || (e.round === view.round && e.action <= view.done);

  function timeOf(record, round, index) {
    const times = record.meta && record.meta.decision_ms;
    if (!times) return null;
    const a = record.rounds[round].actions[index];
    if (a.auto === "forfeit") return null;
    let count = 0;
    for (let k = 0; k <= round; k++) {
      const acts = record.rounds[k].actions;
      for (let i = 0; i < (k === round ? index : acts.length); i++) if (acts[i].seat === a.seat && acts[i].auto !== "forfeit") count++;
    }
    const list = times[a.seat] || [];
    return count < list.length ? list[count] : null;
  }

  /* Totals after each round finished so far, per seat, drawn as lines (round 0 = the start). */
  function scoreChart(r, doneRounds) {
    const n = r.players.length;
    const W = 300, H = 150, L = 36, R = 8, T = 8, B = 26;
    const totals = [r.players.map(() => 0)];
    for (let k = 0; k < doneRounds; k++) totals.push(view.table.positions[k][view.table.positions[k].length - 1].totals);
    const all = totals.flat();
    const lo = Math.min(0, ...all), hi = Math.max(10, ...all);
    const rounds = r.rounds.length;
    const x = (k) => L + ((W - L - R) * k) / Math.max(rounds, 1);
    const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo || 1);
    const chart = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "chart small fixed", id: "score-chart", role: "img", "aria-label": "totals by round" });
    for (const v of niceTicks(lo, hi, 4)) chart.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }), svg("text", { x: L - 4, y: y(v) + 4, class: "axis", "text-anchor": "end" }, v));
    for (let k = 1; k <= rounds; k++) chart.append(svg("text", { x: x(k), y: H - B + 13, class: "axis", "text-anchor": "middle" }, k));
    chart.append(svg("text", { x: (L + W) / 2, y: H - 2, class: "axis", "text-anchor": "middle" }, "total after round"));
    for (let p = 0; p < n; p++) {
      chart.append(svg("polyline", { points: totals.map((t, k) => `${x(k).toFixed(1)},${y(t[p]).toFixed(1)}`).join(" "), class: "series", stroke: seriesColour(p), "data-seat": p }, svg("title", {}, r.players[p])));
    }
    const table = el("table", { class: "round-scores" },
      el("thead", {}, el("tr", {}, el("th", {}, "round"), Array.from({ length: rounds }, (_, k) => el("th", {}, k + 1)), el("th", {}, "total"))),
      el("tbody", {}, r.players.map((name, p) => el("tr", {}, el("th", {}, el("span", { class: "swatch", style: `background:${seriesColour(p)}`, "aria-hidden": "true" }), name),
        Array.from({ length: rounds }, (_, k) => el("td", {}, k < doneRounds ? view.table.positions[k][view.table.positions[k].length - 1].scores[p] : "")),
        el("td", {}, totals[totals.length - 1][p])))));
    return el("div", { class: "score-area" }, chart, el("div", { class: "scroll", tabindex: 0 }, table));
  }

  function drawViewer() {
    const r = view.record, tbl = view.table;
    const pos = tbl.positions[view.round][view.done];
    const rnd = r.rounds[view.round];
    const decision = SkyjoTable.decisionAt(r, pos);
    const last = view.done > 0 ? rnd.actions[view.done - 1] : null;
    const lastRound = view.round === r.rounds.length - 1;
    const atEnd = lastRound && view.done === rnd.actions.length;
    const meta = r.meta || {};
    const forfeitsAt = (meta.forfeited || []).filter((f) => Number.isInteger(f.round));
    const seats = r.players.map((name, p) => {
      const grid = el("div", { class: "grid" });
      let showing = 0;
      for (let k = 0; k < 12; k++) {
        const touched = last && last.seat === p && last.pos === k ? " touched" : "";
        grid.append(card(pos.values[p][k], pos.states[p][k], touched));
        if (pos.states[p][k] === SkyjoTable.REVEALED) showing += pos.values[p][k];
      }
      const due = decision && decision.seat === p;
      const marks = [];
      const forfeit = forfeitsAt.find((f) => f.seat === p);
      const forfeited = forfeit ? reached(forfeit) : atEnd && ((r.result && r.result.forfeits) || []).includes(p);
      // the badge says why (a forfeit beside "1 strike" at a limit of 2 must not read as the strike's doing)
      const why = forfeit && forfeit.reason ? forfeit.reason.split(/ \(|: /)[0] : "";
      const label = why ? `forfeit: ${why.length > 40 ? why.slice(0, 39) + "…" : why}` : "forfeit";
      if (forfeited) marks.push(el("span", { class: "mark forfeit", title: forfeit ? `forfeited in round ${forfeit.round + 1}: ${forfeit.reason || ""}` : "forfeited this game" }, label));
      const strikes = (meta.strikes || []).filter((s) => s.seat === p &&
        (s.round < view.round || (s.round === view.round && s.action < view.done)));
      if (strikes.length) marks.push(el("span", { class: "mark strike", title: strikes.map((s) => s.detail).join("\n") }, `${strikes.length} strike${strikes.length > 1 ? "s" : ""}`));
      return el("div", { class: "seat" + (due ? " due" : "") + (rnd.result && rnd.result.finisher === p && pos.over ? " finisher" : ""), "data-seat": p },
        el("div", { class: "seat-head" }, el("b", {}, name), " ", marks,
          el("span", { class: "total", "data-total": pos.totals[p] }, `total ${pos.totals[p]}`),
          pos.over ? null : el("span", { class: "showing", "data-showing": showing }, ` · showing ${showing}`),
          pos.over ? el("span", { class: "round-score" }, ` round ${pos.scores[p]}${pos.scores[p] !== pos.raw[p] ? ` (raw ${pos.raw[p]}, penalised)` : ""}`) : null),
        grid);
    });
    const top = pos.discard.length ? pos.discard[pos.discard.length - 1] : null;
    const middle = el("div", { class: "piles" },
      el("div", {}, el("div", { class: "pile-label" }, "draw pile"), el("div", { class: "card hidden pile" }, ""), el("div", { class: "pile-count", "data-draw": pos.drawSize }, `${pos.drawSize} cards`)),
      el("div", {}, el("div", { class: "pile-label" }, "discard"), top === null ? el("div", { class: "card removed" }) : card(top, SkyjoTable.REVEALED), el("div", { class: "pile-count" }, `${pos.discard.length} cards`)),
      el("div", {}, el("div", { class: "pile-label" }, "in hand"), pos.hand === null ? el("div", { class: "card removed" }) : card(pos.hand, SkyjoTable.REVEALED, " hand"),
        el("div", { class: "pile-count" }, pos.hand === null ? "" : `from the ${pos.handFrom} pile`)));
    let info;
    if (decision) {
      const t = timeOf(r, view.round, view.done);
      const chosen = decision.chosen;
      info = el("div", { class: "decision" },
        el("p", {}, el("b", {}, r.players[decision.seat]), ` to play (${decision.kind.replace(/_/g, " ")}): chose `,
          el("b", { class: "chosen" }, actText(chosen)), chosen.auto ? el("span", { class: `mark ${chosen.auto === "forfeit" ? "forfeit" : "strike"}` }, ` played by the referee: ${chosen.auto}`) : null,
          t === null ? "" : ` in ${t} ms`),
        el("div", { class: "legal" }, "legal: ", decision.legal.map((a) =>
          el("span", { class: "legal-action" + (a.act === chosen.act && a.pos === chosen.pos ? " chosen" : "") }, actText(a)))));
    } else {
      const res = rnd.result || {};
      info = el("div", { class: "decision" }, el("p", { id: "round-over" }, `Round ${view.round + 1} over: ${r.players[res.finisher]} ended it; round scores ` +
        r.players.map((name, p) => `${name} ${pos.scores[p]}`).join(", ") + "."));
    }
    const finals = atEnd && r.result ? el("p", { class: "final", id: "final-totals" }, "Final totals: ",
      joinWith(r.players.map((name, p) => el("span", { "data-seat": p, "data-total": view.table.totals[p] }, `${name} ${view.table.totals[p]}${r.result.winners.includes(p) ? " (won)" : ""}`)), " · ")) : null;
    const step = stepOf(view.round, view.done);
    const doneRounds = view.round + (pos.over ? 1 : 0);
    $("#v-where").textContent = `round ${view.round + 1}/${r.rounds.length}, ` + (pos.over ? `over (${rnd.actions.length} actions)` : `action ${view.done}/${rnd.actions.length}`);
    $("#v-timeline").value = step;
    // the totals as of the position shown (the final ones only at the end: no spoilers while stepping)
    $("#v-head-totals").textContent = (atEnd && r.result ? "final totals " : pos.over ? `totals after round ${view.round + 1}: ` :
      view.round ? `totals after round ${view.round}: ` : "totals ") + pos.totals.join(", ");
    const hash = `#game=${encodeURIComponent(view.key)}&step=${step}`;
    $("#v-link").setAttribute("href", hash);
    put($("#viewer-state"),
      el("div", { class: "table-area" }, el("div", { class: "seats" }, seats), middle),
      info, finals,
      el("div", { class: "log" }, el("b", {}, "this round: "), rnd.actions.slice(0, view.done).map((a, i) =>
        el("span", { class: "log-entry" + (a.auto ? " auto" : "") }, `${r.players[a.seat]} ${actText(a)}${a.auto ? " [" + a.auto + "]" : ""}${i < view.done - 1 ? ", " : ""}`))),
      el("h3", {}, "Scores by round"),
      scoreChart(r, doneRounds));
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (e) { /* a sandboxed viewer may refuse: the link above still works */ }
    }
  }

  /* The viewer's frame for one record: head, controls, timeline; drawViewer fills in the position. */
  function buildViewer() {
    const r = view.record;
    const timeline = el("input", { type: "range", id: "v-timeline", min: 0, max: lastStep(), value: 0, "aria-label": "timeline" });
    timeline.addEventListener("input", () => { pause(); [view.round, view.done] = positionOf(Number(timeline.value)); drawViewer(); });
    const speed = el("select", { id: "v-speed" }, [1, 2, 4, 8, 16].map((v) => el("option", { value: v, selected: v === view.speed ? "" : null }, `${v}/s`)));
    speed.addEventListener("change", () => { view.speed = Number(speed.value); });
    const faceUp = el("input", { type: "checkbox", id: "v-faceup", checked: view.faceUp ? "" : null });
    faceUp.addEventListener("change", () => { view.faceUp = faceUp.checked; drawViewer(); });
    const button = (id, title, how, text) => el("button", { id: id, title: title, onclick: () => step_(how) }, text);
    put($("#viewer-body"),
      el("div", { class: "viewer-head" }, el("b", {}, view.key), ` — ${r.players.join(" vs ")}; `,
        el("span", { id: "v-head-totals" }, ""), r.result ? "" : " (unfinished record)"),
      el("div", { class: "controls" },
        el("button", { id: "v-play", title: "play / pause (space)", onclick: () => (view.timer ? pause() : play()) }, "▶ play"),
        el("label", { for: "v-speed", class: "speed" }, "speed ", speed),
        button("v-first", "start (Home)", "home", "|‹"),
        button("v-prev-round", "previous round (PageUp / ↑)", "round-", "« round"),
        button("v-prev", "previous action (←)", "-", "‹ action"),
        el("span", { class: "where", id: "v-where" }, ""),
        button("v-next", "next action (→)", "+", "action ›"),
        button("v-next-round", "next round (PageDown / ↓)", "round+", "round »"),
        button("v-last", "end (End)", "end", "›|")),
      el("div", { class: "controls" }, timeline,
        el("label", { title: "the record holds every deck: show the face-down cards (the game is over)" }, faceUp, " all cards face up"),
        el("a", { href: "#", id: "v-link", title: "this game at this step; the address bar follows the viewer too" }, "link to this step")),
      view.table.problems.length ? el("p", { class: "problem" }, view.table.problems.join("; ")) : null,
      el("div", { id: "viewer-state" }));
  }

  function step_(how) {
    if (!view.record) return;
    if (how !== "tick") pause();
    const rounds = view.record.rounds;
    const count = (k) => rounds[k].actions.length;
    if (how === "+" || how === "tick") {
      if (view.done < count(view.round)) view.done++;
      else if (view.round < rounds.length - 1) { view.round++; view.done = 0; }
    } else if (how === "-") {
      if (view.done > 0) view.done--;
      else if (view.round > 0) { view.round--; view.done = count(view.round); }
    } else if (how === "round+") {
      if (view.round < rounds.length - 1) { view.round++; view.done = 0; } else view.done = count(view.round);
    } else if (how === "round-") {
      if (view.done > 0) view.done = 0; else if (view.round > 0) { view.round--; view.done = 0; }
    } else if (how === "home") { view.round = 0; view.done = 0; }
    else if (how === "end") { view.round = rounds.length - 1; view.done = count(view.round); }
    drawViewer();
  }

  /* Play: one step per 1/speed seconds, until the end or a pause (any other step pauses). */
  function play() {
    if (!view.record) return;
    if (stepOf(view.round, view.done) >= lastStep()) { view.round = 0; view.done = 0; }
    const tick = () => {
      if (stepOf(view.round, view.done) >= lastStep()) { pause(); return; }
      step_("tick");
      view.timer = setTimeout(tick, 1000 / view.speed);
    };
    view.timer = setTimeout(tick, 1000 / view.speed);
    const button = $("#v-play");
    if (button) button.textContent = "❚❚ pause";
  }
  function pause() {
    if (view.timer) { clearTimeout(view.timer); view.timer = null; }
    const button = $("#v-play");
    if (button) button.textContent = "▶ play";
  }

  /* Keys step the viewer only while it has focus (click it, or Tab to it); elsewhere they scroll the page. */
  $("#viewer").addEventListener("keydown", (e) => {
    if (!view.record || e.target.closest("input, select, textarea")) return;
    if (e.key === " " && e.target.closest("button")) return;  // a focused button takes its own space
    const keys = { ArrowRight: "+", ArrowLeft: "-", ArrowDown: "round+", PageDown: "round+", ArrowUp: "round-", PageUp: "round-", Home: "home", End: "end", " ": "play" };
    const how = keys[e.key];
    if (!how) return;
    e.preventDefault();
    if (how === "play") { if (view.timer) pause(); else play(); return; }
    step_(how);
    $("#viewer").focus({ preventScroll: true });
  });

  /* ------------------------------------------------------------------- boot */
  const nav = document.querySelector("nav");
  const navHeight = () => document.documentElement.style.setProperty("--nav-h", `${nav ? nav.offsetHeight : 0}px`);
  navHeight();
  if (nav && window.ResizeObserver) new ResizeObserver(navHeight).observe(nav);
  renderLeaderboard();
  renderHeadToHead();
  renderHistory();
  renderBots();
  renderGate();
  if ($("#games-filter")) { $("#games-filter").addEventListener("input", renderGames); renderGames(); }
  let width = window.innerWidth;
  window.addEventListener("resize", () => {  // the charts are drawn at their pixel size: redraw for a new width
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    renderHistory(); renderBot(); renderGate();
  });
  // #game=KEY&step=N opens a game at a step: on load, and when the address changes in an open tab. Read by
  // hand, not by URLSearchParams, which turns a key's "+" into a space when someone types the key unencoded.
  const hashParams = () => {
    const out = new Map();
    for (const part of location.hash.slice(1).split("&")) {
      const eq = part.indexOf("=");
      if (eq < 0) continue;
      try { out.set(part.slice(0, eq), decodeURIComponent(part.slice(eq + 1))); } catch (e) { /* not a percent-encoding */ }
    }
    return out;
  };
  const openFromHash = () => {
    const wanted = hashParams();
    const wantedStep = wanted.has("step") ? Number(wanted.get("step")) : null;
    const at = Number.isInteger(wantedStep) ? { step: wantedStep } : undefined;
    const key = wanted.get("game");
    if (DATA.single) showRecord(DATA.single, loaded.get(DATA.single), at);
    else if (key && (loaded.has(key) || BY_KEY.has(key))) openGame(key, undefined, undefined, at);
  };
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
  window.skyjoReport = { openGame: openGame, step: step_, view: view, data: DATA, renderHeadToHead: renderHeadToHead };
})();
