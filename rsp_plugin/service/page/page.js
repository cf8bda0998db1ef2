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

// terms as a person reads them -----------------------------------------------------------------
// A cell shows a term the short way (a prefixed name with the query's own PREFIX lines, a number
// as a number, a string without its quotes); its title holds the exact N-Triples form.

const XSD = "http://www.w3.org/2001/XMLSchema#";
const INTEGERS = new Set(["integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
  "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"]);
const PLAIN = new Set(["string", "boolean", "dateTime", "date", "time", "duration", "dateTimeStamp"]);
const LOCAL = /^([A-Za-z0-9_]([A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)?$/;
const TERM = /"(?:[^"\\\n]|\\.)*"(?:\^\^<[^<>"\s]*>|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?|<[^<>"\s]*>|_:\S+/g;

function prefixesOf(text) {
  // the query's PREFIX lines (longest namespace first: the most specific name wins)
  const found = [...(text || "").matchAll(/PREFIX\s+([A-Za-z][\w.\-]*)?:\s*<([^>]*)>/gi)]
    .map(match => [match[1] || "", match[2]]).filter(([, namespace]) => namespace);
  return found.sort((a, b) => b[1].length - a[1].length);
}

function compactIri(iri, prefixes) {
  for (const [name, namespace] of prefixes) {
    if (iri.startsWith(namespace) && LOCAL.test(iri.slice(namespace.length))) return name + ":" + iri.slice(namespace.length);
  }
  return "<" + iri + ">";
}

function unescapeLexical(text) {
  return text.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)/g, (_, code) => {
    if ((code[0] === "u" || code[0] === "U") && code.length > 1) return String.fromCodePoint(parseInt(code.slice(1), 16));
    return {t: "\t", n: "\n", r: "\r", b: "\b", f: "\f"}[code] ?? code;
  });
}

function shownNumber(lexical, type) {
  if (INTEGERS.has(type)) return lexical.replace(/^\+/, "");
  if (type === "decimal") return lexical.replace(/^\+/, "").replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  if (/^[+-]?INF$/.test(lexical) || lexical === "NaN") return lexical;
  const value = Number(lexical);
  return Number.isFinite(value) ? String(value) : lexical;
}

function readable(key, prefixes) {
  // {text, number}: a term (its N-Triples key) the short way
  if (typeof key !== "string" || key === "") return {text: key === undefined ? "" : String(key), number: false};
  if (key[0] === "<") return {text: compactIri(key.slice(1, -1), prefixes), number: false};
  const literal = /^"((?:[^"\\]|\\.)*)"(?:\^\^<([^>]*)>|@(.+))?$/s.exec(key);
  if (!literal) return {text: key, number: false};
  const [, written, datatype, language] = literal;
  const lexical = unescapeLexical(written);
  if (language) return {text: lexical + " @" + language, number: false};
  if (!datatype) return {text: lexical, number: false};
  const type = datatype.startsWith(XSD) ? datatype.slice(XSD.length) : null;
  if (type && (INTEGERS.has(type) || type === "decimal" || type === "double" || type === "float")) {
    return {text: shownNumber(lexical, type), number: true};
  }
  if (type && PLAIN.has(type)) return {text: lexical, number: false};
  return {text: lexical + " ^^" + compactIri(datatype, prefixes), number: false};
}

function readableText(text, prefixes) {
  // every term in a line (a CONSTRUCT triple, a window's triple) the short way
  return String(text).replace(TERM, key => {
    if (key.startsWith("_:")) return key;
    const shown = readable(key, prefixes);
    return shown.number || key[0] === "<" ? shown.text : key[0] === '"' && !key.includes("^^") ? key : shown.text;
  });
}

function termCell(key, prefixes) {
  if (key === "") return element("td", {});
  const shown = readable(key, prefixes);
  return element("td", {class: shown.number ? "term num" : "term", title: key}, element("code", {}, shown.text));
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
  box.dataset.prefixes = JSON.stringify(prefixesOf(query.query));
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
  const prefixes = JSON.parse(box.dataset.prefixes || "[]");
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
      const cells = report.bindings ? columns.map(c => termCell(item[c] === undefined ? "" : item[c], prefixes))
        : report.triples ? [element("td", {class: "term", title: item}, element("code", {}, readableText(item, prefixes)))]
        : [element("td", {}, element("code", {}, String(item)))];
      rows.push(element("tr", {"data-t": report.t, "data-row": JSON.stringify(item)},
        element("td", {class: "num"}, report.t), ...cells,
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
  // in seq order, each once: the history read on (re)connecting and the live events may cross
  let at = list.length;
  while (at > 0 && list[at - 1].seq > report.seq) at--;
  if (at > 0 && list[at - 1].seq === report.seq) return;  // seen
  if (at === 0 && list.length >= KEEP) return;  // older than every report kept
  list.splice(at, 0, report);
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

function show(title, text, more = null) {
  // a dialog; `more`: a longer text the reader may ask for (the whole derivation tree)
  document.getElementById("detail-title").textContent = title;
  document.getElementById("detail-body").textContent = text;
  const button = document.getElementById("detail-more");
  button.hidden = !more || more === text;
  button.onclick = () => { document.getElementById("detail-body").textContent = more; button.hidden = true; };
  const dialog = document.getElementById("detail");
  if (!dialog.open) dialog.showModal();
}

async function showWindow(name) {
  const answer = await (await api(`/queries/${quote(name)}/window?limit=500`)).json();
  if (answer.error) { show(`window of ${name}`, answer.error); return; }
  const prefixes = JSON.parse(queryBox(name).dataset.prefixes || "[]");
  show(`window of ${name} at ${answer.boundary}: ${answer.size} triples${answer.truncated ? " (first 500)" : ""}`,
       answer.triples.map(line => readableText(line, prefixes)).join("\n"));
}

async function explain(name, t, item) {
  const response = await api(`/queries/${quote(name)}/explain?t=${t}&item=${encodeURIComponent(JSON.stringify(item))}`);
  const answer = await response.json();
  const prefixes = JSON.parse(queryBox(name).dataset.prefixes || "[]");
  const asked = typeof item === "object" && item !== null
    ? Object.entries(item).map(([k, v]) => `?${k} = ${readable(v, prefixes).text}`).join(", ")
    : readableText(String(item), prefixes);
  const explanation = answer.explanation;
  show(`why ${asked} at ${t}`,
       explanation ? (explanation.text || explanation.error || JSON.stringify(explanation, null, 2))
                   : (answer.reason || answer.error),
       explanation && explanation.full_text);
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
