// The live page: it reads the same JSON the API serves (/stats, /queries, /events) and nothing else.
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token");
const reports = new Map();   // query name -> [report, ...] (oldest first, at most KEEP)
const KEEP = 500;
const SHOWN = 200;       // reports in a query's table (the latest), and at most ROWS rows
const ROWS = 1000;
let lastStats = null;

function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (token) headers["Authorization"] = "Bearer " + token;
  return fetch(path, Object.assign({}, options, {headers}));
}

function withToken(path) {
  return token ? path + (path.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(token) : path;
}

function quote(name) { return encodeURIComponent(name); }

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// streams, engine, plot -------------------------------------------------------------------------

async function refreshStats() {
  try {
    const response = await api("/stats");
    if (!response.ok) throw new Error("HTTP " + response.status);
    lastStats = await response.json();
  } catch (error) {
    document.getElementById("engine").textContent = "not connected: " + error.message;
    return;
  }
  const stats = lastStats;
  document.getElementById("engine").textContent =
    "watermark " + (stats.watermark === null ? "–" : stats.watermark) + (stats.finished ? " (finished)" : "");
  document.getElementById("rates").textContent =
    " now: " + stats.rates.triples.toFixed(0) + " triples/s, " + stats.rates.results.toFixed(1) + " results/s";
  const body = document.querySelector("#streams tbody");
  body.replaceChildren(...stats.streams.map(stream => element("tr", {"data-stream": stream.iri},
    element("td", {}, element("code", {}, stream.iri)),
    element("td", {class: "num"}, stream.triples),
    element("td", {class: "num"}, stream.rate.toFixed(0)),
    element("td", {class: "num"}, stream.latest === null ? "–" : stream.latest),
    element("td", {class: "num"}, stream.rejected,
      ...stream.recent_rejected.slice(-3).map(line => element("div", {class: "rejected"}, line))))));
  for (const query of stats.queries) renderQueryInfo(query);
  drawPlot(stats);
}

function drawPlot(stats) {
  // two panels, one above the other, each on its own scale: triples/s (blue), results/s (red)
  const canvas = document.getElementById("plot");
  const context = canvas.getContext("2d");
  const width = canvas.width, pad = 40, seconds = 120;
  const panel = (canvas.height - 20) / 2;
  context.clearRect(0, 0, width, canvas.height);
  const now = Math.floor(Date.now() / 1000);
  const panels = [[stats.triples_per_second, "#1f77b4", "triples/s"], [stats.results_per_second, "#d62728", "results/s"]];
  panels.forEach(([points, colour, label], number) => {
    const top = 5 + number * panel, height = panel - 10;
    context.strokeStyle = "#999";
    context.strokeRect(pad, top, width - pad - 5, height);
    const highest = Math.max(1, ...points.map(([, count]) => count));
    context.fillStyle = colour;
    context.font = "10px sans-serif";
    context.fillText(String(highest), 2, top + 10);
    context.fillText(label, 2, top + height);
    const place = ([second, count]) => [pad + 3 + (width - pad - 11) * (1 - (now - second) / seconds),
                                        top + 3 + (height - 6) * (1 - count / highest)];
    context.strokeStyle = colour;
    context.beginPath();
    points.forEach((point, index) => {
      const [x, y] = place(point);
      if (index === 0) context.moveTo(x, y); else context.lineTo(x, y);
    });
    context.stroke();
    for (const point of points) {  // a dot per second, so that a lone second shows too
      const [x, y] = place(point);
      context.fillRect(x - 2, y - 2, 4, 4);
    }
  });
  context.fillStyle = "#555";
  context.fillText("-" + seconds + " s", pad, canvas.height - 4);
  context.fillText("now", width - 25, canvas.height - 4);
}

// queries -------------------------------------------------------------------------------------

function queryBox(name) {
  let box = document.querySelector(`.query[data-query="${CSS.escape(name)}"]`);
  if (box) return box;
  box = element("div", {class: "query", "data-query": name},
    element("h3", {}, name, " ",
      element("button", {class: "small", onclick: () => showWindow(name)}, "window now"), " ",
      element("button", {class: "small", onclick: () => unregister(name)}, "remove")),
    element("div", {class: "info"}),
    element("pre", {class: "text"}),
    element("div", {class: "results"}));
  document.getElementById("queries").append(box);
  return box;
}

function renderQueryInfo(query) {
  const box = queryBox(query.name);
  box.querySelector("pre.text").textContent = query.query;
  const latency = query.latency_ms;
  box.querySelector(".info").textContent =
    `${query.form} ${query.r2s} · ${query.evaluations} evaluations · ${query.results} reports · ` +
    `latency last ${fmt(latency.last)} ms, p50 ${fmt(latency.p50)} ms, p99 ${fmt(latency.p99)} ms`;
  const shape = JSON.stringify(query.variables);
  const changed = box.dataset.variables !== shape || box.dataset.form !== query.form;
  box.dataset.variables = shape;
  box.dataset.form = query.form;
  if (!reports.has(query.name)) reports.set(query.name, []);
  if (changed) renderResults(query.name);
}

function fmt(value) { return value === null || value === undefined ? "–" : value.toFixed(1); }

function renderResults(name) {
  const box = queryBox(name);
  const list = reports.get(name) || [];
  const form = box.dataset.form || "SELECT";
  const variables = JSON.parse(box.dataset.variables || "[]");
  const columns = form === "CONSTRUCT" ? ["triple"] : form === "ASK" ? ["boolean"] : variables;
  const head = element("tr", {}, element("th", {}, "t"), ...columns.map(c => element("th", {}, c)),
                       element("th", {}, ""));
  const rows = [];
  for (const report of list.slice(-SHOWN)) {
    const items = report.bindings || report.triples || (report.boolean === undefined ? [] : [report.boolean]);
    if (items.length === 0) {
      rows.push(element("tr", {"data-t": report.t, class: "empty"}, element("td", {class: "num"}, report.t),
                        element("td", {colspan: columns.length + 1}, "(no result)")));
      continue;
    }
    for (const item of items) {
      const cells = report.bindings ? columns.map(c => item[c] === undefined ? "" : item[c]) : [String(item)];
      rows.push(element("tr", {"data-t": report.t, "data-row": JSON.stringify(item)},
        element("td", {class: "num"}, report.t), ...cells.map(value => element("td", {}, element("code", {}, value))),
        element("td", {}, element("button", {class: "small", onclick: () => explain(name, report.t, item)}, "why?"))));
    }
  }
  const table = element("table", {}, element("thead", {}, head), element("tbody", {}, ...rows.slice(-ROWS)));
  box.querySelector(".results").replaceChildren(table);
  box.dataset.reports = String(list.length);
}

function onReport(report) {
  if (!reports.has(report.query)) reports.set(report.query, []);
  const list = reports.get(report.query);
  if (list.length && list[list.length - 1].seq >= report.seq) return;  // seen
  list.push(report);
  if (list.length > KEEP) list.splice(0, list.length - KEEP);
  scheduleRender(report.query);
}

const pending = new Set();
function scheduleRender(name) {
  if (pending.has(name)) return;
  pending.add(name);
  requestAnimationFrame(() => { pending.delete(name); renderResults(name); });
}

async function loadQueries() {
  const response = await api("/queries");
  if (!response.ok) return;
  for (const query of await response.json()) {
    renderQueryInfo(query);
    await readResults(query.name, 0);
  }
}

async function readResults(name, after) {
  // the reports kept after number `after`, a page at a time (a page is bounded in bytes)
  for (;;) {
    const response = await api(`/queries/${quote(name)}/results?after=${after}`);
    if (!response.ok) return;
    const page = await response.json();
    for (const report of page.results) onReport(report);
    if (!page.more || !page.results.length) return;
    after = page.results[page.results.length - 1].seq;
  }
}

async function register(event) {
  event.preventDefault();
  const name = document.getElementById("query-name").value.trim();
  const text = document.getElementById("query-text").value;
  const status = document.getElementById("register-status");
  const response = await api(name ? `/queries/${quote(name)}` : "/queries",
                             {method: name ? "PUT" : "POST", headers: {"Content-Type": "application/sparql-query"},
                              body: text});
  const answer = await response.json();
  if (!response.ok) { status.textContent = answer.error; status.className = "error"; return; }
  status.textContent = "registered " + answer.name;
  status.className = "";
  renderQueryInfo(answer);
}

async function unregister(name) {
  await api(`/queries/${quote(name)}`, {method: "DELETE"});
  reports.delete(name);
  const box = document.querySelector(`.query[data-query="${CSS.escape(name)}"]`);
  if (box) box.remove();
}

function show(title, text) {
  document.getElementById("detail-title").textContent = title;
  document.getElementById("detail-body").textContent = text;
  document.getElementById("detail").showModal();
}

async function showWindow(name) {
  const answer = await (await api(`/queries/${quote(name)}/window?limit=500`)).json();
  if (answer.error) { show(`window of ${name}`, answer.error); return; }
  show(`window of ${name} at ${answer.boundary}: ${answer.size} triples${answer.truncated ? " (first 500)" : ""}`,
       answer.triples.join("\n"));
}

async function explain(name, t, item) {
  const response = await api(`/queries/${quote(name)}/explain?t=${t}&item=${encodeURIComponent(JSON.stringify(item))}`);
  const answer = await response.json();
  show(`why ${JSON.stringify(item)} at ${t}`,
       answer.explanation ? (answer.explanation.text || answer.explanation.error || JSON.stringify(answer.explanation, null, 2))
                          : (answer.reason || answer.error));
}

async function catchUp() {
  for (const [name, list] of reports) {
    await readResults(name, list.length ? list[list.length - 1].seq : 0);
  }
}

function listen() {
  const source = new EventSource(withToken("/events"));
  source.addEventListener("open", catchUp);
  source.addEventListener("result", event => onReport(JSON.parse(event.data)));
  source.addEventListener("overflow", () => { source.close(); setTimeout(() => { loadQueries(); listen(); }, 500); });
}

document.getElementById("register").addEventListener("submit", register);
loadQueries().then(() => { listen(); refreshStats(); setInterval(refreshStats, 1000); });
