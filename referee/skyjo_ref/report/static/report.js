/* The report page: leaderboard, head-to-head, rating history, per bot, gate, games and the viewer.
 * Everything is drawn from the JSON embedded in the page; nothing is fetched except, on request,
 * a game record next to the report (games/*.json) that the page does not carry.
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
  const fmt = (v, digits) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits === undefined ? 0 : digits));
  const hue = (i, n) => `hsl(${Math.round((360 * i) / Math.max(n, 1))}, 65%, 42%)`;

  /* ---------------------------------------------------------------- games */
  const RESULTS = (DATA.results || []).map((r) => ({
    key: r[0], seats: r[1], totals: r[2], ranks: r[3], strikes: r[4] || r[1].map(() => 0), forfeits: r[5],
    rounds: r[6], finished: r[7],
  }));
  const BY_KEY = new Map(RESULTS.map((g) => [g.key, g]));
  const loaded = new Map(Object.entries(DATA.embedded || {}));
  const gameLabel = (g) => g.seats.map((b, i) => `${DATA.bots[b]} ${g.totals[i]}`).join(" · ");

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
    const W = 180;
    const x = (v) => 6 + ((v - lo) / span) * (W - 12);
    const head = el("tr", {}, LB_COLUMNS.map(([id, label]) =>
      el("th", { "data-col": id, class: id === lbSort.col ? (lbSort.dir > 0 ? "sorted asc" : "sorted desc") : "",
        title: "sort", onclick: () => { lbSort = { col: id, dir: lbSort.col === id ? -lbSort.dir : 1 }; renderLeaderboard(); } }, label)));
    const body = rows.map(({ r, i }) => {
      let bar = "–";
      if (r.elo !== null) {
        const g = svg("svg", { width: W, height: 14, class: "ci", role: "img" });
        if (r.elo_low !== null) {
          g.append(svg("line", { x1: x(r.elo_low), x2: x(r.elo_high), y1: 7, y2: 7, class: "ci-bar" }));
          g.append(svg("line", { x1: x(r.elo_low), x2: x(r.elo_low), y1: 3, y2: 11, class: "ci-bar" }));
          g.append(svg("line", { x1: x(r.elo_high), x2: x(r.elo_high), y1: 3, y2: 11, class: "ci-bar" }));
        }
        g.append(svg("circle", { cx: x(r.elo), cy: 7, r: 3.5, class: "ci-dot" },
          svg("title", {}, `${r.name}: ${fmt(r.elo, 1)} [${fmt(r.elo_low, 1)}, ${fmt(r.elo_high, 1)}]`)));
        bar = el("span", {}, g, el("span", { class: "ci-text" }, r.elo_low === null ? "" : `${fmt(r.elo_low)} – ${fmt(r.elo_high)}`));
      }
      return el("tr", { "data-bot": r.name },
        el("td", { "data-col": "rank" }, i + 1),
        el("td", { "data-col": "name" }, el("a", { href: "#bots", onclick: () => showBot(r.name) }, r.name)),
        el("td", { "data-col": "elo", "data-value": r.elo }, fmt(r.elo, 1)),
        el("td", { "data-col": "interval", "data-low": r.elo_low, "data-high": r.elo_high }, bar),
        el("td", { "data-col": "games", "data-value": r.games },
          el("a", { href: "#games", onclick: () => filterGames(r.name) }, r.games)),
        el("td", { "data-col": "avg_total", "data-value": r.avg_total }, fmt(r.avg_total, 1)),
        el("td", { "data-col": "wins", "data-value": r.wins }, fmt(r.wins, Number.isInteger(r.wins) ? 0 : 1)),
        el("td", { "data-col": "win_rate" }, r.win_rate === null ? "–" : fmt(100 * r.win_rate, 1)),
        el("td", { "data-col": "strikes", "data-value": r.strikes }, r.strikes),
        el("td", { "data-col": "timeouts", "data-value": r.timeouts }, r.timeouts),
        el("td", { "data-col": "forfeits", "data-value": r.forfeits }, r.forfeits));
    });
    put(host, el("thead", {}, head), el("tbody", {}, body));
  }

  /* ----------------------------------------------------------- head-to-head */
  function cellColour(cell) {
    const score = (cell[1] + 0.5 * cell[2]) / cell[0];
    const strong = cell[4] < DATA.significant_p;
    const t = Math.min(1, Math.abs(score - 0.5) * 2);
    if (strong) return score > 0.5 ? `hsl(140, 55%, ${62 - 26 * t}%)` : `hsl(0, 65%, ${64 - 24 * t}%)`;
    return score > 0.5 ? `hsl(140, 25%, ${92 - 14 * t}%)` : `hsl(0, 25%, ${92 - 14 * t}%)`;
  }

  function renderHeadToHead() {
    const host = $("#h2h-grid");
    if (!host) return;
    const names = DATA.bots;
    const table = el("table", { class: "h2h" });
    table.append(el("thead", {}, el("tr", {}, el("th", { class: "corner" }, "row vs column"),
      names.map((n) => el("th", { class: "col-label", title: n }, el("span", {}, n))))));
    const body = el("tbody");
    names.forEach((a, i) => {
      const tr = el("tr", {}, el("th", { class: "row-label", title: a }, a));
      names.forEach((b, j) => {
        const cell = DATA.h2h[i][j];
        if (i === j || !cell) {
          tr.append(el("td", { class: i === j ? "self" : "empty" }, ""));
          return;
        }
        const score = (cell[1] + 0.5 * cell[2]) / cell[0];
        const sig = cell[4] < DATA.significant_p;
        const text = `${a} vs ${b}: ${cell[1]} won, ${cell[2]} drawn, ${cell[3]} lost of ${cell[0]} ` +
          `(score ${(100 * score).toFixed(1)}%, p = ${cell[4]}${sig ? ", significant" : ""})`;
        tr.append(el("td", { class: "cell" + (sig ? " sig" : ""), style: `background:${cellColour(cell)}`, title: text,
          "data-row": a, "data-col": b, onclick: () => openCell(i, j) }, Math.round(100 * score)));
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
      el("h3", {}, `${a} vs ${b}`),
      el("p", {}, `${cell[0]} pairings: ${a} ranked ahead ${cell[1]}, level ${cell[2]}, behind ${cell[3]} ` +
        `(score ${(100 * (cell[1] + 0.5 * cell[2]) / cell[0]).toFixed(1)}%, sign test p = ${cell[4]}; ` +
        `${cell[4] < DATA.significant_p ? "significant at 95%" : "not significant"}).`),
      gameList(games.slice(0, 50), games.length));
    const first = games.find((g) => loaded.has(g.key)) || games[0];
    if (first) openGame(first.key);
  }

  /* --------------------------------------------------------- rating history */
  function renderHistory() {
    const host = $("#history-chart");
    if (!host || !DATA.history) return;
    const pts = DATA.history.points;
    if (pts.length === 0) { put(host, el("p", {}, "No games yet.")); return; }
    const W = 860, H = 320, L = 56, R = 150, T = 12, B = 34;
    const vals = pts.flatMap((p) => p.elo.filter((v) => v !== null));
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (hi - lo < 1) { lo -= 50; hi += 50; }
    const maxG = pts[pts.length - 1].games;
    const x = (g) => L + ((W - L - R) * g) / Math.max(maxG, 1);
    const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": "rating history" });
    for (let k = 0; k <= 4; k++) {
      const v = lo + ((hi - lo) * k) / 4;
      chart.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }),
        svg("text", { x: L - 6, y: y(v) + 4, class: "axis", "text-anchor": "end" }, Math.round(v)));
    }
    chart.append(svg("text", { x: (L + W - R) / 2, y: H - 4, class: "axis", "text-anchor": "middle" }, "games played"),
      svg("text", { x: L, y: H - 18, class: "axis" }, "0"),
      svg("text", { x: W - R, y: H - 18, class: "axis", "text-anchor": "end" }, maxG));
    (DATA.history.runs || []).forEach((start, k) => {
      chart.append(svg("line", { x1: x(start), x2: x(start), y1: T, y2: H - B, class: "run-start" }),
        svg("text", { x: x(start) + 3, y: T + 10, class: "axis" }, `run ${k + 2}`));
    });
    const n = DATA.bots.length;
    const ends = [];
    DATA.bots.forEach((name, b) => {
      const line = pts.filter((p) => p.elo[b] !== null).map((p) => `${x(p.games).toFixed(1)},${y(p.elo[b]).toFixed(1)}`);
      if (line.length === 0) return;
      chart.append(svg("polyline", { points: line.join(" "), class: "series", stroke: hue(b, n), "data-bot": name },
        svg("title", {}, name)));
      const last = pts[pts.length - 1].elo[b];
      if (last !== null) ends.push([y(last), name, b]);
    });
    ends.sort((a, c) => a[0] - c[0]);
    let prev = -Infinity;
    if (n <= 24) {
      for (const [yy, name, b] of ends) {
        const yl = Math.max(yy, prev + 11);
        prev = yl;
        chart.append(svg("text", { x: W - R + 6, y: yl + 4, class: "label", fill: hue(b, n) }, name));
      }
    }
    put(host, chart, el("p", { class: "note" }, `Elo after each checkpoint, by ${DATA.history.by}` +
      (n > 24 ? "; hover a line for its bot" : "") +
      ((DATA.history.runs || []).length ? "; a dashed line starts a run (a pause of more than 10 minutes)." : ".")));
  }

  /* ---------------------------------------------------------------- per bot */
  function bars(counts, labels, opts) {
    const W = opts.width || 380, H = 150, L = 34, B = 30, T = 8;
    const max = Math.max(1, ...counts);
    const bw = (W - L - 4) / Math.max(counts.length, 1);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart small", role: "img", "aria-label": opts.title });
    chart.append(svg("text", { x: L - 4, y: T + 8, class: "axis", "text-anchor": "end" }, max),
      svg("text", { x: L - 4, y: H - B, class: "axis", "text-anchor": "end" }, 0));
    counts.forEach((c, k) => {
      const h = ((H - B - T) * c) / max;
      chart.append(svg("rect", { x: L + k * bw + 1, y: H - B - h, width: Math.max(bw - 2, 1), height: h, class: opts.cls || "bar" },
        svg("title", {}, `${labels[k]}: ${c}`)));
      if (counts.length <= 14 || k % Math.ceil(counts.length / 12) === 0) {
        chart.append(svg("text", { x: L + k * bw + bw / 2, y: H - B + 12, class: "axis tiny", "text-anchor": "middle" }, labels[k]));
      }
    });
    chart.append(svg("text", { x: (L + W) / 2, y: H - 3, class: "axis", "text-anchor": "middle" }, opts.title));
    return chart;
  }

  function showBot(name) {
    const select = $("#bot-select");
    if (select) { select.value = name; renderBot(); }
  }

  function renderBot() {
    const host = $("#bot-detail");
    const select = $("#bot-select");
    if (!host || !select) return;
    const name = select.value;
    const b = DATA.per_bot[name];
    const row = DATA.leaderboard.find((r) => r.name === name);
    const t = b.totals;
    const totalLabels = t.counts.map((_, k) => `${t.lo + k * t.width}${t.width > 1 ? "–" + (t.lo + (k + 1) * t.width - 1) : ""}`);
    const edges = DATA.time_bins_ms;
    const short = (e) => (e >= 1000 ? `${e / 1000}k` : String(e));
    const timeLabels = edges.map((e) => short(e)).concat([`>${short(edges[edges.length - 1])}`]);
    const d = b.decisions;
    const pct = (a, c) => (c ? `${(100 * a / c).toFixed(1)}%` : "–");
    put(host, 
      el("div", { class: "facts" },
        el("div", {}, el("b", {}, "Elo "), `${fmt(row.elo, 1)} (${fmt(row.elo_low)} – ${fmt(row.elo_high)})`),
        el("div", {}, el("b", {}, "rounds won "), `${fmt(b.round_wins, Number.isInteger(b.round_wins) ? 0 : 1)} of ${b.rounds} (${pct(b.round_wins, b.rounds)})`),
        el("div", {}, el("b", {}, "ended a round "), `${b.finished} times (${pct(b.finished, b.rounds)} of its rounds)`),
        el("div", {}, el("b", {}, "finisher penalty "), `${b.penalised} of those ${b.finished} (${pct(b.penalised, b.finished)})`),
        el("div", {}, el("b", {}, "decisions "), d.count ? `${d.count}: median ${d.median} ms, 90% ${d.p90} ms, 99% ${d.p99} ms, max ${d.max} ms` : "no times in these records")),
      el("div", { class: "charts" },
        bars(t.counts, totalLabels, { title: `game totals (mean ${fmt(t.mean, 1)})` }),
        bars(d.bins, timeLabels, { title: "decision time (ms; each bar up to its label)", cls: "bar time" })),
      el("h3", {}, `Faults (${b.fault_count})`),
      b.faults.length === 0 ? el("p", {}, "None.") : el("table", { class: "faults" },
        el("thead", {}, el("tr", {}, el("th", {}, "kind"), el("th", {}, "game"), el("th", {}, "round"), el("th", {}, "detail"))),
        el("tbody", {}, b.faults.map((f) => el("tr", {}, el("td", {}, f.kind),
          el("td", {}, f.game ? el("a", { href: "#viewer", onclick: () => openGame(f.game) }, f.game) : "–"),
          el("td", {}, f.round === null || f.round === undefined ? "–" : f.round), el("td", {}, f.detail))))),
      b.fault_count > b.faults.length ? el("p", { class: "note" }, `${b.fault_count - b.faults.length} more not listed.`) : null);
  }

  function renderBots() {
    const select = $("#bot-select");
    if (!select) return;
    put(select, ...DATA.bots.map((n) => el("option", { value: n }, n)));
    select.addEventListener("change", renderBot);
    renderBot();
  }

  /* ------------------------------------------------------------------- gate */
  function renderGate() {
    const host = $("#gate-detail");
    const g = DATA.gate;
    if (!host || !g) return;
    const [lower, upper] = g.bounds;
    const hist = g.history && g.history.length ? g.history : [[g.games, g.llr]];
    const W = 620, H = 240, L = 48, R = 70, T = 10, B = 30;
    const ys = hist.map((p) => p[1]).concat([lower, upper]);
    const lo = Math.min(...ys) * 1.1, hi = Math.max(...ys) * 1.1;
    const maxG = Math.max(1, ...hist.map((p) => p[0]));
    const x = (v) => L + ((W - L - R) * v) / maxG;
    const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo || 1);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": "LLR" });
    chart.append(
      svg("line", { x1: L, x2: W - R, y1: y(upper), y2: y(upper), class: "bound accept" }),
      svg("text", { x: W - R + 4, y: y(upper) + 4, class: "label" }, `accept ${fmt(upper, 2)}`),
      svg("line", { x1: L, x2: W - R, y1: y(lower), y2: y(lower), class: "bound reject" }),
      svg("text", { x: W - R + 4, y: y(lower) + 4, class: "label" }, `reject ${fmt(lower, 2)}`),
      svg("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "grid" }),
      svg("text", { x: L - 6, y: y(0) + 4, class: "axis", "text-anchor": "end" }, "0"),
      svg("polyline", { points: hist.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "), class: "series llr" }),
      svg("text", { x: (L + W - R) / 2, y: H - 4, class: "axis", "text-anchor": "middle" }, "games"),
      svg("text", { x: W - R, y: H - 16, class: "axis", "text-anchor": "end" }, maxG));
    const penta = g.pentanomial || [];
    const pentaLabels = ["0", "0.5", "1", "1.5", "2"];
    put(host, 
      el("p", { class: `verdict ${g.verdict}`, "data-verdict": g.verdict }, `${g.candidate} vs ${g.baseline}: ${g.verdict}`),
      el("div", { class: "facts" },
        el("div", {}, el("b", {}, "SPRT "), `H0 Elo ${g.elo0} vs H1 Elo ${g.elo1}, α ${g.alpha}, β ${g.beta}`),
        el("div", {}, el("b", {}, "LLR "), `${fmt(g.llr, 3)} in [${fmt(lower, 3)}, ${fmt(upper, 3)}] after ${g.games} games`),
        el("div", {}, el("b", {}, "Elo "), `${fmt(g.elo, 1)} (95%: ${g.elo_ci ? fmt(g.elo_ci[0], 1) + " – " + fmt(g.elo_ci[1], 1) : "–"})`)),
      el("div", { class: "charts" }, chart,
        bars(penta, pentaLabels, { title: "pentanomial: candidate's points per game pair", width: 300, cls: "bar penta" })));
  }

  /* ------------------------------------------------------------------ games */
  function gameList(games, total) {
    if (!games.length) return el("p", {}, "No games.");
    return el("div", {},
      el("table", { class: "games" },
        el("thead", {}, el("tr", {}, el("th", {}, "game"), el("th", {}, "seats and totals"), el("th", {}, "rounds"),
          el("th", {}, "strikes"), el("th", {}, ""))),
        el("tbody", {}, games.map((g) => el("tr", { "data-game": g.key },
          el("td", {}, g.key),
          el("td", {}, gameLabel(g)),
          el("td", {}, g.rounds === null ? "–" : g.rounds),
          el("td", {}, g.strikes.some((s) => s) ? g.strikes.join("/") : ""),
          el("td", {}, el("button", { class: "open", onclick: () => openGame(g.key) }, loaded.has(g.key) ? "view" : "open file")))))),
      total > games.length ? el("p", { class: "note" }, `${total - games.length} more not listed.`) : null);
  }

  function filterGames(name) {
    const input = $("#games-filter");
    if (input) { input.value = name; renderGames(); }
  }

  function renderGames() {
    const host = $("#games-list");
    if (!host) return;
    const q = ($("#games-filter").value || "").trim().toLowerCase();
    const match = RESULTS.filter((g) => !q || g.key.toLowerCase().includes(q) || g.seats.some((b) => DATA.bots[b].toLowerCase() === q));
    put(host, el("p", { class: "note" }, `${match.length} games; ${loaded.size} of the ${RESULTS.length} records are in this file, ` +
      `the others open from ${DATA.records_dir}/ next to it.`), gameList(match.slice(0, 200), match.length));
  }

  /* ----------------------------------------------------------------- viewer */
  const view = { key: null, record: null, table: null, round: 0, done: 0 };

  function openGame(key) {
    const record = loaded.get(key);
    document.getElementById("viewer").scrollIntoView();
    if (record) { showRecord(key, record); return; }
    const file = (DATA.files || {})[key];
    const host = $("#viewer-body");
    const picker = el("input", { type: "file", accept: ".json,application/json", id: "record-file" });
    picker.addEventListener("change", () => {
      const f = picker.files[0];
      if (!f) return;
      f.text().then((text) => showRecord(key, JSON.parse(text))).catch((e) => showProblem(`${f.name}: ${e.message}`));
    });
    const ask = () => put(host, el("div", { class: "problem" },
      el("p", {}, `This page does not carry game ${key}. A page opened from disk may not read other files, ` +
        `so choose ${DATA.records_dir}/${file} here (it sits next to the report in the run's folder):`), picker));
    if (location.protocol === "file:" || !file) { ask(); return; }  // browsers refuse file:// fetches
    put(host, el("p", {}, `Loading ${DATA.records_dir}/${file} …`));
    const url = `${DATA.records_dir}/${encodeURIComponent(file)}`;
    fetch(url).then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then((record) => { loaded.set(key, record); showRecord(key, record); })
      .catch(ask);
  }

  function showProblem(text) { put($("#viewer-body"), el("p", { class: "problem" }, text)); }

  function showRecord(key, record) {
    view.key = key; view.record = record;
    try { view.table = SkyjoTable.positions(record, DATA.presets); } catch (e) { showProblem(`cannot show ${key}: ${e.message}`); return; }
    view.round = 0; view.done = 0;
    drawViewer();
    $("#viewer").focus({ preventScroll: true });
  }

  const cardClass = (v) => (v <= -1 ? "c-neg" : v === 0 ? "c-zero" : v <= 4 ? "c-low" : v <= 8 ? "c-mid" : "c-high");
  function card(value, state, extra) {
    if (state === SkyjoTable.REMOVED) return el("div", { class: "card removed" + (extra || "") }, "");
    if (state === SkyjoTable.HIDDEN) return el("div", { class: "card hidden" + (extra || "") }, "");
    return el("div", { class: `card ${cardClass(value)}${extra || ""}` }, value);
  }
  const actText = (a) => (a.act === "draw" || a.act === "take" ? a.act : `${a.act} ${a.pos}`);

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

  function drawViewer() {
    const r = view.record, tbl = view.table;
    const pos = tbl.positions[view.round][view.done];
    const n = r.players.length;
    const rnd = r.rounds[view.round];
    const decision = SkyjoTable.decisionAt(r, pos);
    const last = view.done > 0 ? rnd.actions[view.done - 1] : null;
    const lastRound = view.round === r.rounds.length - 1;
    const atEnd = lastRound && view.done === rnd.actions.length;
    const forfeits = (r.result && r.result.forfeits) || [];
    const seats = r.players.map((name, p) => {
      const grid = el("div", { class: "grid" });
      for (let k = 0; k < 12; k++) {
        const touched = last && last.seat === p && last.pos === k ? " touched" : "";
        grid.append(card(pos.values[p][k], pos.states[p][k], touched));
      }
      const due = decision && decision.seat === p;
      const marks = [];
      if (forfeits.includes(p)) marks.push(el("span", { class: "mark forfeit", title: "forfeited this game" }, "forfeit"));
      const strikes = ((r.meta && r.meta.strikes) || []).filter((s) => s.seat === p &&
        (s.round < view.round || (s.round === view.round && s.action < view.done)));
      if (strikes.length) marks.push(el("span", { class: "mark strike", title: strikes.map((s) => s.detail).join("\n") }, `${strikes.length} strike${strikes.length > 1 ? "s" : ""}`));
      return el("div", { class: "seat" + (due ? " due" : "") + (rnd.result && rnd.result.finisher === p && pos.over ? " finisher" : ""), "data-seat": p },
        el("div", { class: "seat-head" }, el("b", {}, name), " ", marks,
          el("span", { class: "total", "data-total": pos.totals[p] }, `total ${pos.totals[p]}`),
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
      info = el("div", { class: "decision" }, el("p", {}, `Round ${view.round} over: ${r.players[res.finisher]} ended it; scores ${JSON.stringify(pos.scores)}.`));
    }
    const finals = atEnd && r.result ? el("p", { class: "final", id: "final-totals" }, "Final totals: ",
      r.players.map((name, p) => el("span", { "data-seat": p, "data-total": view.table.totals[p] }, `${name} ${view.table.totals[p]}${r.result.winners.includes(p) ? " (won)" : ""}`)).reduce((acc, x) => acc.concat(acc.length ? [" · ", x] : [x]), [])) : null;
    put($("#viewer-body"), 
      el("div", { class: "viewer-head" }, el("b", {}, view.key), ` — ${r.players.join(" vs ")}; ` +
        (r.result ? `totals ${r.result.totals.join(", ")}` : "unfinished")),
      el("div", { class: "controls" },
        el("button", { id: "v-first", title: "start (Home)", onclick: () => step("home") }, "|‹ start"),
        el("button", { id: "v-prev-round", title: "previous round (PageUp / ↑)", onclick: () => step("round-") }, "« round"),
        el("button", { id: "v-prev", title: "previous action (←)", onclick: () => step("-") }, "‹ action"),
        el("span", { class: "where", id: "v-where" }, `round ${view.round + 1}/${r.rounds.length}, action ${view.done}/${rnd.actions.length}`),
        el("button", { id: "v-next", title: "next action (→)", onclick: () => step("+") }, "action ›"),
        el("button", { id: "v-next-round", title: "next round (PageDown / ↓)", onclick: () => step("round+") }, "round »"),
        el("button", { id: "v-last", title: "end (End)", onclick: () => step("end") }, "end ›|")),
      tbl.problems.length ? el("p", { class: "problem" }, tbl.problems.join("; ")) : null,
      el("div", { class: "table-area" }, el("div", { class: "seats" }, seats), middle),
      info, finals,
      el("div", { class: "log" }, el("b", {}, "this round: "), rnd.actions.slice(0, view.done).map((a, i) =>
        el("span", { class: "log-entry" + (a.auto ? " auto" : "") }, `${r.players[a.seat]} ${actText(a)}${a.auto ? " [" + a.auto + "]" : ""}${i < view.done - 1 ? ", " : ""}`))));
  }

  function step(how) {
    if (!view.record) return;
    const rounds = view.record.rounds;
    const count = (k) => rounds[k].actions.length;
    if (how === "+") {
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

  document.addEventListener("keydown", (e) => {
    if (!view.record || e.target.closest("input, select, textarea")) return;
    const keys = { ArrowRight: "+", ArrowLeft: "-", ArrowDown: "round+", PageDown: "round+", ArrowUp: "round-", PageUp: "round-", Home: "home", End: "end" };
    const how = keys[e.key];
    if (!how) return;
    e.preventDefault();
    step(how);
  });

  /* ------------------------------------------------------------------- boot */
  renderLeaderboard();
  renderHeadToHead();
  renderHistory();
  renderBots();
  renderGate();
  if ($("#games-filter")) { $("#games-filter").addEventListener("input", renderGames); renderGames(); }
  const wanted = new URLSearchParams(location.hash.slice(1)).get("game");
  if (DATA.single) openGame(DATA.single);
  else if (wanted && (loaded.has(wanted) || BY_KEY.has(wanted))) openGame(wanted);
  window.skyjoReport = { openGame: openGame, step: step, view: view, data: DATA };
})();
