// kernelgate dashboard: the live parts of the server-rendered pages. Plain
// JavaScript and SVG, no library and no build step (the binary embeds this
// file as it is). Data comes from /ui/overview.json and /ui/api/ (the API's
// read endpoints under the login cookie's key); text goes in as textContent.
"use strict";

const COLOURS = {
  correct: "#2e9e5b", incorrect: "#d1495b", compile_error: "#e09f3e", runtime_error: "#f2c14e",
  timeout: "#b5651d", reward_hack: "#8e44ad", harness_error: "#7f8c8d", invalid_submission: "#b0b4b8",
};
const ORDER = Object.keys(COLOURS);
const colour = (s) => COLOURS[s] || "#9aa0a6";
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function html(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : String(k));
  return e;
}

const $ = (sel) => document.querySelector(sel);
const set = (sel, text) => { const e = $(sel); if (e) e.textContent = text; };
const fmt = (v, d = 3) => (v === null || v === undefined || Number.isNaN(v)) ? "–" :
  (Number.isInteger(v) ? String(v) : Number(v).toPrecision(d));

// seconds writes a latency as overview.Seconds does: ms below a second.
const seconds = (v) => (v === null || v === undefined || Number.isNaN(v)) ? "–" :
  v < 0.9995 ? String(Number((v * 1000).toPrecision(3))) + " ms" :
  v >= 100 ? v.toFixed(0) + " s" : String(Number(v.toPrecision(3))) + " s";
// measured writes run times as overview.Measured's String does: observed figures, with their count.
const measured = (m) => !m || !m.count ? "–" :
  `${seconds(m.p50)} / ${seconds(m.p99)} / ${seconds(m.max)} (${m.count} ${m.count === 1 ? "run" : "runs"})`;

function status(sel, s) {
  const e = $(sel);
  if (e) { e.textContent = s; e.className = "st st-" + s; }
}

function showError(msg) {
  let e = $("#error");
  if (!e) { e = html("p", { id: "error", class: "error" }); $("main").prepend(e); }
  e.textContent = msg;
}

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store", credentials: "same-origin" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw Object.assign(new Error(body.message || ("HTTP " + r.status)), { status: r.status });
  return body;
}

// refused: the API no longer takes the key (revoked, or the cookie is gone).
// Polling stops: each refused try would count against this address's limit
// on failed authentications.
function refused(e) {
  if (e.status !== 401) return false;
  showError(e.message + " (reload the page to log in again)");
  return true;
}

// ---- login -------------------------------------------------------------

function login() {
  const f = $("#login");
  if (!f) return;
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await fetch("/ui/login", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ key: $("#key").value }) });
    if (r.ok) location.reload(); else showError((await r.json().catch(() => ({}))).message || "login failed");
  });
}

// ---- overview ----------------------------------------------------------

function overview() {
  const win = ($("#window") && $("#window").dataset.window) || "1h";
  let timer = null;
  async function tick() {
    let s;
    try { s = await getJSON("/ui/overview.json?window=" + encodeURIComponent(win)); } catch (e) {
      if (refused(e)) clearInterval(timer); else showError(e.message);
      return;
    }
    set("#ready", s.health || (s.ready ? "yes" : "no"));
    set("#queue", fmt(s.queue_depth));
    const total = Object.values(s.verdicts).reduce((a, b) => a + b, 0);
    set("#total", fmt(total));
    set("#exec", measured(s.exec));
    set("#wait", measured(s.queue_wait));
    if (s.history) drawHistory(s.history);
    verdictTable(s.verdicts);
    verdictDetail(s, total);
    workerTables(s);
    if (s.history) { rewardTables(s.history); taskTable(s.history.tasks || []); }
    batchTable(s.batches || []);
    searchTable(s.searches || []);
  }
  tick();
  timer = setInterval(tick, 2000);
}

// ---- the history (GET /v1/stats/history, kept by the gateway) ------------

// timeAxis places a step on a chart of width W spanning the window.
function timeAxis(h, W) {
  const from = Date.parse(h.from), span = Math.max(1, Date.parse(h.to) - from + h.step_s * 1000);
  return { x: (t) => 30 + (W - 34) * (Date.parse(t) - from) / span, bw: Math.max(2, (W - 34) * h.step_s * 1000 / span - 0.5) };
}

function drawHistory(h) {
  const pts = h.points || [];
  set("#history-count", h.evaluations);
  // The latest whole step's rate: the current one is still filling.
  const done = pts.filter((p) => Date.parse(p.t) + h.step_s * 1000 <= Date.parse(h.to));
  if (done.length) set("#rate", done[done.length - 1].evaluations_per_s.toFixed(2));
  const el = $("#mix");
  el.replaceChildren();
  const [W, H] = fit(el), ax = timeAxis(h, W);
  const max = Math.max(1, ...pts.map((p) => p.evaluations));
  const seen = new Set();
  for (const p of pts) {
    let y = H - 14;
    for (const k of [...ORDER, ...Object.keys(p.verdicts).filter((k) => !ORDER.includes(k))]) {
      if (!p.verdicts[k]) continue;
      seen.add(k);
      const hh = (p.verdicts[k] / max) * (H - 30);
      y -= hh;
      el.append(svg("rect", { x: ax.x(p.t), y, width: ax.bw, height: hh, fill: colour(k), "data-status": k }));
    }
  }
  el.append(svg("text", { x: 4, y: 12 }, `max ${max} per ${h.step_s} s step · last ${h.window}`));
  el.append(svg("text", { x: 4, y: H - 2 }, new Date(Date.parse(h.from)).toLocaleTimeString()));
  el.append(svg("text", { x: W - 60, y: H - 2 }, "now"));
  legend("#legend", seen);
  series("#ratechart", h, pts.map((p) => [p.t, p.evaluations_per_s]), "#3454d1");
  series("#queuechart", h, pts.filter((p) => p.queue_depth != null).map((p) => [p.t, p.queue_depth]), "#e09f3e");
  gpuSeries("#gpuchart", h, pts, (g) => g.utilization_percent, 100);
  gpuSeries("#gpumemchart", h, pts, (g) => g.memory_used_bytes == null ? null : g.memory_used_bytes / 2 ** 30);
}

// gpuSeries draws one reading of each GPU over the window, a line per GPU.
function gpuSeries(sel, h, pts, read, ymax) {
  const gpus = new Map();
  for (const p of pts) for (const g of p.gpus || []) {
    const v = read(g);
    if (v == null) continue;
    if (!gpus.has(g.index)) gpus.set(g.index, []);
    gpus.get(g.index).push([p.t, v]);
  }
  const el = $(sel);
  if (!gpus.size) { el.replaceChildren(); fit(el); el.append(svg("text", { x: 8, y: 16 }, "no GPU reading in the window")); return; }
  const top = ymax || Math.max(1, ...[...gpus.values()].flat().map((p) => p[1]));
  [...gpus.entries()].forEach(([i, xs], n) => series(sel, h, xs, ["#2e9e5b", "#8e44ad", "#d1495b", "#3454d1"][n % 4], n > 0, top,
    [...gpus.keys()].map((k) => "GPU " + k).join(", ")));
}

// series draws [time, value] points as a line over the window (keep: add
// to what is drawn; ymax: a fixed top).
function series(sel, h, pts, stroke, keep, ymax, label) {
  const el = $(sel);
  if (!keep) el.replaceChildren();
  const [W, H] = fit(el), ax = timeAxis(h, W);
  if (!pts.length) { if (!keep) el.append(svg("text", { x: 8, y: 16 }, "nothing in the window")); return; }
  const top = ymax || Math.max(1, ...pts.map((p) => p[1]));
  const Y = (v) => H - 6 - (H - 22) * v / top;
  el.append(svg("polyline", { points: pts.map((p) => (ax.x(p[0]) + ax.bw / 2) + "," + Y(p[1])).join(" "), fill: "none", stroke, "stroke-width": 1.5 }));
  if (pts.length < 60) for (const p of pts) el.append(svg("circle", { cx: ax.x(p[0]) + ax.bw / 2, cy: Y(p[1]), r: 2, fill: stroke })); // a lone step shows
  if (!keep) el.append(svg("text", { x: 4, y: 12 }, "max " + fmt(top) + (label ? " · " + label : "")));
}

// rewardTables: per reward function, the histogram over the window and
// the mean with its p10–p90 band per step.
function rewardTables(h) {
  const fns = Object.keys(h.rewards || {}).sort();
  const rows = fns.map((fn) => { const r = h.rewards[fn];
    return html("tr", { "data-fn": fn }, html("td", {}, html("code", {}, fn)), html("td", {}, r.count), html("td", {}, fmt(r.mean)),
      html("td", {}, fmt(r.min)), html("td", {}, fmt(r.max))); });
  $("#rewardtable tbody").replaceChildren(...(rows.length ? rows : [html("tr", {}, html("td", { colspan: 5 }, "no reward in the window"))]));
  const box = $("#rewards");
  box.replaceChildren();
  for (const fn of fns) {
    const hist = svg("svg", { class: "chart small hist", "data-fn": fn, role: "img", "aria-label": fn + " histogram" });
    const band = svg("svg", { class: "chart small band", "data-fn": fn, role: "img", "aria-label": fn + " over time" });
    box.append(html("div", {}, html("h3", {}, fn), hist, band));
    drawHistogram(hist, h.rewards[fn]);
    drawBand(band, h, fn);
  }
}

function drawHistogram(el, r) {
  const [W, H] = fit(el), n = r.counts.length, bw = (W - 34) / n, top = Math.max(1, ...r.counts);
  r.counts.forEach((c, i) => {
    const hh = (H - 30) * c / top;
    const rect = svg("rect", { x: 30 + i * bw, y: H - 14 - hh, width: Math.max(1, bw - 1), height: hh, fill: "#3454d1" });
    rect.append(svg("title", {}, `${fmt(r.edges[i])} to ${fmt(r.edges[i + 1])}: ${c}`));
    el.append(rect);
  });
  el.append(svg("text", { x: 4, y: 12 }, `${r.count} rewards · mean ${fmt(r.mean)} · max bin ${top}`));
  el.append(svg("text", { x: 30, y: H - 2 }, fmt(r.min)));
  el.append(svg("text", { x: W - 40, y: H - 2 }, fmt(r.max)));
}

function drawBand(el, h, fn) {
  const pts = (h.points || []).filter((p) => p.rewards && p.rewards[fn]).map((p) => [p.t, p.rewards[fn]]);
  const [W, H] = fit(el), ax = timeAxis(h, W);
  const lo = Math.min(0, ...pts.map((p) => p[1].p10)), hi = Math.max(lo + 1e-9, ...pts.map((p) => p[1].p90));
  const Y = (v) => H - 14 - (H - 30) * (v - lo) / (hi - lo);
  for (const [t, r] of pts) {
    el.append(svg("rect", { x: ax.x(t), y: Y(r.p90), width: ax.bw, height: Math.max(1, Y(r.p10) - Y(r.p90)), fill: "#c9d3f5" }));
  }
  el.append(svg("polyline", { points: pts.map(([t, r]) => (ax.x(t) + ax.bw / 2) + "," + Y(r.mean)).join(" "), fill: "none",
    stroke: "#3454d1", "stroke-width": 1.5 }));
  if (pts.length < 60) for (const [t, r] of pts) el.append(svg("circle", { cx: ax.x(t) + ax.bw / 2, cy: Y(r.mean), r: 2, fill: "#3454d1" }));
  el.append(svg("text", { x: 4, y: 12 }, `mean, p10–p90 per step (${fmt(lo)} to ${fmt(hi)})`));
}

const share = (v) => (100 * v).toFixed(1) + "%";
const flagText = (m) => Object.keys(m || {}).filter((k) => m[k] > 0).sort((a, b) => m[b] - m[a] || a.localeCompare(b))
  .map((k) => k + " " + m[k]).join(", ") || "–";
const ago = (t) => { const d = (Date.now() - Date.parse(t)) / 1000;
  return d < 60 ? Math.max(0, Math.round(d)) + "s ago" : d < 3600 ? Math.round(d / 60) + "m ago" : Math.round(d / 3600) + "h ago"; };

function taskTable(ts) {
  const rows = ts.map((t) => html("tr", { "data-task": t.task_hash },
    html("td", {}, html("code", { title: t.task_hash }, t.task_id || t.task_name)), html("td", {}, t.evaluations),
    html("td", {}, share(t.pass_rate)), html("td", {}, share(t.hack_rate)), html("td", {}, flagText(t.hack_flags)),
    html("td", {}, fmt(t.median_speedup)), html("td", {}, ago(t.last_at))));
  $("#tasktable tbody").replaceChildren(...(rows.length ? rows : [html("tr", {}, html("td", { colspan: 7 }, "no evaluation in the window"))]));
}

function batchTable(bs) {
  const rows = bs.map((b) => html("tr", { "data-batch": b.batch_id },
    html("td", {}, html("a", { href: "/ui/batches/" + encodeURIComponent(b.batch_id) }, html("code", {}, b.batch_id))),
    html("td", {}, html("code", { title: b.task_hash }, b.task_name)), html("td", {}, b.reward_fn),
    html("td", {}, html("span", { class: "st st-" + b.status }, b.status)), html("td", {}, b.done + " / " + b.total),
    html("td", {}, b.correct), html("td", {}, fmt(b.mean_reward)), html("td", {}, ago(b.created_at))));
  $("#batchlist tbody").replaceChildren(...(rows.length ? rows : [html("tr", {}, html("td", { colspan: 8 }, "no batch stored"))]));
}

function searchTable(ss) {
  const rows = ss.map((s) => html("tr", { "data-search": s.search_id },
    html("td", {}, html("a", { href: "/ui/searches/" + encodeURIComponent(s.search_id) }, s.search_id)),
    html("td", {}, html("code", {}, s.task_id)), html("td", {}, html("span", { class: "st st-" + s.state }, s.state)),
    html("td", {}, s.steps + " / " + s.steps_budget),
    html("td", {}, s.best && s.best.verdict ? fmt(s.best.verdict.speedup) : "–"), html("td", {}, s.best ? fmt(s.best.reward) : "–"),
    html("td", {}, ago(s.created_at))));
  $("#searchtable tbody").replaceChildren(...(rows.length ? rows : [html("tr", {}, html("td", { colspan: 7 }, "no search"))]));
}

// fit gives a chart's viewBox the element's own size, so that text in it
// keeps its size whatever the window's width.
function fit(el) {
  const W = Math.max(200, Math.round(el.clientWidth)), H = Math.max(80, Math.round(el.clientHeight));
  el.setAttribute("viewBox", `0 0 ${W} ${H}`);
  return [W, H];
}

// legend lists the statuses seen, each with its colour.
function legend(sel, statuses) {
  $(sel).replaceChildren(...[...statuses].map((k) => {
    const i = html("i");
    i.style.background = colour(k);
    return html("span", {}, i, k);
  }));
}

function verdictTable(v) {
  const rows = Object.keys(v).sort((a, b) => v[b] - v[a] || a.localeCompare(b)).map((k) =>
    html("tr", {}, html("td", {}, html("span", { class: "st st-" + k }, k)), html("td", {}, fmt(v[k]))));
  $("#verdicts tbody").replaceChildren(...rows);
}

function workerTables(s) {
  const w = (s.workers || []).map((x) => html("tr", {}, html("td", {}, x.device), html("td", {}, x.up ? "yes" : "no"),
    html("td", {}, fmt(x.in_flight) + " / " + fmt(x.slots))));
  $("#workers tbody").replaceChildren(...(w.length ? w : [html("tr", {}, html("td", { colspan: 3 }, "no local worker"))]));
  const g = (s.gpus || []).map((x) => html("tr", {}, html("td", {}, x.index), html("td", {}, x.name),
    html("td", {}, x.utilization_percent == null ? "–" : x.utilization_percent + "%"),
    html("td", {}, (x.memory_used_bytes == null ? "–" : (x.memory_used_bytes / 2 ** 30).toFixed(1)) + " / " +
      (x.memory_total_bytes / 2 ** 30).toFixed(1) + " GiB"),
    html("td", {}, x.in_flight + " / " + x.concurrency)));
  $("#gpus tbody").replaceChildren(...(g.length ? g :
    [html("tr", {}, html("td", { colspan: 5 }, "no GPU (" + (s.gpu_mode || "?") + (s.gpu_reason ? ": " + s.gpu_reason : "") + ")"))]));
}

// verdictDetail: cache hits, the sink's backlog, cheats by flag, the slowest tasks.
function verdictDetail(s, total) {
  const pct = (n) => total > 0 ? (100 * (n || 0) / total).toFixed(1) + "%" : "–";
  set("#cache", pct((s.cached || {}).cache) + " / " + pct((s.cached || {}).shared));
  set("#backlog", fmt(s.sink_backlog));
  const f = s.hack_flags || {};
  const flags = Object.keys(f).filter((k) => f[k] > 0).sort((a, b) => f[b] - f[a] || a.localeCompare(b)).map((k) =>
    html("tr", {}, html("td", {}, html("span", { class: "st st-reward_hack" }, k)), html("td", {}, fmt(f[k]))));
  $("#flags tbody").replaceChildren(...(flags.length ? flags : [html("tr", {}, html("td", { colspan: 2 }, "none caught"))]));
  const sl = s.slowest;
  if (!sl) return;
  set("#slowest-hint", "By median run time over the last " + sl.runs + " runs this gateway counted (cached answers left out).");
  const rows = (sl.tasks || []).map((t) => html("tr", {},
    html("td", {}, html("code", { title: t.task_hash }, t.task_id || (t.task_name + " (" + t.task_hash.replace(/^[^:]*:/, "").slice(0, 8) + ")"))),
    html("td", {}, t.evaluations), html("td", {}, fmt(t.median_exec_s) + " s"), html("td", {}, fmt(t.max_exec_s) + " s"),
    html("td", {}, new Date(t.last_at).toLocaleTimeString())));
  $("#slowest tbody").replaceChildren(...(rows.length ? rows : [html("tr", {}, html("td", { colspan: 5 }, "no run yet"))]));
}

// ---- a batch -----------------------------------------------------------

function batch(id) {
  let shown = -1;
  // An item's code is in the Parquet log, not the batch store: read when a "code" is opened.
  $("#items").addEventListener("toggle", (ev) => {
    const d = ev.target;
    if (d.open && d.dataset && d.dataset.code !== undefined) showCode(id, d);
  }, true);
  async function poll() {
    let b;
    try { b = await getJSON("/ui/api/v1/batches/" + encodeURIComponent(id)); } catch (e) {
      if (!refused(e)) { showError(e.message); setTimeout(poll, 3000); }
      return;
    }
    $("#bar").style.width = (100 * b.done / Math.max(1, b.total)) + "%";
    set("#done", b.done);
    status("#state", b.status);
    if (b.done !== shown) { batchRows(b); shown = b.done; }
    if (b.status !== "done") setTimeout(poll, 1000);
  }
  poll();
}

let codes = new Map();   // index -> item of GET /v1/batches/{id}/code

async function showCode(id, d) {
  const i = Number(d.dataset.code), pre = d.querySelector("pre");
  if (!codes.has(i)) {
    try {
      const c = await getJSON("/ui/api/v1/batches/" + encodeURIComponent(id) + "/code");
      codes = new Map(c.items.map((it) => [it.index, it]));
    } catch (e) { pre.textContent = e.message; return; }
  }
  const it = codes.get(i);
  pre.textContent = it ? (it.code || "(no code: the completion held none)\n\n" + (it.completion || ""))
    : "not in the log yet (it lands seconds after the verdict): close and open again";
}

function batchRows(b) {
  const open = new Set([...document.querySelectorAll("#items details[data-i][open]")].map((d) => d.dataset.i));
  const openCode = new Set([...document.querySelectorAll("#items details[data-code][open]")].map((d) => d.dataset.code));
  const rows = [];
  for (let i = 0; i < b.total; i++) {
    const v = b.results[i];
    const details = html("td");
    if (v) {
      const d = html("details", { "data-i": i }, html("summary", {}, "verdict"));
      if (open.has(String(i))) d.open = true;
      if (v.hack_flags && v.hack_flags.length) d.append(html("p", {}, "hack flags: ", html("code", {}, v.hack_flags.join(", "))));
      if (v.error_signature) d.append(html("p", {}, "error signature: ", html("code", {}, v.error_signature)));
      if (v.feedback) d.append(html("pre", { class: "feedback" }, v.feedback));
      d.append(html("pre", {}, JSON.stringify(v, null, 2)));
      const c = html("details", { "data-code": i }, html("summary", {}, "code"), html("pre", { class: "code" }));
      details.append(d, c);
      if (openCode.has(String(i))) c.open = true;
    }
    if (b.notes[i]) details.append(html("p", { class: "hint" }, b.notes[i]));
    rows.push(html("tr", { class: v ? "in" : "pending" }, html("td", {}, i),
      html("td", {}, html("span", { class: "st st-" + (v ? v.status : "pending") }, v ? v.status : "pending")),
      html("td", {}, fmt(b.rewards[i])), html("td", {}, v ? fmt(v.speedup) : ""),
      html("td", {}, b.cached[i] ? "yes" : ""), details));
  }
  $("#items").replaceChildren(...rows);
  groupTable(b);
}

// groupTable: the batch as a GRPO group (group.go computes the same for the first draw).
function groupTable(b) {
  const xs = b.rewards.map((r, i) => [i, r]).filter(([, r]) => r !== null && r !== undefined);
  if (!$("#group") || !xs.length) return;
  const mean = xs.reduce((a, [, r]) => a + r, 0) / xs.length;
  const std = Math.sqrt(xs.reduce((a, [, r]) => a + (r - mean) ** 2, 0) / xs.length);
  const signed = (v) => (v >= 0 ? "+" : "") + v.toFixed(3);
  set("#gmean", fmt(mean));
  set("#gstd", fmt(std));
  $("#group tbody").replaceChildren(...xs.map(([i, r]) => html("tr", { "data-i": i }, html("td", {}, i), html("td", {}, fmt(r)),
    html("td", {}, signed(r - mean)), html("td", {}, std > 1e-12 ? signed((r - mean) / std) : "–"))));
}

// ---- a search ----------------------------------------------------------

function search(id) {
  const nodes = new Map(); // node -> {node, parent, action, status, speedup, code}
  // The curve is the best speedup so far; where nothing is timed (CPU mode,
  // timing off) it is the best reward so far.
  const best = [], bestReward = [], spent = [];
  let tokens = 0, topReward = null, pending = false, selected = 0;
  const redraw = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawTree(nodes, selected, pick); drawLine("#curve", best.length ? best : bestReward,
      best.length ? "best speedup" : "best reward (nothing timed)");
      drawLine("#tokencurve", spent, "tokens"); });
  };
  const pick = (n) => { selected = n; showDiff(nodes, n); redraw(); };
  const es = new EventSource("/ui/api/v1/searches/" + encodeURIComponent(id) + "/events");
  es.addEventListener("step", (ev) => {
    const s = JSON.parse(ev.data);
    tokens += (s.tokens_in || 0) + (s.tokens_out || 0);
    spent.push([s.seq, tokens]);
    if (s.best_speedup != null) best.push([s.seq, s.best_speedup]);
    if (s.node > 0) topReward = Math.max(topReward ?? s.reward, s.reward);
    if (topReward != null) bestReward.push([s.seq, topReward]);
    set("#steps", s.seq);
    if (s.best_speedup != null) set("#best", fmt(s.best_speedup));
    if (s.node > 0) {
      nodes.set(s.node, { node: s.node, parent: s.parent, action: s.action, code: s.code || "", duplicate: s.duplicate,
        status: s.verdict ? s.verdict.status : "error", speedup: s.verdict ? s.verdict.speedup : null });
    }
    redraw();
  });
  es.addEventListener("end", (ev) => {
    es.close();
    const st = JSON.parse(ev.data);
    status("#sstate", st.state);
    set("#tokens", st.tokens_in + " in / " + st.tokens_out + " out");
  });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) showError("the search's event stream closed"); };
}

// drawTree lays the tree out top-down: leaves left to right in depth-first
// order, a parent above the middle of its children, node 0 the task.
function drawTree(nodes, selected, pick) {
  const el = $("#tree");
  const kids = new Map([[0, []]]);
  for (const n of [...nodes.values()].sort((a, b) => a.node - b.node)) {
    if (!kids.has(n.parent)) kids.set(n.parent, []);
    kids.get(n.parent).push(n.node);
  }
  const pos = new Map();
  let leaf = 0, depthMax = 0;
  const place = (id, depth) => {
    depthMax = Math.max(depthMax, depth);
    const ch = (kids.get(id) || []).filter((c) => c !== id);
    if (!ch.length) { pos.set(id, [leaf++, depth]); return; }
    ch.forEach((c) => place(c, depth + 1));
    pos.set(id, [(pos.get(ch[0])[0] + pos.get(ch[ch.length - 1])[0]) / 2, depth]);
  };
  place(0, 0);
  for (const n of nodes.values()) if (!pos.has(n.node)) place(n.node, 1); // a parent never seen: hang it under the task
  const dx = 64, dy = 80, W = Math.max(600, leaf * dx + 40), H = Math.max(300, depthMax * dy + 60);
  el.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const xy = (id) => { const [x, d] = pos.get(id); return [20 + x * dx + dx / 2, 24 + d * dy]; };
  el.replaceChildren();
  for (const n of nodes.values()) {
    const [x1, y1] = xy(pos.has(n.parent) ? n.parent : 0), [x2, y2] = xy(n.node);
    el.append(svg("line", { class: "edge", x1, y1, x2, y2 }));
    el.append(svg("text", { x: x1 + 0.6 * (x2 - x1) + 4, y: y1 + 0.6 * (y2 - y1) }, n.action)); // nearer the child: siblings' labels part
  }
  const [rx, ry] = xy(0);
  el.append(svg("rect", { x: rx - 18, y: ry - 10, width: 36, height: 20, rx: 4, fill: "#1d1f21" }));
  el.append(svg("text", { x: rx - 12, y: ry + 4, class: "light" }, "task"));
  for (const n of nodes.values()) {
    const [x, y] = xy(n.node);
    const r = n.speedup > 0 ? 7 + 11 * Math.min(n.speedup, 4) / 4 : 7; // speedup 4x and more: the largest
    const c = svg("circle", { class: "node" + (n.node === selected ? " sel" : ""), cx: x, cy: y, r, fill: colour(n.status),
      "data-node": n.node, "data-status": n.status });
    c.append(svg("title", {}, `node ${n.node}: ${n.status}` + (n.speedup != null ? `, speedup ${fmt(n.speedup)}` : "") +
      (n.duplicate ? " (duplicate)" : "")));
    c.addEventListener("click", () => pick(n.node));
    el.append(c);
    el.append(svg("text", { x: x + r + 2, y: y + 4 }, String(n.node)));
  }
  legend("#treelegend", new Set([...nodes.values()].map((n) => n.status)));
}

function drawLine(sel, pts, label) {
  const el = $(sel);
  const [W, H] = fit(el);
  el.replaceChildren();
  if (!pts.length) { el.append(svg("text", { x: 8, y: 16 }, "no " + label + " yet")); return; }
  const xmax = Math.max(1, ...pts.map((p) => p[0])), ymax = Math.max(1e-9, ...pts.map((p) => p[1]));
  const X = (x) => 30 + (W - 40) * x / xmax, Y = (y) => H - 16 - (H - 30) * y / ymax;
  el.append(svg("polyline", { points: pts.map((p) => X(p[0]) + "," + Y(p[1])).join(" "), fill: "none",
    stroke: "#3454d1", "stroke-width": 2 }));
  el.append(svg("text", { x: 4, y: 12 }, label + " (max " + fmt(ymax) + ")"));
  el.append(svg("text", { x: W - 60, y: H - 2 }, "step " + xmax));
}

// showDiff shows node n's code against its parent's, line by line (a
// longest-common-subsequence diff: kernels are a few hundred lines).
function showDiff(nodes, n) {
  const node = nodes.get(n), parent = nodes.get(node.parent);
  set("#diffhead", parent ? `Node ${n} (${node.action}) vs its parent ${node.parent}` : `Node ${n}: its code (its parent is the task)`);
  const a = parent ? parent.code.split("\n") : [], b = node.code.split("\n");
  const out = $("#diff");
  out.replaceChildren();
  if (a.length * b.length > 4e6) { out.textContent = node.code; return; }
  const L = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--)
    L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  let i = 0, j = 0;
  const line = (cls, t) => out.append(cls ? html("span", { class: cls }, t) : t + "\n");
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) { line("", "  " + a[i]); i++; j++; }
    else if (j < b.length && (i >= a.length || L[i][j + 1] >= L[i + 1][j])) line("add", "+ " + b[j++]);
    else line("del", "- " + a[i++]);
  }
}

// ---- a red-team run: its progress, then the page again with the report --

function redteam(id) {
  async function poll() {
    let r;
    try { r = await getJSON("/ui/api/v1/redteam/" + encodeURIComponent(id)); } catch (e) {
      if (!refused(e)) { showError(e.message); if (e.status !== 404) setTimeout(poll, 3000); }
      return;
    }
    set("#rtdone", r.done);
    $("#rtprogress").value = r.done;
    status("#rtstate", r.status);
    // The report's tables are the server's to draw: reload once it is in.
    if (r.status === "running") setTimeout(poll, 2000); else location.reload();
  }
  if ($("#redteam").dataset.status === "running") setTimeout(poll, 2000);
}

document.addEventListener("DOMContentLoaded", () => {
  login();
  const p = document.querySelector("[data-page]");
  if (!p) return;
  if (p.dataset.page === "overview") overview();
  if (p.dataset.page === "batch") batch(p.dataset.batch);
  if (p.dataset.page === "search") search(p.dataset.search);
  if (p.dataset.page === "redteam") redteam(p.dataset.redteam);
});
