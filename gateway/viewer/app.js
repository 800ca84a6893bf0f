const __vite__mapDeps=(i,m=__vite__mapDeps,d=(m.f||(m.f=["./katex.css"])))=>i.map(i=>d[i]);
// Built from clients/dashboard (src/viewer.js) by `make viewer`: edit the sources, not this file.
// src/vocabulary.js
var VERDICT = Object.freeze({
	PASSED: "passed",
	FAILED: "failed",
	ERRORED: "errored",
	CANCELLED: "cancelled"
});
var VERDICTS = Object.freeze([
	"passed",
	"failed",
	"errored",
	"cancelled"
]);
var STATE = Object.freeze({
	QUEUED: "queued",
	RUNNING: "running",
	FINISHED: "finished"
});
Object.freeze([
	"queued",
	"running",
	"finished"
]);
Object.freeze({
	COMPLETED: "completed",
	HARNESS_FAILED: "harness_failed",
	TIMED_OUT: "timed_out",
	INFRA_FAILED: "infra_failed",
	CANCELLED: "cancelled"
});
Object.freeze([
	"completed",
	"harness_failed",
	"timed_out",
	"infra_failed",
	"cancelled"
]);
function formatSeconds(s) {
	if (s === null || s === void 0 || Number.isNaN(s)) return "–";
	const sign = s < 0 ? "-" : "";
	s = Math.abs(s);
	if (s < .001) return `${sign}${(s * 1e6).toFixed(0)}µs`;
	if (s < 1) return `${sign}${(s * 1e3).toFixed(s < .01 ? 2 : 0)}ms`;
	if (s < 60) return `${sign}${s.toFixed(s < 10 ? 2 : 1)}s`;
	if (s < 3600) return `${sign}${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
	return `${sign}${Math.floor(s / 3600)}h ${Math.floor(s % 3600 / 60)}m`;
}
function formatOffset(s) {
	if (s === null || s === void 0) return "–";
	return `+${formatSeconds(s)}`;
}
function formatNumber(n) {
	if (n === null || n === void 0) return "–";
	if (Number.isInteger(n)) return n.toLocaleString("en-US");
	return Number(n.toFixed(4)).toString();
}
function formatPercent(part, whole) {
	if (!whole) return "–";
	return `${(100 * part / whole).toFixed(1)}%`;
}
function formatCost(usd) {
	if (usd === null || usd === void 0) return "–";
	return usd < .01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
function shorten(text, n) {
	text = String(text);
	return text.length > n ? text.slice(0, n) + "…" : text;
}
function secondsOf(rfc3339) {
	if (!rfc3339) return null;
	const t = Date.parse(rfc3339);
	return Number.isNaN(t) ? null : t / 1e3;
}
function wallTime(attempt) {
	const start = secondsOf(attempt.start_time);
	const end = secondsOf(attempt.end_time);
	return start !== null && end !== null ? end - start : null;
}
function ranWallTime(attempt) {
	if (attempt.state !== "finished" || ["cancelled", "infra_failed"].includes(attempt.outcome)) return null;
	return wallTime(attempt);
}
var TEXT_KEYS = [
	"content",
	"text",
	"message",
	"command",
	"arguments",
	"args",
	"input",
	"output",
	"result",
	"error"
];
function flat(value) {
	if (value === null || value === void 0) return "";
	if (typeof value === "string") return value.replace(/\s+/g, " ").trim();
	if (typeof value !== "object") return String(value);
	return JSON.stringify(value);
}
function previewText(payload, n = 200) {
	if (payload === null || payload === void 0) return "";
	if (typeof payload !== "object" || Array.isArray(payload)) return shorten(flat(payload), n);
	const keys = Object.keys(payload);
	const ordered = [...TEXT_KEYS.filter((k) => k in payload), ...keys.filter((k) => !TEXT_KEYS.includes(k))];
	const parts = [];
	for (const key of ordered) {
		const value = payload[key];
		if (value === "" || value === null || value === void 0) continue;
		parts.push(`${key}: ${flat(value)}`);
		if (parts.join(" · ").length > n) break;
	}
	return shorten(parts.join(" · "), n);
}
function parsePython(text) {
	let i = 0;
	const s = text;
	const ws = () => {
		while (i < s.length && /\s/.test(s[i])) i++;
	};
	const fail = () => {
		throw new SyntaxError("not a Python literal");
	};
	function str() {
		let prefix = "";
		while (/[rbuRBU]/.test(s[i])) prefix += s[i++];
		const q = s[i];
		if (q !== "'" && q !== "\"") fail();
		const close = s.slice(i, i + 3) === q.repeat(3) ? q.repeat(3) : q;
		i += close.length;
		let out = "";
		const raw = /r/i.test(prefix);
		while (i < s.length) {
			if (s.slice(i, i + close.length) === close) {
				i += close.length;
				return out;
			}
			const c = s[i++];
			if (c === "\\" && !raw) {
				const e = s[i++];
				const map = {
					n: "\n",
					t: "	",
					r: "\r",
					"\\": "\\",
					"'": "'",
					"\"": "\"",
					"0": "\0",
					a: "\x07",
					b: "\b",
					f: "\f",
					v: "\v"
				};
				if (e in map) out += map[e];
				else if (e === "x") {
					out += String.fromCharCode(parseInt(s.slice(i, i + 2), 16));
					i += 2;
				} else if (e === "u") {
					out += String.fromCharCode(parseInt(s.slice(i, i + 4), 16));
					i += 4;
				} else if (e === "U") {
					out += String.fromCodePoint(parseInt(s.slice(i, i + 8), 16));
					i += 8;
				} else if (e === "\n") {} else out += "\\" + e;
			} else out += c;
		}
		fail();
	}
	function seq(closeCh) {
		const items = [];
		ws();
		while (s[i] !== closeCh) {
			items.push(value());
			ws();
			if (s[i] === ",") {
				i++;
				ws();
			} else if (s[i] !== closeCh) fail();
		}
		i++;
		return items;
	}
	function value() {
		ws();
		const c = s[i];
		if (c === "{") {
			i++;
			const obj = {};
			ws();
			if (s[i] === "}") {
				i++;
				return obj;
			}
			while (true) {
				const key = value();
				ws();
				if (s[i] !== ":") fail();
				i++;
				obj[typeof key === "string" ? key : JSON.stringify(key)] = value();
				ws();
				if (s[i] === ",") {
					i++;
					ws();
					if (s[i] === "}") {
						i++;
						return obj;
					}
					continue;
				}
				if (s[i] === "}") {
					i++;
					return obj;
				}
				fail();
			}
		}
		if (c === "[") {
			i++;
			return seq("]");
		}
		if (c === "(") {
			i++;
			return seq(")");
		}
		if (c === "'" || c === "\"" || /[rbuRBU]/.test(c) && /['"]/.test(s[i + 1] ?? "")) return str();
		for (const [word, val] of [
			["True", true],
			["False", false],
			["None", null]
		]) if (s.startsWith(word, i)) {
			i += word.length;
			return val;
		}
		const m = /^-?(\d+\.?\d*(e[-+]?\d+)?|\.\d+|inf|nan)/i.exec(s.slice(i));
		if (m) {
			i += m[0].length;
			return Number(m[0]);
		}
		fail();
	}
	try {
		const result = value();
		ws();
		if (i !== s.length) return void 0;
		return result;
	} catch {
		return;
	}
}
function parseEmbedded(text) {
	if (typeof text !== "string") return void 0;
	const t = text.trim();
	if (t.length < 2 || !"[{(".includes(t[0])) return void 0;
	try {
		const v = JSON.parse(t);
		if (v !== null && typeof v === "object") return v;
	} catch {}
	const v = parsePython(t);
	return v !== null && typeof v === "object" ? v : void 0;
}
function scalar(v) {
	if (v === null) return "null";
	if (typeof v === "string") return v;
	return String(v);
}
function prettyLines(value, indent = 0) {
	const pad = "  ".repeat(indent);
	if (typeof value === "string") {
		const inner = parseEmbedded(value);
		if (inner !== void 0) return prettyLines(inner, indent);
		return value.split("\n").map((line) => pad + line).join("\n");
	}
	if (value === null || typeof value !== "object") return pad + scalar(value);
	const entries = Array.isArray(value) ? value.map((v, k) => [`- [${k}]`, v]) : Object.entries(value);
	if (!entries.length) return pad + (Array.isArray(value) ? "[]" : "{}");
	const lines = [];
	for (const [key, v] of entries) {
		const label = Array.isArray(value) ? key : `${key}:`;
		const nested = typeof v === "string" ? parseEmbedded(v) : void 0;
		if (v !== null && typeof v === "object" || nested !== void 0) {
			lines.push(`${pad}${label}`);
			lines.push(prettyLines(nested ?? v, indent + 1));
		} else if (typeof v === "string" && v.includes("\n")) {
			lines.push(`${pad}${label} |`);
			lines.push(prettyLines(v, indent + 1));
		} else lines.push(`${pad}${label} ${scalar(v)}`);
	}
	return lines.join("\n");
}
function isErrorEvent(event) {
	if (event.type === "error") return true;
	const p = event.payload;
	if (!p || typeof p !== "object") return false;
	if (p.is_error === true || p.timed_out === true) return true;
	if (typeof p.exit_code === "number" && p.exit_code !== 0) return true;
	if (typeof p.error === "string" && p.error !== "" && p.error !== "…") return true;
	if (p.status === "error" || p.status === "failed") return true;
	return false;
}
function num(v) {
	return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
function usageOf(event) {
	const p = event.payload;
	if (!p || typeof p !== "object") return null;
	const u = p.usage && typeof p.usage === "object" ? p.usage : event.type === "usage" ? p : null;
	if (!u) return null;
	const input = num(u.input_tokens ?? u.prompt_tokens);
	const output = num(u.output_tokens ?? u.completion_tokens);
	return {
		input,
		output,
		total: num(u.total_tokens) || input + output,
		cost: num(u.cost_usd ?? u.cost ?? u.total_cost)
	};
}
function verdictOf(attempt) {
	if (attempt.state && attempt.state !== STATE.FINISHED) return attempt.state;
	return attempt.verdict || VERDICT.ERRORED;
}
function summarize(attempt, events) {
	const s = {
		outcome: attempt.outcome || attempt.state,
		verdict: verdictOf(attempt),
		rewards: attempt.score ? attempt.score.rewards : {},
		wall: wallTime(attempt),
		events: events.length,
		modelCalls: 0,
		toolCalls: 0,
		commands: 0,
		errors: 0,
		tokens: 0,
		cost: 0,
		hasUsage: false,
		tools: {}
	};
	for (const e of events) {
		if (e.type === "tool_call") {
			s.toolCalls++;
			s.tools[e.name] = (s.tools[e.name] || 0) + 1;
		}
		if (e.type === "command") s.commands++;
		if (e.type === "message" && e.payload && e.payload.role === "assistant") s.modelCalls++;
		if (isErrorEvent(e)) s.errors++;
		const u = usageOf(e);
		if (u) {
			s.hasUsage = true;
			s.tokens += u.total;
			s.cost += u.cost;
			if (e.type === "usage") s.modelCalls++;
		}
	}
	return s;
}
function rewardsText(rewards) {
	const entries = Object.entries(rewards || {});
	return entries.length ? entries.map(([k, v]) => `${k} ${formatNumber(v)}`).join(", ") : "–";
}
// src/lib/trace.js
var EVENT_TYPES = [
	"message",
	"tool_call",
	"tool_result",
	"command",
	"output",
	"usage",
	"error",
	"status"
];
function filterOf(params) {
	return {
		types: (params.type || "").split(",").filter(Boolean),
		text: (params.q || "").toLowerCase(),
		errorsOnly: params.errors === "1"
	};
}
function isFiltering(filter) {
	return filter.types.length > 0 || filter.text !== "" || filter.errorsOnly;
}
function toggleType(types, type) {
	return types.includes(type) ? types.filter((t) => t !== type) : [...types, type];
}
function matchesFilter(event, filter, isError) {
	if (filter.types.length && !filter.types.includes(event.type)) return false;
	if (filter.errorsOnly && !isError(event)) return false;
	if (filter.text) {
		if (!`${event.type} ${event.name} ${JSON.stringify(event.payload ?? "")}`.toLowerCase().includes(filter.text)) return false;
	}
	return true;
}
function spanOf(event) {
	const end = event.offset ?? 0;
	return [Math.max(0, end - (event.duration || 0)), end];
}
function timeWindow(events, wall, filtering) {
	if (!filtering || !events.length) {
		const last = events.reduce((m, e) => Math.max(m, spanOf(e)[1]), 0);
		return [0, Math.max(wall || 0, last, 1e-6)];
	}
	let lo = 1e400;
	let hi = -1e400;
	for (const e of events) {
		const [s, t] = spanOf(e);
		lo = Math.min(lo, s);
		hi = Math.max(hi, t);
	}
	if (hi - lo < 1e-6) hi = lo + .001;
	return [lo, hi];
}
function barOf(event, window, minWidth = .002) {
	const [lo, hi] = window;
	const [s, t] = spanOf(event);
	const span = hi - lo;
	const left = Math.min(1, Math.max(0, (s - lo) / span));
	return {
		left,
		width: Math.max(minWidth, Math.min(1 - left, (t - s) / span))
	};
}
function visibleRange(scrollTop, viewportHeight, rowHeight, count, overscan = 10) {
	return [Math.max(0, Math.floor(scrollTop / rowHeight) - overscan), Math.min(count, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan)];
}
function screenshotUrl(attemptId, event) {
	const path = event?.payload?.screenshot;
	if (typeof path !== "string" || !/^\/[^\0]*\.png$/.test(path) || path.length > 1024) return null;
	const segments = path.replace(/^\/+/, "").split("/");
	if (segments.some((s) => s === "" || s === "." || s === "..")) return null;
	return `/api/attempts/${encodeURIComponent(attemptId)}/images/${segments.map(encodeURIComponent).join("/")}`;
}
// src/dom.js
var SVG = "http://www.w3.org/2000/svg";
function fill(el, attrs, children) {
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === void 0 || v === null || v === false) continue;
		if (k === "class") el.setAttribute("class", v);
		else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
		else if (k === "dataset") Object.assign(el.dataset, v);
		else el.setAttribute(k, v === true ? "" : v);
	}
	for (const c of children.flat(1e400)) {
		if (c === null || c === void 0 || c === false) continue;
		el.append(c instanceof Node ? c : document.createTextNode(String(c)));
	}
	return el;
}
function put(el, ...children) {
	el.replaceChildren(...children.flat(1e400).filter((c) => c !== null && c !== void 0 && c !== false));
	return el;
}
function h(tag, attrs = {}, ...children) {
	return fill(document.createElement(tag), attrs, children);
}
function s(tag, attrs = {}, ...children) {
	return fill(document.createElementNS(SVG, tag), attrs, children);
}
var ApiError = class extends Error {
	constructor(status, detail) {
		super(`${status}: ${detail}`);
		this.status = status;
	}
};
async function api(path) {
	const response = await fetch(path, { headers: { Accept: "application/json" } });
	if (!response.ok) {
		let detail = response.statusText;
		try {
			detail = (await response.json()).detail;
		} catch {}
		throw new ApiError(response.status, typeof detail === "string" ? detail : JSON.stringify(detail));
	}
	return response.json();
}
function q(params) {
	const p = new URLSearchParams();
	for (const [k, v] of Object.entries(params)) if (v !== "" && v !== void 0 && v !== null) p.set(k, v);
	return p.toString();
}
function oneAtATime(load) {
	let running = null;
	return () => {
		if (!running) running = load().finally(() => {
			running = null;
		});
		return running;
	};
}
function card(label, value, cls = "") {
	return h("div", { class: `card ${cls}` }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
}
function verdictTag(attempt) {
	const v = verdictOf(attempt);
	return h("span", { class: `verdict verdict-${v}` }, v);
}
function table(head, rows, attrs = {}) {
	return h("table", attrs, h("thead", {}, h("tr", {}, head.map((t) => t instanceof Node ? t : h("th", {}, t)))), h("tbody", {}, rows));
}
function virtualList({ rowClass, rowHeight = 26, renderRow, onNeedMore, onClick }) {
	const spacer = h("div", { class: "spacer" });
	const box = h("div", {
		class: "virtual-list",
		tabindex: "0"
	}, spacer);
	let items = [];
	let selectedKey = null;
	let pending = false;
	function draw() {
		spacer.style.height = `${items.length * rowHeight}px`;
		const [first, last] = visibleRange(box.scrollTop, box.clientHeight || 600, rowHeight, items.length);
		const rows = [];
		for (let i = first; i < last; i++) {
			const row = renderRow(items[i], i);
			row.classList.add("vrow", rowClass);
			row.style.top = `${i * rowHeight}px`;
			row.dataset.index = String(i);
			if (selectedKey !== null && row.dataset.key === String(selectedKey)) row.classList.add("selected");
			rows.push(row);
		}
		spacer.replaceChildren(...rows);
		if (!pending && onNeedMore && box.scrollTop + (box.clientHeight || 600) * 3 > items.length * rowHeight) {
			pending = true;
			Promise.resolve(onNeedMore()).finally(() => {
				pending = false;
			});
		}
	}
	box.addEventListener("scroll", () => requestAnimationFrame(draw));
	box.addEventListener("click", (e) => {
		const row = e.target.closest(".vrow");
		if (row && !e.target.closest("a") && onClick) onClick(items[Number(row.dataset.index)]);
	});
	return {
		el: box,
		set(next, key) {
			items = next;
			selectedKey = key ?? selectedKey;
			draw();
		},
		scrollTo(index) {
			box.scrollTop = Math.max(0, index * rowHeight - box.clientHeight / 3);
			draw();
		}
	};
}
// src/lib/route.js
var VIEWS = {
	runs: ["runs", "run"],
	imports: ["imports", "run"],
	attempts: [null, "attempt"],
	compare: ["compare", null],
	datasets: ["datasets", "dataset"],
	harnesses: ["harnesses", null],
	scorers: ["scorers", null],
	judges: ["judges", null]
};
function parseRoute(hash) {
	const raw = (hash || "").replace(/^#/, "");
	const cut = raw.indexOf("?");
	const path = cut < 0 ? raw : raw.slice(0, cut);
	const query = cut < 0 ? "" : raw.slice(cut + 1);
	const parts = path.split("/").filter(Boolean).map((p) => {
		try {
			return decodeURIComponent(p);
		} catch {
			return p;
		}
	});
	const route = {
		view: "runs",
		id: "",
		params: {}
	};
	const [list, one] = VIEWS[parts[0]] || ["runs", null];
	if (parts[1] && one) Object.assign(route, {
		view: one,
		id: parts[1]
	});
	else if (list) route.view = list;
	for (const [k, v] of new URLSearchParams(query)) route.params[k] = v;
	return route;
}
function pathOf(route) {
	const id = encodeURIComponent(route.id || "");
	switch (route.view) {
		case "run": return `/${route.id && route.id.startsWith("i-") ? "imports" : "runs"}/${id}`;
		case "attempt": return `/attempts/${id}`;
		case "dataset": return `/datasets/${id}`;
		case "imports":
		case "compare":
		case "datasets":
		case "harnesses":
		case "scorers":
		case "judges": return `/${route.view}`;
		default: return "/runs";
	}
}
function buildRoute(route) {
	const params = new URLSearchParams();
	for (const [k, v] of Object.entries(route.params || {}).sort(([a], [b]) => a.localeCompare(b))) if (v !== "" && v !== null && v !== void 0 && v !== false) params.set(k, String(v));
	const query = params.toString();
	return `#${pathOf(route)}${query ? "?" + query : ""}`;
}
function link(view, id = "", params = {}) {
	return buildRoute({
		view,
		id,
		params
	});
}
function withParams(route, changes) {
	return {
		...route,
		params: {
			...route.params,
			...changes
		}
	};
}
function sameView(a, b) {
	return a.view === b.view && a.id === b.id;
}
function sidesOf(run) {
	const ref = run.label && !run.label.includes("/") ? run.label : run.id;
	const sides = [];
	const harnesses = [...new Set(run.cells.map((c) => c.harness_name))];
	const datasets = [...new Set(run.cells.map((c) => c.dataset_name))];
	if (run.kind === "import") return [{
		ref: run.id,
		label: `${run.label} (import)`
	}];
	if (run.cells.length === 1) sides.push({
		ref: run.id,
		label: `${ref}`
	});
	for (const harness of harnesses) sides.push({
		ref: `${run.id}/${harness}`,
		label: `${ref} / ${harness}`
	});
	if (datasets.length > 1) for (const cell of run.cells) sides.push({
		ref: `${run.id}/${cell.dataset_name}/${cell.harness_name}`,
		label: `${ref} / ${cell.dataset_name} / ${cell.harness_name}`
	});
	return sides;
}
// src/shell.js
var SECTION = {
	run: "runs",
	attempt: "runs",
	dataset: "datasets"
};
function start({ views, nav }) {
	const mainEl = document.getElementById("main");
	const crumbsEl = document.getElementById("crumbs");
	const navEl = document.getElementById("nav");
	let current = null;
	const ui = {
		main: (...children) => put(mainEl, ...children),
		link: (view, id = "", params = {}) => view in views ? link(view, id, params) : null,
		crumbs: (...items) => crumbsEl.replaceChildren(...items.flatMap((item, i) => [i ? h("span", { class: "sep" }, "›") : null, item]).filter(Boolean)),
		refresh() {
			if (current && current.close) current.close();
			current = null;
			show(parseRoute(location.hash));
		},
		go(route, replace = false) {
			const hash = buildRoute(route);
			if (hash === location.hash) return;
			if (replace) {
				history.replaceState(null, "", hash);
				show(parseRoute(hash));
			} else location.hash = hash;
		}
	};
	function renderNav(route) {
		const section = SECTION[route.view] || route.view;
		navEl.replaceChildren(...nav.map(([view, label]) => h("a", {
			href: link(view),
			class: view === section ? "on" : "",
			"aria-current": view === section ? "page" : null
		}, label)));
	}
	async function show(route) {
		if (!(route.view in views)) route = {
			view: "runs",
			id: "",
			params: {}
		};
		renderNav(route);
		if (current && sameView(current.route, route) && current.update && current.update(route) !== false) {
			current.route = route;
			return;
		}
		if (current && current.close) current.close();
		current = { route };
		const mine = current;
		mainEl.setAttribute("aria-busy", "true");
		try {
			const controller = await views[route.view](route, ui);
			if (mine === current && controller) Object.assign(current, controller);
		} catch (err) {
			if (mine === current) ui.main(h("p", {
				class: "error-box",
				role: "alert"
			}, String(err.message || err)));
		} finally {
			if (mine === current) mainEl.setAttribute("aria-busy", "false");
		}
	}
	window.addEventListener("hashchange", () => show(parseRoute(location.hash)));
	if (!location.hash) history.replaceState(null, "", "#/runs");
	show(parseRoute(location.hash));
}
// src/lib/judgments.js
var JUDGMENT_FILTERS = [
	"all",
	"failed",
	"passed",
	"errors"
];
function judgmentState(j) {
	if (j.error) return "error";
	return j.passed ? "passed" : "failed";
}
function judgmentFilter(params) {
	return JUDGMENT_FILTERS.includes(params.judgments) ? params.judgments : "all";
}
var WANTED = {
	all: () => true,
	failed: (s) => s === "failed",
	passed: (s) => s === "passed",
	errors: (s) => s === "error"
};
function filterJudgments(list, filter) {
	const wanted = WANTED[filter] || WANTED.all;
	return list.filter((j) => wanted(judgmentState(j)));
}
function judgmentCounts(list) {
	return Object.fromEntries(JUDGMENT_FILTERS.map((f) => [f, filterJudgments(list, f).length]));
}
// src/lib/provenance.js
function provenanceText(run, when) {
	if (!run || run.kind !== "import") return "";
	const p = run.provenance || {};
	const parts = [`Results made elsewhere (${run.import_format || "format not recorded"})`];
	if (p.import_time) parts.push(`imported ${when(p.import_time)}`);
	else parts.push("imported");
	parts.push(p.imported_by ? `by ${p.imported_by}` : "(who and when were not recorded)");
	if (p.export_digest) parts.push(`· export manifest ${p.export_digest}`);
	if (p.original_id) parts.push(`· the export called it ${p.original_kind} ${p.original_id} (${p.original_label})`);
	return parts.join(" ");
}
function problemText(record) {
	return record && record.problem ? `Unreadable: ${record.problem}` : "";
}
// src/views/common.js
function when(rfc3339) {
	return rfc3339 ? new Date(rfc3339).toLocaleString() : "–";
}
function empty(text) {
	return h("p", { class: "muted empty" }, text);
}
function anchor(ui, [view, id = "", params = {}], attrs, ...children) {
	const href = ui.link(view, id, params);
	return href ? h("a", {
		...attrs,
		href
	}, ...children) : h("span", attrs, ...children);
}
function problem(record) {
	const text = problemText(record);
	return text ? h("p", {
		class: "flags problem",
		role: "status"
	}, text) : null;
}
function provenance(run) {
	const text = provenanceText(run, when);
	return text ? h("p", {
		class: "muted provenance",
		id: "provenance"
	}, text) : null;
}
// src/lib/math.js
var DELIMITERS = [
	[
		"$$",
		"$$",
		true
	],
	[
		"\\[",
		"\\]",
		true
	],
	[
		"\\(",
		"\\)",
		false
	],
	[
		"$",
		"$",
		false
	]
];
function splitMath(text) {
	const parts = [];
	let plain = "";
	let i = 0;
	while (i < text.length) {
		if (text[i] === "\\" && text[i + 1] === "$") {
			plain += "\\$";
			i += 2;
			continue;
		}
		const found = DELIMITERS.map(([open, close, display]) => text.startsWith(open, i) && closing(text, i, open, close, display)).find(Boolean);
		if (!found) {
			plain += text[i++];
			continue;
		}
		if (plain) parts.push({ text: plain });
		plain = "";
		parts.push(found);
		i += found.source.length;
	}
	if (plain) parts.push({ text: plain });
	return parts;
}
function closing(text, start, open, close, display) {
	const from = start + open.length;
	let end = text.indexOf(close, from);
	if (open === "$") {
		if (!text[from] || /\s/.test(text[from])) return null;
		while (end >= 0 && (text[end - 1] === "\\" || /\s/.test(text[end - 1]) || /\d/.test(text[end + 1] || ""))) end = text.indexOf(close, end + 1);
		if (end >= 0 && text.slice(from, end).includes("\n")) return null;
	}
	if (end < 0 || end === from) return null;
	return {
		math: text.slice(from, end).trim(),
		display,
		source: text.slice(start, end + close.length)
	};
}
// \0vite/preload-helper.js
var scriptRel = /* @__PURE__ */ (function detectScriptRel() {
	const relList = typeof document !== "undefined" && document.createElement("link").relList;
	return relList && relList.supports && relList.supports("modulepreload") ? "modulepreload" : "preload";
})();
var assetsURL = function(dep, importerUrl) {
	return new URL(dep, importerUrl).href;
};
var seen = {};
var failedCssLinks = {};
var isCssPreloadUrl = function isCssPreloadUrl(url) {
	return url.pathname.endsWith(".css");
};
var preloadOnce = function preloadOnce(seen, href, preload) {
	if (href in seen) return seen[href];
	const promise = preload();
	if (!promise) {
		seen[href] = void 0;
		return;
	}
	const preloadPromise = promise.then(() => {
		seen[href] = void 0;
	}, (err) => {
		delete seen[href];
		throw err;
	});
	seen[href] = preloadPromise;
	return preloadPromise;
};
var __vitePreload = function preload(baseModule, deps, importerUrl) {
	let promise = Promise.resolve();
	if (deps && deps.length > 0) {
		let preloadedHrefs;
		const cspNonceMeta = document.querySelector("meta[property=csp-nonce]");
		const cspNonce = cspNonceMeta?.nonce || cspNonceMeta?.getAttribute("nonce");
		function allSettled(promises) {
			return Promise.all(promises.map((p) => Promise.resolve(p).then((value) => ({
				status: "fulfilled",
				value
			}), (reason) => ({
				status: "rejected",
				reason
			}))));
		}
		function importMetaResolve(specifier) {
			if (import.meta.resolve) return new URL(import.meta.resolve(specifier));
			return new URL(
				specifier,
				/** #__KEEP__ */
				import.meta.url
			);
		}
		promise = allSettled(deps.map((depString) => {
			depString = assetsURL(depString, importerUrl);
			const dep = importMetaResolve(depString);
			const isCss = isCssPreloadUrl(dep);
			return preloadOnce(seen, dep.href, () => {
				if (preloadedHrefs === void 0) {
					preloadedHrefs = {
						all: /* @__PURE__ */ new Set(),
						styles: /* @__PURE__ */ new Set()
					};
					const links = document.getElementsByTagName("link");
					for (let i = links.length - 1; i >= 0; i--) {
						const link = links[i];
						preloadedHrefs.all.add(link.href);
						if (link.rel === "stylesheet") preloadedHrefs.styles.add(link.href);
					}
				}
				const preloadedHrefSet = isCss ? preloadedHrefs.styles : preloadedHrefs.all;
				const failedCssLink = isCss ? failedCssLinks[dep.href] : void 0;
				if (!failedCssLink && preloadedHrefSet.has(dep.href)) return;
				const link = document.createElement("link");
				link.rel = isCss ? "stylesheet" : scriptRel;
				if (!isCss) link.as = "script";
				link.crossOrigin = "";
				link.href = dep.href;
				if (cspNonce) link.setAttribute("nonce", cspNonce);
				if (failedCssLink) delete failedCssLinks[dep.href];
				if (failedCssLink?.isConnected) failedCssLink.replaceWith(link);
				else document.head.appendChild(link);
				if (isCss) return new Promise((res, rej) => {
					const handleSettle = (e) => {
						link.removeEventListener("load", handleSettle);
						link.removeEventListener("error", handleSettle);
						if (e.type === "error") {
							failedCssLinks[dep.href] = link;
							rej(/* @__PURE__ */ new Error(`Unable to preload CSS for ${dep}`));
						} else res(e);
					};
					link.addEventListener("load", handleSettle);
					link.addEventListener("error", handleSettle);
				});
			});
		}).filter((p) => p !== void 0));
	}
	function handlePreloadError(err) {
		const e = new Event("vite:preloadError", { cancelable: true });
		e.payload = err;
		window.dispatchEvent(e);
		if (!e.defaultPrevented) throw err;
	}
	return promise.then((res) => {
		for (const item of res || []) {
			if (item.status !== "rejected") continue;
			handlePreloadError(item.reason);
		}
		return baseModule().catch(handlePreloadError);
	});
};
// src/views/math.js
var loading = null;
function katex() {
	loading ||= Promise.all([__vitePreload(() => import("./katex.js"), [], import.meta.url), __vitePreload(() => Promise.resolve({}), __vite__mapDeps([0]), import.meta.url)]).then(([module]) => module.default);
	return loading;
}
function typeset(render, part) {
	const el = h("span", {
		class: part.display ? "math math-display" : "math",
		title: part.source
	});
	try {
		render(part.math, el, {
			displayMode: part.display,
			throwOnError: true,
			strict: "ignore",
			trust: false,
			maxSize: 50,
			maxExpand: 200
		});
		return el;
	} catch {
		return part.source;
	}
}
function mathText(text, tag = "div", attrs = {}) {
	const el = h(tag, attrs, text);
	const parts = splitMath(String(text ?? ""));
	if (!parts.some((p) => p.math !== void 0)) return el;
	katex().then((k) => {
		put(el, parts.map((p) => p.math === void 0 ? p.text : typeset(k.render, p)));
		el.classList.add("typeset");
	}).catch(() => {});
	return el;
}
// src/views/instruction.js
function instructionPanel(attemptId) {
	const el = h("details", {
		class: "instruction",
		id: "instruction"
	}, h("summary", {}, "Task instruction"));
	api(`/api/attempts/${encodeURIComponent(attemptId)}/task`).then((task) => {
		put(el, h("summary", {}, `Task instruction · ${task.task_name}`, (task.tags || []).length ? h("span", { class: "muted" }, ` · ${task.tags.join(", ")}`) : null), mathText(task.instruction || "(no instruction recorded)", "div", { class: "instruction-text" }));
	}).catch(() => {
		el.hidden = true;
	});
	return el;
}
// src/lib/attemptlist.js
var SERVER_FILTERS = [
	"harness",
	"verdict",
	"cell",
	"task",
	"tag"
];
var LIST_PARAMS = [
	...SERVER_FILTERS,
	"q",
	"sort"
];
var VERDICT_ORDER = [
	...VERDICTS,
	"queued",
	"leased",
	"running"
];
var SORTS = {
	outcome: (a) => `${String(VERDICT_ORDER.indexOf(verdictOf(a)) + 1).padStart(2, "0")} ${a.outcome || a.state || ""}`,
	duration: (a) => ranWallTime(a),
	tokens: (a) => a.usage && a.usage.usage_events ? Number(a.usage.input_tokens || 0) + Number(a.usage.output_tokens || 0) : null,
	cost: (a) => a.usage && a.usage.usage_events ? Number(a.usage.cost_usd || 0) : null,
	errors: (a) => (a.error ? 1 : 0) + (verdictOf(a) === "errored" ? 1 : 0)
};
function haystack(a) {
	return [
		a.id,
		a.task_name,
		a.harness_name,
		a.model,
		verdictOf(a),
		a.outcome,
		a.error,
		`#${a.repetition}.${a.number}`
	].filter(Boolean).join("\n").toLowerCase();
}
function compare(x, y) {
	if (x === y) return 0;
	if (x === null || x === void 0) return 1;
	if (y === null || y === void 0) return -1;
	return x < y ? -1 : 1;
}
function arrange(attempts, { q = "", sort = "" } = {}) {
	const words = q.toLowerCase().split(/\s+/).filter(Boolean);
	let shown = words.length ? attempts.filter((a) => {
		const text = haystack(a);
		return words.every((w) => text.includes(w));
	}) : attempts.slice();
	const desc = sort.startsWith("-");
	const key = SORTS[sort.replace(/^-/, "")];
	if (key) {
		const keyed = shown.map((a) => [key(a), a]);
		keyed.sort(([x, a], [y, b]) => {
			const nulls = (x === null || x === void 0) - (y === null || y === void 0);
			if (nulls) return nulls;
			return (desc ? compare(y, x) : compare(x, y)) || compare(a.id, b.id);
		});
		shown = keyed.map(([, a]) => a);
	}
	return shown;
}
function listParams(params) {
	return Object.fromEntries(LIST_PARAMS.filter((k) => params[k]).map((k) => [k, params[k]]));
}
function encodeList(runId, params) {
	return new URLSearchParams({
		run: runId,
		...listParams(params)
	}).toString();
}
function decodeList(text) {
	const all = Object.fromEntries(new URLSearchParams(text || ""));
	return {
		run: all.run || "",
		params: listParams(all)
	};
}
function neighbours(list, id) {
	const index = list.findIndex((a) => a.id === id);
	if (index < 0) return {
		index,
		prev: null,
		next: null
	};
	return {
		index,
		prev: list[index - 1] || null,
		next: list[index + 1] || null
	};
}
// src/views/lists.js
var LIST_CAP = 5e3;
var read = /* @__PURE__ */ new Map();
async function readAll(runId, params) {
	let attempts = [];
	let token = "";
	do {
		const page = await api(`/api/runs/${encodeURIComponent(runId)}/attempts?${q({
			page_size: 1e3,
			page_token: token,
			...Object.fromEntries(SERVER_FILTERS.map((k) => [k, params[k]]))
		})}`);
		attempts = attempts.concat(page.attempts);
		token = page.next_page_token;
	} while (token && attempts.length < 5e3);
	return {
		attempts,
		more: Boolean(token)
	};
}
async function loadList(runId, params, fresh = false) {
	const key = JSON.stringify([runId, ...SERVER_FILTERS.map((k) => params[k] || "")]);
	if (fresh || !read.has(key)) {
		read.set(key, readAll(runId, params).catch((err) => {
			read.delete(key);
			throw err;
		}));
		if (read.size > 8) read.delete(read.keys().next().value);
	}
	const { attempts, more } = await read.get(key);
	return {
		attempts: arrange(attempts, params),
		more,
		read: attempts.length
	};
}
function listNav(ui, route, attempt) {
	const el = h("nav", {
		class: "list-nav",
		id: "list-nav",
		"aria-label": "attempts of the list"
	});
	const text = route.params.list;
	if (!text) return el;
	const { run, params } = decodeList(text);
	const back = ui.link("run", run, {
		tab: "attempts",
		...params
	});
	const step = (a, label, rel) => a ? h("a", {
		class: `button ${rel}`,
		rel,
		href: ui.link("attempt", a.id, { list: text })
	}, label) : h("span", {
		class: `button disabled ${rel}`,
		"aria-disabled": "true"
	}, label);
	loadList(run, params).then(({ attempts, more }) => {
		const { index, prev, next } = neighbours(attempts, attempt.id);
		put(el, step(prev, "‹ Prev", "prev"), h("span", { class: "position" }, index < 0 ? "not in the list" : `${formatNumber(index + 1)} of ${formatNumber(attempts.length)}${more ? "+" : ""}`), step(next, "Next ›", "next"), back ? h("a", {
			class: "back",
			href: back
		}, "the list") : null);
	}).catch(() => put(el, back ? h("a", {
		class: "back",
		href: back
	}, "the list") : null));
	return el;
}
// src/views/attempt.js
var EVENT_PAGE = 1e3;
var FILTER_FILL = 40;
var MAX_AUTO_PAGES = 50;
var MAX_UNTRUNCATED = 67108864;
async function attemptView(route, ui) {
	const id = route.id;
	const trace = new Trace(await api(`/api/attempts/${encodeURIComponent(id)}`), () => refilter());
	const { attempt } = trace;
	ui.crumbs(h("a", { href: ui.link("runs") }, "Runs"), h("a", { href: ui.link("run", attempt.run_id) }, attempt.run_id), h("span", {}, `${attempt.harness_name} · ${attempt.task_name}`));
	let params = route.params;
	let filter = filterOf(params);
	let shown = [];
	const here = () => route;
	const cards = h("div", {
		class: "cards",
		id: "summary"
	});
	const status = h("div", {
		class: "status-line",
		id: "events-status"
	});
	const bar = filterBar(ui, here);
	const detail = eventDetail(ui, id, here);
	const rows = waterfall({
		id,
		onNeedMore: () => more(),
		onPick: (e) => ui.go(withParams(route, { event: e.seq }))
	});
	const layout = h("div", { class: "layout" }, rows.el, detail.el);
	const rubric = rubricPanel(attempt.score);
	const judged = judgesPanel(attempt);
	const more = oneAtATime(async () => {
		if (trace.done) return;
		let pages = 0;
		do {
			await trace.readPage();
			pages++;
			refilter();
		} while (!trace.done && isFiltering(filter) && shown.length < FILTER_FILL && pages < MAX_AUTO_PAGES);
		if (trace.done) trace.follow();
	});
	function refilter() {
		shown = trace.events.filter((e) => matchesFilter(e, filter, isErrorEvent));
		const span = timeWindow(shown, wallTime(trace.attempt), isFiltering(filter));
		rows.set(shown, span, params.event ? Number(params.event) : null);
		summaryCards(cards, trace);
		status.textContent = statusText(trace, shown, filter, span);
	}
	function apply(next) {
		route = next;
		params = next.params;
		filter = filterOf(params);
		bar.show(filter, params, trace.events);
		refilter();
		layout.className = params.event ? "layout with-detail" : "layout";
		rubric.show(route);
		judged.show(route);
		detail.show(params.event ? Number(params.event) : null, trace.events);
	}
	ui.main(...attemptHeader(attempt), listNav(ui, route, attempt), instructionPanel(id), cards, scoreLine(attempt.score, ui), rubric.el, judged.el, artifactsLine(attempt), bar.el, status, layout);
	apply(route);
	await more();
	bar.show(filter, params, trace.events);
	const selected = params.event ? shown.findIndex((e) => e.seq === Number(params.event)) : -1;
	if (selected >= 0) rows.scrollTo(selected);
	return {
		update: apply,
		close: () => trace.close()
	};
}
var Trace = class {
	constructor(attempt, onChange) {
		this.attempt = attempt;
		this.onChange = onChange;
		this.events = [];
		this.token = "";
		this.done = false;
		this.live = null;
	}
	get following() {
		return Boolean(this.live) && this.attempt.state !== "finished";
	}
	async readPage() {
		const page = await api(`/api/attempts/${this.attempt.id}/events?${q({
			page_size: EVENT_PAGE,
			page_token: this.token
		})}`);
		this.events = this.events.concat(page.events);
		this.token = page.next_page_token;
		this.done = !this.token;
	}
	follow() {
		if (this.live || this.attempt.state === "finished") return;
		const last = this.events.length ? this.events[this.events.length - 1].seq : 0;
		this.live = new EventSource(`/api/attempts/${this.attempt.id}/events/stream?after=${last}`);
		this.live.addEventListener("event", (m) => {
			this.events.push(JSON.parse(m.data));
			this.onChange();
		});
		this.live.addEventListener("end", async () => {
			this.live.close();
			this.attempt = await api(`/api/attempts/${this.attempt.id}`);
			this.onChange();
		});
	}
	close() {
		if (this.live) this.live.close();
	}
};
function statusText(trace, shown, filter, span) {
	const { attempt, events, done } = trace;
	return `${formatNumber(shown.length)} of ${formatNumber(events.length)}${done ? "" : ` (of ${formatNumber(attempt.event_count)})`} events` + (isFiltering(filter) ? ` · window ${formatOffset(span[0])} – ${formatOffset(span[1])}` : "") + (done ? "" : " · scroll to load more") + (trace.following ? " · live" : "");
}
function attemptHeader(attempt) {
	return [
		h("h1", {}, `Attempt ${attempt.id} `, verdictTag(attempt)),
		h("p", { class: "muted" }, `${attempt.harness_name} (${attempt.model || "no model"}) on ${attempt.task_name} (${attempt.dataset_name}), repetition ${attempt.repetition}, try ${attempt.number}`, attempt.agent_version ? ` · agent ${attempt.agent_version}` : "", attempt.error ? h("span", { class: "status-error" }, ` · ${shorten(attempt.error, 300)}`) : null),
		problem(attempt)
	];
}
function scoreLine(score, ui) {
	if (!score) return null;
	const scorers = ui.link("scorers", "", { fingerprint: score.scorer_fingerprint });
	const fingerprint = shorten(score.scorer_fingerprint || "", 23);
	return h("p", { class: "muted" }, `Scored by ${score.scorer || "–"}${score.judge_model ? ` (judge model ${score.judge_model})` : ""} · `, scorers ? h("a", { href: scorers }, fingerprint) : h("span", { class: "mono" }, fingerprint), score.error ? h("span", { class: "status-error" }, ` · ${shorten(score.error, 300)}`) : null);
}
function rubricPanel(score) {
	const list = score && score.judgments || [];
	const el = h("section", {
		class: "rubric",
		id: "rubric"
	});
	function show(route) {
		if (!list.length) return;
		const filter = judgmentFilter(route.params);
		put(el, h("h2", {}, `Rubric (${list.length} criteria)`), filterTabs(route, list, filter), judgmentsTable(list, filter));
	}
	return {
		el,
		show
	};
}
function filterTabs(route, list, filter) {
	const counts = judgmentCounts(list);
	return h("nav", { class: "tabs" }, JUDGMENT_FILTERS.map((f) => h("a", {
		href: buildRoute(withParams(route, { judgments: f === "all" ? "" : f })),
		class: f === filter ? "tab on" : "tab",
		"aria-current": f === filter ? "page" : null
	}, `${f} (${counts[f]})`)));
}
function judgmentsTable(list, filter) {
	return table([
		"judge",
		"criterion",
		"value",
		"",
		"expected",
		"observed",
		"reason",
		"model"
	], filterJudgments(list, filter).map((j) => {
		const state = judgmentState(j);
		return h("tr", { class: `judgment judgment-${state}` }, h("td", {}, j.judge || "–"), h("td", {}, j.criterion || "–", j.description ? h("div", { class: "muted" }, shorten(j.description, 200)) : null), h("td", {}, j.error ? "–" : formatNumber(Number(j.value || 0))), h("td", { class: state === "error" ? "verdict-errored" : `verdict-${state}` }, state), h("td", {}, j.expected || ""), h("td", {}, j.observed || ""), h("td", {}, shorten(j.error || j.reason || "", 400)), h("td", {}, j.judge_model || "–"));
	}), { class: "judgments" });
}
function judgesPanel(attempt) {
	const scores = attempt.judge_scores || [];
	const el = h("section", {
		class: "judge-scores",
		id: "judge-scores"
	});
	function show(route) {
		if (!scores.length) return;
		const filter = judgmentFilter(route.params);
		put(el, h("h2", {}, `HEMRA judges (${scores.length} ${scores.length === 1 ? "judging" : "judgings"})`), ...scores.map((score, i) => judgeScore(attempt, score, i, route, filter)));
	}
	return {
		el,
		show
	};
}
function judgeScore(attempt, score, index, route, filter) {
	const list = score.judgments || [];
	const failed = score.state === "SCORE_STATE_SCORER_FAILED";
	const value = failed ? "judge failed (counted apart, never 0)" : `score ${formatNumber(Number((score.rewards || {})[score.judge] || 0))}`;
	return h("div", {
		class: "judge-score",
		"data-judge": score.judge
	}, h("h3", {}, `${score.judge} `, h("span", { class: "mono muted" }, shorten(score.scorer_fingerprint || "", 23)), index ? h("span", { class: "muted" }, " · earlier judging") : null), h("p", { class: failed ? "status-error" : "muted" }, `${value} · model ${score.judge_model || "–"}`, score.error ? ` · ${shorten(score.error, 300)}` : ""), list.length ? [filterTabs(route, list, filter), judgmentsTable(list, filter)] : null, judgeCalls(attempt, score.judge_calls || []));
}
function judgeCalls(attempt, calls) {
	const base = `/api/attempts/${attempt.id}/judge-calls`;
	const body = (digest, label) => digest ? h("a", {
		href: `${base}/${encodeURIComponent(digest)}`,
		download: ""
	}, label) : "–";
	const rows = calls.map((c) => h("tr", { class: `judge-call call-${c.outcome || "ok"}` }, h("td", { class: "num" }, c.sample || 0), h("td", { class: "num" }, c.retry || 0), h("td", {}, c.criterion || "all"), h("td", { class: "num" }, c.http_status || "–"), h("td", {}, c.outcome || "ok"), h("td", {}, c.served_model || "–"), h("td", { class: "num" }, `${formatNumber(Number(c.latency_ms || 0))} ms`), h("td", { class: "num" }, `${formatNumber(Number(c.input_tokens || 0))} / ${formatNumber(Number(c.output_tokens || 0))}`), h("td", {}, body(c.request_blob_digest, "request"), " · ", body(c.response_blob_digest, "response")), h("td", {}, shorten(c.error || "", 300))));
	return h("details", { class: "judge-calls" }, h("summary", {}, `${calls.length} model ${calls.length === 1 ? "call" : "calls"}`), table([
		"sample",
		"try",
		"criterion",
		"status",
		"outcome",
		"served model",
		"latency",
		"tokens in / out",
		"raw",
		"error"
	], rows));
}
function artifactsLine(attempt) {
	const base = `/api/attempts/${attempt.id}`;
	const files = attempt.artifacts.flatMap((a, i) => [i ? " · " : "", h("a", {
		href: `${base}/artifacts/${a.path.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/")}`,
		download: a.path.split("/").pop()
	}, `${a.path} (${formatNumber(Number(a.size_bytes))} B)`)]);
	return h("p", { class: "artifacts" }, "Artifacts: ", files.length ? files : "none", attempt.score && attempt.score.stdout_blob_digest ? [" · ", h("a", {
		href: `${base}/verifier-output`,
		download: ""
	}, "verifier output")] : null);
}
function summaryCards(el, trace) {
	const s = summarize(trace.attempt, trace.events);
	const partial = trace.done ? "" : "+";
	const tools = Object.entries(s.tools).map(([n, c]) => `${n} ×${c}`).join(", ");
	put(el, card("outcome", h("span", { class: `verdict-${s.verdict}` }, `${s.outcome || "–"} · ${s.verdict}`)), card("score", rewardsText(s.rewards)), card("wall time", formatSeconds(s.wall)), card("events", formatNumber(trace.attempt.event_count)), card("model calls", `${s.modelCalls}${partial}`), card("tool calls", `${s.toolCalls}${partial}`), card("commands", `${s.commands}${partial}`), card("errors", `${s.errors}${partial}`, s.errors ? "verdict-failed" : ""), card("tokens", s.hasUsage ? `${formatNumber(s.tokens)}${partial}` : "–"), card("cost", s.hasUsage ? formatCost(s.cost) : "–"), ...tools ? [card("tools", tools)] : []);
}
function filterBar(ui, here) {
	const go = (changes) => ui.go(withParams(here(), changes), true);
	const search = h("input", {
		type: "search",
		id: "filter-text",
		placeholder: "filter: text, name, type…",
		"aria-label": "filter text",
		oninput: () => go({ q: search.value })
	});
	const errorsBox = h("input", {
		type: "checkbox",
		id: "filter-errors",
		onchange: () => go({ errors: errorsBox.checked ? "1" : "" })
	});
	const chips = h("span", { class: "chips" });
	return {
		el: h("div", { class: "toolbar" }, chips, search, h("label", {}, errorsBox, " errors only"), h("button", {
			id: "filter-clear",
			onclick: () => go({
				type: "",
				q: "",
				errors: ""
			})
		}, "clear")),
		show(filter, params, events) {
			if (search.value.toLowerCase() !== filter.text) search.value = params.q || "";
			errorsBox.checked = filter.errorsOnly;
			const types = [.../* @__PURE__ */ new Set([...EVENT_TYPES.filter((t) => events.some((e) => e.type === t) || filter.types.includes(t)), ...events.map((e) => e.type)])];
			put(chips, ...types.map((t) => h("button", {
				class: `chip type-${t} ${filter.types.includes(t) ? "on" : ""}`,
				dataset: { type: t },
				"aria-pressed": String(filter.types.includes(t)),
				onclick: () => go({ type: toggleType(filter.types, t).join(",") })
			}, t)));
		}
	};
}
function waterfall({ id, onNeedMore, onPick }) {
	let span = [0, 1];
	const list = virtualList({
		rowClass: "event-row",
		renderRow: (e) => eventRow(id, e, span),
		onNeedMore,
		onClick: onPick
	});
	return {
		el: h("section", {}, h("div", { class: "event-head" }, ...[
			"Offset",
			"Duration",
			"Type",
			"Name",
			"Status",
			"Timeline",
			"Preview"
		].map((t) => h("span", {}, t))), list.el),
		set(events, nextSpan, selected) {
			span = nextSpan;
			list.set(events, selected);
		},
		scrollTo: (index) => list.scrollTo(index)
	};
}
function eventRow(id, e, span) {
	const bar = barOf(e, span);
	const barEl = h("span", { class: `bar type-${e.type}` });
	barEl.style.left = `${(bar.left * 100).toFixed(3)}%`;
	barEl.style.width = `${(bar.width * 100).toFixed(3)}%`;
	const failed = isErrorEvent(e);
	return h("div", {
		class: failed ? "failed" : "",
		dataset: {
			key: e.seq,
			seq: e.seq,
			type: e.type
		}
	}, h("span", { class: "mono" }, formatOffset(e.offset)), h("span", { class: "mono" }, formatSeconds(e.duration)), h("span", {}, h("span", { class: `tag type-${e.type}` }, e.type)), h("span", { title: e.name }, e.name), h("span", { class: failed ? "status-error" : "status-ok" }, failed ? "error" : "ok"), h("span", { class: "track" }, barEl), h("span", { class: "preview" }, thumbnail(id, e), e.payload_cut ? `[${formatNumber(e.payload_bytes)} bytes] ${previewText(e.payload)}` : previewText(e.payload)));
}
function thumbnail(id, e) {
	const src = screenshotUrl(id, e);
	return src ? h("img", {
		class: "shot-thumb",
		src,
		alt: `screenshot ${e.payload.screenshot}`,
		loading: "lazy"
	}) : null;
}
function screenshot(id, e) {
	const src = screenshotUrl(id, e);
	return src ? h("a", {
		href: src,
		target: "_blank",
		rel: "noopener"
	}, h("img", {
		class: "shot",
		src,
		alt: `screenshot ${e.payload.screenshot}`
	})) : null;
}
function eventDetail(ui, id, here) {
	const el = h("aside", {
		class: "detail",
		id: "event-detail",
		hidden: true
	});
	async function show(seq, events) {
		el.hidden = !seq;
		if (!seq) return;
		let event = events.find((e) => e.seq === seq);
		if (!event || event.payload_cut) try {
			event = await api(`/api/attempts/${id}/events/${seq}?preview=2000`);
		} catch (err) {
			put(el, h("p", { class: "error-box" }, String(err.message)));
			return;
		}
		const body = event.type === "message" ? mathText(prettyLines(event.payload), "pre", { class: "payload" }) : h("pre", { class: "payload" }, prettyLines(event.payload));
		const note = h("p", {
			class: "muted",
			id: "shortened-note"
		}, shortenedNote(event));
		put(el, h("div", { class: "actions" }, h("strong", {}, `#${event.seq} ${event.type} · ${event.name}`), h("button", {
			onclick: () => ui.go(withParams(here(), { event: "" })),
			"aria-label": "close"
		}, "×")), h("dl", {}, h("dt", {}, "time"), h("dd", {}, event.time || "–"), h("dt", {}, "offset"), h("dd", {}, formatOffset(event.offset)), h("dt", {}, "duration"), h("dd", {}, formatSeconds(event.duration)), h("dt", {}, "status"), h("dd", {}, isErrorEvent(event) ? "error" : "ok"), h("dt", {}, "size"), h("dd", {}, `${formatNumber(event.payload_bytes)} bytes`)), h("div", { class: "actions" }, untruncateButton(id, event, body, note), h("a", {
			class: "button",
			id: "raw-download",
			href: `/api/attempts/${id}/events/${seq}/raw`,
			download: `${id}-event-${seq}.json`
		}, "Download raw JSON")), note, screenshot(id, event), body);
	}
	return {
		el,
		show
	};
}
function shortenedNote(event) {
	if (!event.truncated) return "";
	return event.payload_bytes <= MAX_UNTRUNCATED ? `Long values are shortened for display (${formatNumber(event.payload_bytes)} bytes recorded).` : `This event holds ${formatNumber(event.payload_bytes)} bytes: it is shown shortened only; download it raw to see everything.`;
}
function untruncateButton(id, event, body, note) {
	if (!event.truncated || event.payload_bytes > MAX_UNTRUNCATED) return null;
	const button = h("button", {
		id: "load-untruncated",
		onclick: async () => {
			button.disabled = true;
			body.textContent = prettyLines((await api(`/api/attempts/${id}/events/${event.seq}`)).payload);
			button.remove();
			note.remove();
		}
	}, "Load untruncated");
	return button;
}
// src/lib/stats.js
function wilson(passed, n, z = 1.959964) {
	if (!n) return null;
	const p = passed / n;
	const z2 = z * z;
	const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
	const half = z * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
	return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
function histogram(values, bins = 10, lo = null, hi = null) {
	const finite = values.filter((v) => Number.isFinite(v));
	if (!finite.length) return [];
	lo = lo ?? Math.min(...finite);
	hi = hi ?? Math.max(...finite);
	if (hi <= lo) hi = lo + 1;
	const width = (hi - lo) / bins;
	const out = Array.from({ length: bins }, (_, i) => ({
		lo: lo + i * width,
		hi: lo + (i + 1) * width,
		count: 0
	}));
	for (const v of finite) {
		const i = Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / width)));
		out[i].count++;
	}
	return out;
}
function heatClass(value) {
	if (value === null || value === void 0 || !Number.isFinite(value)) return "";
	return `heat-${Math.round(Math.min(1, Math.max(0, value)) * 10)}`;
}
function rewardValues(attempts) {
	const by = {};
	for (const a of attempts) {
		if (!a.score || a.score.state !== "scored") continue;
		for (const v of Object.values(a.score.rewards || {})) (by[a.harness_name] ||= []).push(v);
	}
	return by;
}
function ticks(max, count = 4) {
	if (!(max > 0)) return [0];
	const raw = max / count;
	const step = 10 ** Math.floor(Math.log10(raw));
	const nice = [
		1,
		2,
		5,
		10
	].map((m) => m * step).find((s) => s >= raw) || raw;
	const out = [];
	for (let v = 0; v <= max + nice * 1e-9; v += nice) out.push(Number(v.toPrecision(12)));
	return out;
}
function signed(x, digits) {
	return `${x < 0 || Object.is(x, -0) ? "" : "+"}${x.toFixed(digits)}`;
}
function versusLines(vs) {
	if (!vs || !vs.paired_tasks) return ["–"];
	const parts = [];
	if (vs.binary_tasks) parts.push(`${signed(vs.delta_points || 0, 1)} pts on ${vs.binary_tasks} tasks`);
	if (vs.numeric_tasks) {
		const base = vs.baseline_mean_rewards || {};
		for (const name of Object.keys(vs.mean_rewards || {}).sort()) parts.push(`${name} ${signed(vs.mean_rewards[name] - (base[name] || 0), 3)}`);
		parts.push(`(on ${vs.numeric_tasks} tasks)`);
	}
	return parts;
}
// src/charts.js
var W = 560;
var ROW = 24;
var LEFT = 130;
function axis(y, max, format) {
	const span = 410;
	return s("g", { class: "axis" }, ticks(max).map((t) => s("g", {}, s("line", {
		x1: LEFT + t / max * span,
		x2: LEFT + t / max * span,
		y1: 0,
		y2: y,
		class: "grid"
	}), s("text", {
		x: LEFT + t / max * span,
		y: y + 14,
		"text-anchor": "middle"
	}, format(t)))));
}
function intervalBars(items, title) {
	const span = 410;
	const height = items.length * ROW + 24;
	const x = (v) => LEFT + v * span;
	return s("svg", {
		class: "chart",
		viewBox: `0 0 ${W} ${height}`,
		role: "img",
		"aria-label": title
	}, s("title", {}, title), axis(items.length * ROW, 1, (t) => `${Math.round(t * 100)}%`), items.map((item, i) => s("g", { class: "bar-row" }, s("text", {
		x: 124,
		y: i * ROW + 16,
		"text-anchor": "end"
	}, item.label), s("rect", {
		x: LEFT,
		y: i * ROW + 5,
		width: Math.max(1, item.value * span),
		height: 14,
		class: `cbar series-${i % 6}`
	}, s("title", {}, `${item.label}: ${(item.value * 100).toFixed(1)}% ${item.note || ""}`)), item.interval ? s("g", { class: "interval" }, s("line", {
		x1: x(item.interval[0]),
		x2: x(item.interval[1]),
		y1: i * ROW + 12,
		y2: i * ROW + 12
	}), s("line", {
		x1: x(item.interval[0]),
		x2: x(item.interval[0]),
		y1: i * ROW + 7,
		y2: i * ROW + 17
	}), s("line", {
		x1: x(item.interval[1]),
		x2: x(item.interval[1]),
		y1: i * ROW + 7,
		y2: i * ROW + 17
	})) : null)));
}
function deltaChart(delta, interval, title) {
	const span = 410;
	const bound = Math.max(.05, Math.abs(delta), Math.abs(interval.low), Math.abs(interval.high));
	const x = (v) => LEFT + (v + bound) / (2 * bound) * span;
	return s("svg", {
		class: "chart",
		viewBox: `0 0 ${W} 60`,
		role: "img",
		"aria-label": title
	}, s("title", {}, title), s("line", {
		x1: x(0),
		x2: x(0),
		y1: 4,
		y2: 40,
		class: "zero"
	}), s("text", {
		x: 124,
		y: 26,
		"text-anchor": "end"
	}, "b − a"), s("line", {
		x1: x(interval.low),
		x2: x(interval.high),
		y1: 22,
		y2: 22,
		class: "interval-line"
	}), s("circle", {
		cx: x(delta),
		cy: 22,
		r: 5,
		class: delta >= 0 ? "dot up" : "dot down"
	}), [
		-bound,
		0,
		bound
	].map((t) => s("text", {
		x: x(t),
		y: 54,
		"text-anchor": "middle"
	}, `${(t * 100).toFixed(0)} pts`)));
}
function histogramChart(series, title, format = (v) => v.toFixed(1)) {
	const names = Object.keys(series);
	const bins = names.length ? series[names[0]].length : 0;
	const max = Math.max(1, ...names.flatMap((n) => series[n].map((b) => b.count)));
	const height = 160;
	const plot = 130;
	const slot = 410 / Math.max(1, bins);
	const barW = Math.max(1, (slot - 4) / Math.max(1, names.length));
	return s("svg", {
		class: "chart",
		viewBox: `0 0 ${W} ${170 + names.length * 14}`,
		role: "img",
		"aria-label": title
	}, s("title", {}, title), ticks(max).map((t) => s("g", { class: "axis" }, s("line", {
		x1: LEFT,
		x2: 540,
		y1: plot - t / max * plot + 4,
		y2: plot - t / max * plot + 4,
		class: "grid"
	}), s("text", {
		x: 124,
		y: plot - t / max * plot + 8,
		"text-anchor": "end"
	}, String(t)))), names.map((name, k) => series[name].map((b, i) => s("rect", {
		x: LEFT + i * slot + 2 + k * barW,
		y: plot - b.count / max * plot + 4,
		width: barW,
		height: Math.max(0, b.count / max * plot),
		class: `cbar series-${k % 6}`
	}, s("title", {}, `${name}: ${b.count} in [${format(b.lo)}, ${format(b.hi)})`)))), bins ? [0, bins].map((i) => s("text", {
		x: LEFT + i * slot,
		y: 150,
		"text-anchor": "middle",
		class: "axis"
	}, format(i === 0 ? series[names[0]][0].lo : series[names[0]][bins - 1].hi))) : null, names.map((name, k) => s("g", { class: "legend" }, s("rect", {
		x: LEFT,
		y: height + k * 14,
		width: 10,
		height: 10,
		class: `cbar series-${k % 6}`
	}), s("text", {
		x: 146,
		y: 169 + k * 14
	}, name))));
}
function stripChart(series, title, format = formatSeconds, onPick = null) {
	const names = Object.keys(series);
	const all = names.flatMap((n) => series[n].map((p) => p.value)).filter(Number.isFinite);
	const max = Math.max(1e-9, ...all);
	const span = 410;
	return s("svg", {
		class: "chart",
		viewBox: `0 0 ${W} ${names.length * ROW + 24}`,
		role: "img",
		"aria-label": title
	}, s("title", {}, title), axis(names.length * ROW, max, format), names.map((name, k) => s("g", {}, s("text", {
		x: 124,
		y: k * ROW + 16,
		"text-anchor": "end"
	}, name), series[name].filter((p) => Number.isFinite(p.value)).map((p, i) => s("circle", {
		cx: LEFT + p.value / max * span,
		cy: k * ROW + 12 + (i % 5 - 2) * 2,
		r: 3,
		class: `dot series-${k % 6}${onPick ? " pick" : ""}`,
		onclick: onPick ? () => onPick(p) : null
	}, s("title", {}, `${p.label}: ${format(p.value)}`))))));
}
// src/views/compare.js
function sidePicker(id, label, value, sides) {
	const input = h("input", {
		type: "text",
		id,
		list: `${id}-options`,
		value: value || "",
		placeholder: `${label}: run, run/harness, run/dataset/harness or import`,
		"aria-label": label
	});
	const options = h("datalist", { id: `${id}-options` }, sides.map((s) => h("option", { value: s.ref }, s.label)));
	return {
		input,
		el: h("div", { class: "side" }, h("select", {
			"aria-label": `${label} from recent runs`,
			id: `${id}-pick`,
			onchange: (e) => {
				input.value = e.target.value;
			}
		}, h("option", { value: "" }, `${label}: pick…`), sides.map((s) => h("option", {
			value: s.ref,
			selected: s.ref === value
		}, s.label))), input, options)
	};
}
function passAtK(side) {
	const ks = Object.keys(side.pass_at_k || {}).map(Number).sort((x, y) => x - y);
	return ks.length ? ks.map((k) => `pass@${k} ${formatNumber(side.pass_at_k[k])} · pass^${k} ${formatNumber(side.pass_hat_k[k])}`).join("; ") : "–";
}
function criteriaSection(criteria, notComparable) {
	if (!criteria.length && !notComparable.length) return null;
	const rows = criteria.map((x) => h("tr", { class: "criterion" }, h("td", {}, `${x.judge} / ${x.criterion}`), h("td", {}, x.judge_model || "–"), h("td", { class: "num" }, x.tasks), h("td", { class: "num" }, formatNumber(x.a_mean || 0)), h("td", { class: "num" }, formatNumber(x.b_mean || 0)), h("td", { class: "num" }, `${formatNumber(x.delta || 0)}${x.interval ? ` [${formatNumber(x.interval.low || 0)}, ${formatNumber(x.interval.high || 0)}]` : ""}`), h("td", { class: "num" }, `${(100 * (x.a_pass_rate || 0)).toFixed(0)}% / ${(100 * (x.b_pass_rate || 0)).toFixed(0)}%`)));
	return [
		h("h2", {}, `Rubric criteria (${criteria.length})`),
		table([
			"Judge / criterion",
			"Model",
			"Tasks",
			"a",
			"b",
			"b − a",
			"Passed a / b"
		], rows, { class: "criteria-table" }),
		notComparable.length ? [h("h3", {}, `Criteria not comparable (${notComparable.length})`), table(["Task", "Reason"], notComparable.map((n) => h("tr", {}, h("td", {}, n.task_name), h("td", {}, n.reason))))] : null
	];
}
async function compareView(route, ui) {
	ui.crumbs(h("span", {}, "Compare"));
	const sides = (await api("/api/runs?page_size=100")).runs.flatMap(sidesOf);
	const a = sidePicker("side-a", "side a", route.params.a, sides);
	const b = sidePicker("side-b", "side b", route.params.b, sides);
	const only = h("select", {
		id: "task-filter",
		"aria-label": "tasks shown"
	}, [
		["", "all paired tasks"],
		["flips", "flipped tasks"],
		["differ", "tasks that differ"]
	].map(([v, t]) => h("option", {
		value: v,
		selected: (route.params.only || "") === v
	}, t)));
	only.addEventListener("change", () => ui.go(withParams(route, { only: only.value }), true));
	const go = h("button", {
		id: "compare-go",
		onclick: () => ui.go(withParams(route, {
			a: a.input.value.trim(),
			b: b.input.value.trim()
		}))
	}, "Compare");
	const out = h("section", { id: "comparison" });
	ui.main(h("h1", {}, "Compare b − a"), h("div", { class: "toolbar compare-form" }, a.el, b.el, go), out);
	if (!route.params.a || !route.params.b) {
		put(out, empty("Pick two sides: a run cell (run, run/harness, run/dataset/harness) or an import."));
		return null;
	}
	const judge = route.params.judge || "";
	const c = await api(`/api/compare?${q({
		a: route.params.a,
		b: route.params.b,
		judge
	})}`);
	const render = () => {
		const flips = /* @__PURE__ */ new Set([...c.flipped_to_pass, ...c.flipped_to_fail]);
		const filter = route.params.only || "";
		const tasks = c.tasks.filter((t) => !filter || (filter === "flips" ? flips.has(t.task_name) : t.binary ? t.a_pass_rate !== t.b_pass_rate : JSON.stringify(t.a_means) !== JSON.stringify(t.b_means)));
		const summary = [
			[
				"",
				c.a.label || c.a.ref,
				c.b.label || c.b.ref
			],
			[
				"kind",
				c.a.kind,
				c.b.kind
			],
			[
				"model",
				c.a.model || "–",
				c.b.model || "–"
			],
			[
				"trials (graded)",
				`${c.a.trials} (${c.a.graded})`,
				`${c.b.trials} (${c.b.graded})`
			],
			[
				"infra / scorer failed / cancelled / unfinished",
				`${c.a.infra_failed} / ${c.a.scorer_failed} / ${c.a.cancelled} / ${c.a.unfinished}`,
				`${c.b.infra_failed} / ${c.b.scorer_failed} / ${c.b.cancelled} / ${c.b.unfinished}`
			],
			[
				"pass@k",
				passAtK(c.a),
				passAtK(c.b)
			]
		];
		if (c.binary_tasks) summary.push([
			"passed (0/1 tasks)",
			`${formatNumber(c.a_passed)}/${c.binary_tasks}`,
			`${formatNumber(c.b_passed)}/${c.binary_tasks}`
		]);
		for (const d of c.reward_deltas) summary.push([
			`mean ${d.name} (${d.tasks} tasks)`,
			formatNumber(d.a_mean),
			`${formatNumber(d.b_mean)} (Δ ${formatNumber(d.delta)}${d.interval ? ` [${formatNumber(d.interval.low)}, ${formatNumber(d.interval.high)}]` : ""})`
		]);
		const interval = c.delta_interval;
		put(out, table([
			"",
			"a",
			"b"
		].map((t) => h("th", {}, t)), summary.slice(1).map((r) => h("tr", {}, h("th", {}, r[0]), h("td", {}, r[1]), h("td", {}, r[2]))), { class: "summary" }), c.binary_tasks ? h("div", { class: "delta" }, h("p", { id: "delta-text" }, h("strong", {}, `b − a: ${(100 * c.delta).toFixed(1)} pts`), interval ? ` (${Math.round(100 * interval.level)}% interval ${(100 * interval.low).toFixed(1)} to ${(100 * interval.high).toFixed(1)}, ${interval.resamples} paired resamples)` : "", c.mcnemar ? ` · McNemar: a fail → b pass ${c.mcnemar.a_fail_b_pass}, a pass → b fail ${c.mcnemar.a_pass_b_fail}, p = ${formatNumber(c.mcnemar.p_value)}` : ""), interval ? deltaChart(c.delta, interval, "b − a pass rate with its interval") : null) : null, h("div", { class: "flips" }, h("p", { class: "verdict-passed" }, `Flipped to pass (${c.flipped_to_pass.length}): ${c.flipped_to_pass.join(", ") || "–"}`), h("p", { class: "verdict-failed" }, `Flipped to fail (${c.flipped_to_fail.length}): ${c.flipped_to_fail.join(", ") || "–"}`)), ...c.flags.map((f) => h("p", { class: "flags" }, `! ${f}`)), h("h2", {}, `Paired tasks (${c.paired_tasks})`), h("div", { class: "toolbar" }, only, h("span", { class: "status-line" }, `${tasks.length} shown`)), table([
			"Task",
			"a trials",
			"b trials",
			"a",
			"b",
			"b − a"
		].map((t) => h("th", {}, t)), tasks.map((t) => {
			return h("tr", { class: `paired ${c.flipped_to_pass.includes(t.task_name) ? "flip-pass" : c.flipped_to_fail.includes(t.task_name) ? "flip-fail" : ""}` }, h("td", {}, t.task_name), h("td", { class: "num" }, t.a_trials), h("td", { class: "num" }, t.b_trials), h("td", { class: `num ${t.binary ? heatClass(t.a_pass_rate) : ""}` }, t.binary ? `${(100 * t.a_pass_rate).toFixed(0)}%` : rewardsText(t.a_means)), h("td", { class: `num ${t.binary ? heatClass(t.b_pass_rate) : ""}` }, t.binary ? `${(100 * t.b_pass_rate).toFixed(0)}%` : rewardsText(t.b_means)), h("td", { class: "num" }, t.binary ? `${(100 * (t.b_pass_rate - t.a_pass_rate)).toFixed(0)} pts` : ""));
		}), { class: "paired-table" }), c.not_comparable.length ? [h("h2", {}, `Not comparable (${c.not_comparable.length})`), table(["Task", "Reason"], c.not_comparable.map((n) => h("tr", {}, h("td", {}, n.task_name), h("td", {}, n.reason))))] : null, criteriaSection(c.criteria || [], c.criteria_not_comparable || []));
	};
	render();
	return { update(next) {
		if (next.params.a !== route.params.a || next.params.b !== route.params.b || (next.params.judge || "") !== judge) return false;
		route = next;
		only.value = next.params.only || "";
		render();
		return true;
	} };
}
// src/lib/repairs.js
var UNSCORED = [
	"infra_failed",
	"scorer_failed",
	"cancelled",
	"unfinished"
];
function unscoredRows(report) {
	return (report && report.datasets || []).flatMap((d) => (d.rows || []).filter((r) => UNSCORED.some((key) => (r[key] || 0) > 0)).map((r) => [d, r]));
}
function repairCommands(run, report) {
	if (!run || run.kind === "import") return [];
	const rows = unscoredRows(report).map(([, r]) => r);
	const sum = (key) => rows.reduce((n, r) => n + (r[key] || 0), 0);
	const commands = [];
	if (sum("cancelled") || sum("unfinished")) commands.push(`hemra resume ${run.id}`);
	const flags = [
		["infra_failed", "--infra"],
		["scorer_failed", "--scorer"],
		["cancelled", "--cancelled"]
	].filter(([key]) => sum(key)).map(([, flag]) => flag);
	if (flags.length) commands.push(`hemra repair ${run.id} ${flags.join(" ")}`);
	return commands;
}
function attemptsTaken(report) {
	return Object.entries(report && report.trials_by_attempts || {}).sort(([a], [b]) => a - b).map(([n, trials]) => `${trials} in ${n}`).join(", ");
}
// src/lib/retries.js
function retryLines(row) {
	return (row && row.retry_reasons || []).map((r) => `${r.attempts || 0} × ${r.reason || "(no error recorded)"}`);
}
function retriedRows(report) {
	return (report && report.datasets || []).flatMap((d) => (d.rows || []).filter((r) => r.retried).map((r) => [d, r]));
}
// src/lib/spec.js
var list = (values) => values && values.length ? values.join(", ") : "";
var joined = (...parts) => parts.filter(Boolean).join(" · ");
function scopeText(spec, datasets = []) {
	const counts = datasets.map((d) => `${d.dataset_name}: ${d.tasks} tasks`).join(", ");
	return `${(spec.tasks || []).length || (spec.exclude || []).length ? "subset" : "full datasets"}${counts ? ` (${counts})` : ""}`;
}
function specRows(spec, datasets = []) {
	if (!spec) return [];
	return [
		["Datasets", list(spec.datasets)],
		["Harnesses", list(spec.harnesses)],
		["Baseline", spec.baseline || ""],
		["Model", spec.model || ""],
		["Scope", scopeText(spec, datasets)],
		["Tasks", list(spec.tasks)],
		["Exclude", list(spec.exclude)],
		["Attempts", `${spec.attempts || 1} per task`],
		["Concurrency", String(spec.concurrency || 1)],
		["Timeout", spec.timeout_secs ? `${spec.timeout_secs} s per attempt` : "each task's agent timeout (900 s when it sets none)"],
		["Infra retries", `at most ${spec.max_infra_retries || 0} per trial`],
		["Sandbox", joined(spec.sandbox || "host", spec.sandbox_image && `image ${spec.sandbox_image}`, spec.sandbox_network && `network ${spec.sandbox_network}`)],
		["Require", list(spec.require) || "nothing"],
		["Verifier", joined(spec.verifier_isolation && `isolation ${spec.verifier_isolation}`, spec.verifier_network && `network ${spec.verifier_network}`, list(spec.verifier_env) && `env ${list(spec.verifier_env)}`)],
		["Judges", list(spec.judges)],
		["Pool", spec.pool || ""],
		["History kept", list(spec.history_kept)],
		["Run file", spec.run_file || ""]
	].filter(([, text]) => text !== "");
}
// src/views/runs.js
var ATTEMPT_PAGE = 500;
var REFRESH_MS = 5e3;
var CHART_ATTEMPTS = 5e3;
async function runsView(route, ui, kind = "") {
	const imports = kind === "import";
	ui.crumbs(h("span", {}, imports ? "Imports" : "Runs"));
	const page = await api(`/api/runs?${q({
		page_size: 50,
		page_token: route.params.page,
		kind: kind || route.params.kind
	})}`);
	const rows = page.runs.map((run) => {
		const p = run.progress || {};
		const sides = sidesOf(run);
		return h("tr", { class: "run-row" }, h("td", {}, h("a", {
			class: "run-link",
			href: ui.link("run", run.id)
		}, run.label || run.id), problem(run)), h("td", { class: "mono" }, run.id), h("td", {}, run.kind === "import" ? `import (${run.import_format})` : run.kind === "loose" ? "loose attempt" : "run"), h("td", {}, when(run.create_time)), h("td", {}, [...new Set(run.cells.map((c) => c.harness_name))].join(", ")), h("td", {}, [...new Set(run.cells.map((c) => c.dataset_name))].map((d, i) => [i ? ", " : "", anchor(ui, ["dataset", d], {}, d)])), h("td", { class: "num" }, `${p.done || 0}/${p.trials || 0}`), h("td", { class: "num verdict-passed" }, p.passed || 0), h("td", { class: "num verdict-failed" }, p.failed || 0), h("td", { class: "num verdict-errored" }, p.errored || 0), h("td", {}, sides.length ? h("a", { href: ui.link("compare", "", { a: sides[0].ref }) }, "compare…") : ""));
	});
	const filter = imports ? null : h("select", {
		id: "runs-kind",
		"aria-label": "kind",
		onchange: (e) => ui.go(withParams(route, {
			kind: e.target.value,
			page: ""
		}))
	}, [
		["", "runs, imports and loose attempts"],
		["run", "runs only"],
		["import", "imports only"],
		["loose", "loose attempts only"]
	].map(([v, t]) => h("option", {
		value: v,
		selected: (route.params.kind || "") === v
	}, t)));
	ui.main(h("h1", {}, imports ? "Imports" : "Runs"), filter ? h("div", { class: "toolbar" }, filter) : null, page.runs.length ? table([
		"Label",
		"ID",
		"Kind",
		"Created",
		"Harnesses",
		"Datasets",
		...[
			"Done",
			"Passed",
			"Failed",
			"Errored"
		].map((t) => h("th", { class: "num" }, t)),
		""
	], rows, { class: "runs" }) : empty(imports ? "No imports yet. Bring results in with hemra import." : "No runs yet. Start one with hemra run."), h("div", { class: "actions" }, route.params.page ? h("a", {
		class: "button",
		href: ui.link(route.view, "", {
			...route.params,
			page: ""
		})
	}, "Newest") : null, page.next_page_token ? h("a", {
		class: "button",
		id: "older",
		href: ui.link(route.view, "", {
			...route.params,
			page: page.next_page_token
		})
	}, "Older") : null));
}
function reportTable(ui, run, dataset) {
	const rewardNames = [...new Set(dataset.rows.flatMap((r) => Object.keys(r.mean_rewards || {})))].sort();
	const passRates = dataset.rows.map((r) => r.binary_graded ? r.passed / r.binary_graded : null);
	const best = Math.max(...passRates.filter((x) => x !== null));
	const head = [
		"Harness",
		"Model",
		"Trials",
		"Graded",
		"Passed",
		...rewardNames.map((n) => `mean ${n}`),
		"vs baseline",
		"Harness failed",
		"Timed out",
		"Verifier fault",
		"Infra",
		"Retried",
		"Scorer",
		"Unfinished",
		"Mined history",
		"Flags"
	];
	const cellOf = (harness) => run.cells.find((c) => c.dataset_name === dataset.dataset_name && c.harness_name === harness);
	return table(head.map((t, i) => h("th", { class: i >= 2 && i < head.length - 1 ? "num" : "" }, t)), dataset.rows.map((r, i) => {
		const vsLines = r.is_baseline ? ["–"] : versusLines(r.vs_baseline);
		const cell = cellOf(r.harness_name);
		const attempts = ui.link("run", run.id, {
			tab: "attempts",
			cell: cell ? cell.id : "",
			harness: cell ? "" : r.harness_name
		});
		return h("tr", { class: r.is_baseline ? "baseline" : "" }, h("td", {}, h("a", {
			class: "harness-link",
			href: attempts
		}, r.harness_name), r.is_baseline ? h("span", { class: "muted" }, " baseline") : null), h("td", {}, r.model || "–"), h("td", { class: "num" }, r.trials), h("td", { class: "num" }, r.graded), h("td", { class: `num ${passRates[i] === best && best !== null ? "best" : ""}` }, r.binary_graded ? `${r.passed}/${r.binary_graded} (${formatPercent(r.passed, r.binary_graded)})` : "–"), ...rewardNames.map((n) => h("td", { class: "num" }, n in (r.mean_rewards || {}) ? formatNumber(r.mean_rewards[n]) : "–")), h("td", { class: "num vs-baseline" }, vsLines.map((line) => h("div", {}, line))), ...[
			r.harness_failed,
			r.timed_out,
			r.verifier_faults || 0,
			r.infra_failed
		].map((n) => h("td", { class: "num" }, n)), h("td", {
			class: "num retried",
			title: retryLines(r).join("\n")
		}, r.retried || 0), ...[r.scorer_failed, r.unfinished].map((n) => h("td", { class: "num" }, n)), h("td", { class: "num mined" }, r.history_mining ? h("a", {
			class: "mining-link",
			href: ui.link("run", run.id, { tab: "mining" })
		}, r.history_mining) : 0), h("td", { class: "flags" }, (r.flags || []).join("; ")));
	}), { class: "report" });
}
function tagTable(ui, run, dataset) {
	const rows = dataset.tag_rows || [];
	if (!rows.length) return null;
	const harnesses = dataset.rows.map((r) => r.harness_name);
	const byTag = /* @__PURE__ */ new Map();
	for (const r of rows) (byTag.get(r.tag) || byTag.set(r.tag, {}).get(r.tag))[r.harness_name] = r;
	return h("details", {
		class: "tags",
		open: true
	}, h("summary", {}, `Pass rate by task tag (${byTag.size})`), table([
		h("th", {}, "Tag"),
		h("th", { class: "num" }, "Tasks"),
		...harnesses.map((n) => h("th", { class: "num" }, n))
	], [...byTag].map(([tag, cells]) => h("tr", { class: "tag-row" }, h("th", { scope: "row" }, tag), h("td", { class: "num" }, Object.values(cells)[0].tasks || 0), ...harnesses.map((harness) => {
		const r = cells[harness];
		if (!r) return h("td", { class: "num" }, "–");
		const rate = r.binary_graded ? (r.passed || 0) / r.binary_graded : null;
		return h("td", { class: `num ${rate === null ? "" : heatClass(rate)}` }, h("a", {
			class: "tag-link",
			href: ui.link("run", run.id, {
				tab: "attempts",
				tag,
				harness
			})
		}, r.binary_graded ? `${r.passed || 0}/${r.binary_graded} (${formatPercent(r.passed || 0, r.binary_graded)})` : "–"));
	}))), { class: "tag-table" }));
}
function specNote(run, report) {
	const rows = run.kind === "import" ? [] : specRows(run.spec, report.datasets);
	if (!rows.length) return null;
	return h("details", {
		class: "spec",
		id: "spec"
	}, h("summary", {}, "Resolved spec"), h("dl", {}, rows.map(([label, text]) => [h("dt", {}, label), h("dd", { dataset: { key: label } }, text)])));
}
function unscoredNote(run, report) {
	if (run.kind === "import") return null;
	const rows = unscoredRows(report);
	const repairs = report.repairs || [];
	if (!rows.length && !repairs.length) return null;
	const commands = repairCommands(run, report);
	const taken = attemptsTaken(report);
	return h("section", { id: "unscored" }, h("h2", {}, "Unscored trials"), rows.length ? table([
		"Dataset",
		"Harness",
		"Infrastructure",
		"Scorer",
		"Cancelled",
		"Unfinished"
	].map((t) => h("th", {}, t)), rows.map(([d, r]) => h("tr", {}, h("td", {}, d.dataset_name), h("td", {}, r.harness_name), ...[
		r.infra_failed,
		r.scorer_failed,
		r.cancelled,
		r.unfinished
	].map((n) => h("td", { class: "num" }, n || 0)))), { class: "unscored" }) : null, commands.length ? h("p", { class: "muted" }, "Queue them again, as new attempts of the same trials (scored trials are never run again):") : null, ...commands.map((c) => h("pre", { class: "command" }, h("code", {}, c))), ...repairs.map((r) => h("p", { class: "repair" }, `${r.kind === "resume" ? "Resumed" : "Repaired"} ${when(r.create_time)}${r.requested_by ? ` by ${r.requested_by}` : ""}: `, `${r.queued} trials queued again (${(r.reasons || []).join(", ")})`, ...(r.allowed_changes || []).map((c) => h("span", { class: "flags" }, ` · ${c.what} changed since the run, allowed`)))), repairs.length && taken ? h("p", { class: "muted" }, `Trials by attempts taken: ${taken}.`) : null, report.unfair ? h("p", {
		class: "flags",
		id: "unfair"
	}, "Not a fair comparison: a resume or repair ran on inputs changed since the run was planned.") : null);
}
function retriesNote(report) {
	const rows = retriedRows(report);
	if (!rows.length) return null;
	return h("section", { id: "retries" }, h("h2", {}, "Retried attempts"), h("p", { class: "muted" }, "Attempts lost to the infrastructure (or handed back by a worker that stopped) and run again; ", `each trial is retried at most ${report.max_infra_retries || 0} times for the infrastructure's failures.`), table([
		"Dataset",
		"Harness",
		"Retried",
		"Why"
	].map((t) => h("th", {}, t)), rows.map(([d, r]) => h("tr", {}, h("td", {}, d.dataset_name), h("td", {}, r.harness_name), h("td", { class: "num" }, r.retried), h("td", { class: "retry-reasons" }, ...retryLines(r).map((line) => h("div", {}, line))))), { class: "retries" }));
}
function tabs(route, ui, names) {
	const current = route.params.tab || names[0];
	return h("nav", { class: "tabs" }, names.map((n) => h("a", {
		href: ui.link(route.view, route.id, {
			...route.params,
			tab: n === names[0] ? "" : n
		}),
		class: n === current ? "tab on" : "tab",
		"aria-current": n === current ? "page" : null
	}, n)));
}
async function runView(route, ui) {
	const ref = encodeURIComponent(route.id);
	const run = await api(`/api/runs/${ref}`);
	if (run.kind === "loose") {
		const only = await api(`/api/runs/${ref}/attempts?page_size=1`);
		if (only.attempts.length) return ui.go({
			view: "attempt",
			id: only.attempts[0].id,
			params: {}
		}, true);
	}
	const report = await api(`/api/runs/${ref}/report`);
	const listView = run.kind === "import" ? "imports" : "runs";
	ui.crumbs(anchor(ui, [listView], {}, run.kind === "import" ? "Imports" : "Runs"), h("span", {}, run.label || run.id));
	const p = run.progress || {};
	const tab = route.params.tab || "report";
	const body = h("section", { id: `tab-${tab}` });
	ui.main(h("h1", {}, `${run.kind === "import" ? "Import" : "Run"} ${run.label || run.id}`), h("p", { class: "muted" }, `${run.id} · ${when(run.create_time)}`, run.source ? ` · from ${run.source}` : "", run.spec && run.spec.baseline ? ` · baseline ${run.spec.baseline}` : ""), provenance(run), problem(run), h("div", { class: "cards" }, card("trials", formatNumber(p.trials || 0)), card("done", formatNumber(p.done || 0)), card("passed", formatNumber(p.passed || 0), "verdict-passed"), card("failed", formatNumber(p.failed || 0), "verdict-failed"), card("errored", formatNumber(p.errored || 0), "verdict-errored"), card("cancelled", formatNumber(p.cancelled || 0)), card("queued / running", `${p.queued || 0} / ${p.running || 0}`), card("report", report.complete ? "complete" : "partial")), tabs(route, ui, [
		"report",
		"charts",
		"attempts",
		"mining"
	]), body);
	if (tab === "attempts") return attemptsTab(route, ui, run, body);
	if (tab === "mining") return miningTab(ui, run, body);
	if (tab === "charts") return chartsTab(ui, run, report, body);
	const going = (p.queued || 0) + (p.running || 0) > 0;
	const timer = going ? setTimeout(() => ui.refresh(), REFRESH_MS) : null;
	put(body, specNote(run, report), ...report.datasets.map((d) => h("section", { class: "dataset" }, h("h2", {}, anchor(ui, ["dataset", d.dataset_name], {}, d.dataset_name), ` (${d.tasks} tasks)`), reportTable(ui, run, d), tagTable(ui, run, d))), retriesNote(report), unscoredNote(run, report), h("p", {}, h("a", {
		class: "button",
		href: ui.link("compare", "", { a: sidesOf(run)[0] ? sidesOf(run)[0].ref : "" })
	}, "Compare with…")), going ? h("p", {
		class: "muted",
		id: "live-note"
	}, `Attempts are still going: this page refreshes every ${REFRESH_MS / 1e3} s.`) : null);
	return { close() {
		if (timer) clearTimeout(timer);
	} };
}
async function miningTab(ui, run, body) {
	const found = await api(`/api/runs/${encodeURIComponent(run.id)}/mining`);
	const attempts = found.attempts || [];
	if (!attempts.length) {
		put(body, h("p", {
			class: "muted",
			id: "no-mining"
		}, "No attempt of this run ran commands that mine the repository's history beyond HEAD."));
		return;
	}
	put(body, h("p", { class: "muted" }, "Commands that read history beyond HEAD (git log --all, git reflog, fetching the upstream) or name a commit by hash, tag or remote ref ", "(possible: whether that commit is an ancestor of HEAD cannot be told from the events)."), table([
		"Harness",
		"Task",
		"Attempt",
		"Patterns",
		"Events"
	].map((t) => h("th", {}, t)), attempts.map((a) => h("tr", { class: a.latest ? "mined" : "mined muted" }, h("td", {}, a.harness_name), h("td", {}, `${a.task_name} #${a.repetition}`), h("td", {}, h("a", {
		class: "attempt-link",
		href: ui.link("attempt", a.attempt_id)
	}, a.attempt_id), a.latest ? "" : " (retried)"), h("td", {}, (a.patterns || []).join(", ")), h("td", { class: "mining-events" }, ...(a.events || []).map((e) => h("div", {}, h("a", {
		class: "mining-event",
		href: ui.link("attempt", a.attempt_id, { event: e.seq })
	}, `#${e.seq}`), ` ${e.pattern}${e.possible ? " (possible)" : ""}: `, h("code", {}, e.command)))))), { id: "mining" }), found.truncated ? h("p", { class: "muted" }, "Only the first 1,000 flagged attempts are listed.") : null);
}
async function loadAttempts(run, limit) {
	let attempts = [];
	let token = "";
	do {
		const page = await api(`/api/runs/${run.id}/attempts?${q({
			page_size: 1e3,
			page_token: token
		})}`);
		attempts = attempts.concat(page.attempts);
		token = page.next_page_token;
	} while (token && attempts.length < limit);
	return {
		attempts,
		more: Boolean(token)
	};
}
async function chartsTab(ui, run, report, body) {
	const rates = report.datasets.flatMap((d) => d.rows.filter((r) => r.binary_graded).map((r) => ({
		label: report.datasets.length > 1 ? `${r.harness_name} · ${d.dataset_name}` : r.harness_name,
		value: r.passed / r.binary_graded,
		interval: wilson(r.passed, r.binary_graded),
		note: `(${r.passed}/${r.binary_graded})`
	})));
	put(body, h("p", { class: "muted" }, "Loading attempts…"));
	const { attempts, more } = await loadAttempts(run, CHART_ATTEMPTS);
	const rewards = rewardValues(attempts);
	const bins = Object.fromEntries(Object.entries(rewards).map(([k, v]) => [k, histogram(v, 10, 0, Math.max(1, ...v))]));
	const walls = {};
	const events = {};
	for (const a of attempts) {
		const point = {
			id: a.id,
			label: `${a.task_name} #${a.repetition}.${a.number} (${verdictOf(a)})`
		};
		const wall = ranWallTime(a);
		if (wall !== null) (walls[a.harness_name] ||= []).push({
			...point,
			value: wall
		});
		(events[a.harness_name] ||= []).push({
			...point,
			value: Number(a.event_count)
		});
	}
	const usage = await api(`/api/runs/${run.id}/usage`);
	const byId = Object.fromEntries(attempts.map((a) => [a.id, a]));
	const costs = {};
	for (const u of usage.attempts) {
		const a = byId[u.attempt_id];
		if (a) (costs[a.harness_name] ||= []).push({
			id: a.id,
			label: `${a.task_name} #${a.repetition}.${a.number}`,
			value: u.cost_usd
		});
	}
	const pick = (p) => ui.go({
		view: "attempt",
		id: p.id,
		params: {}
	});
	put(body, more ? h("p", { class: "muted" }, `Charts below use the first ${formatNumber(attempts.length)} attempts.`) : null, h("h2", {}, "Pass rate per harness (0/1 tasks, 95% Wilson interval)"), rates.length ? intervalBars(rates, "pass rate per harness") : h("p", { class: "muted" }, "No 0/1 tasks graded."), h("h2", {}, "Reward distribution"), Object.keys(bins).length ? histogramChart(bins, "reward distribution", (v) => v.toFixed(1)) : h("p", { class: "muted" }, "No scored attempts."), h("h2", {}, "Wall time per attempt"), Object.keys(walls).length ? stripChart(walls, "wall time per attempt", formatSeconds, pick) : h("p", {
		class: "muted",
		id: "no-wall"
	}, "No attempt of this run ran to a result (cancelled or lost attempts have no wall time)."), h("h2", {}, "Cost per attempt"), Object.keys(costs).length ? stripChart(costs, "cost per attempt (USD)", (v) => `$${v.toFixed(v < .1 ? 4 : 2)}`, pick) : h("p", {
		class: "muted",
		id: "no-cost"
	}, "No attempt of this run recorded usage events with a cost."), h("h2", {}, "Events per attempt"), stripChart(events, "events per attempt", (v) => formatNumber(Math.round(v)), pick));
	return null;
}
function attemptsTab(route, ui, run, body) {
	let params = route.params;
	const harnessSelect = h("select", {
		id: "attempt-harness",
		"aria-label": "harness"
	}, h("option", { value: "" }, "all harnesses"), [...new Set(run.cells.map((c) => c.harness_name))].map((n) => h("option", { value: n }, n)));
	const verdictSelect = h("select", {
		id: "attempt-verdict",
		"aria-label": "verdict"
	}, [
		"",
		...VERDICTS,
		"unfinished"
	].map((v) => h("option", { value: v }, v || "any verdict")));
	const search = h("input", {
		type: "search",
		id: "attempt-search",
		"aria-label": "search attempts",
		placeholder: "search: task, harness, outcome, error, ID"
	});
	const sortSelect = h("select", {
		id: "attempt-sort",
		"aria-label": "sort"
	}, [
		["", "ID order"],
		["outcome", "outcome"],
		["-duration", "longest first"],
		["duration", "shortest first"],
		["-tokens", "most tokens"],
		["tokens", "fewest tokens"],
		["-cost", "most costly"],
		["cost", "least costly"],
		["-errors", "errors first"]
	].map(([v, t]) => h("option", { value: v }, t)));
	const status = h("div", {
		class: "status-line",
		id: "attempts-status"
	});
	const scope = h("div", { class: "scope" });
	const open = (a) => ui.link("attempt", a.id, { list: encodeList(run.id, params) });
	let attempts = [];
	let token = "";
	let done = false;
	let generation = 0;
	const list = virtualList({
		rowClass: "attempt-row",
		renderRow: (a) => h("div", { dataset: {
			key: a.id,
			verdict: verdictOf(a)
		} }, h("span", {}, h("a", {
			class: "attempt-link",
			href: open(a),
			dataset: { verdict: verdictOf(a) }
		}, a.id)), h("span", {}, a.harness_name), h("span", { title: a.task_name }, a.task_name), h("span", {}, `#${a.repetition}.${a.number}`), h("span", {}, verdictTag(a)), h("span", {}, formatSeconds(wallTime(a))), h("span", {}, rewardsText(a.score && a.score.rewards)), h("span", { class: "num" }, formatNumber(Number(a.event_count))), h("span", { class: "num" }, a.usage && a.usage.usage_events ? formatNumber(Number(a.usage.input_tokens || 0) + Number(a.usage.output_tokens || 0)) : "–"), h("span", { class: "num" }, a.usage && a.usage.usage_events ? formatCost(a.usage.cost_usd || 0) : "–"), h("span", {}, a.outcome || a.state)),
		onNeedMore: () => more(),
		onClick: (a) => {
			location.hash = open(a);
		}
	});
	let loading = null;
	function more() {
		if (!loading) loading = load().finally(() => {
			loading = null;
		});
		return loading;
	}
	async function load() {
		if (done) return;
		const mine = generation;
		if (params.q || params.sort) {
			const found = await loadList(run.id, params, true);
			if (mine !== generation) return;
			done = true;
			list.set(found.attempts);
			status.textContent = `${formatNumber(found.attempts.length)} of ${formatNumber(found.read)}${found.more ? ` (the first ${formatNumber(LIST_CAP)})` : ""} attempts`;
			return;
		}
		const page = await api(`/api/runs/${run.id}/attempts?${q({
			page_size: ATTEMPT_PAGE,
			page_token: token,
			harness: params.harness,
			verdict: params.verdict,
			cell: params.cell,
			task: params.task,
			tag: params.tag
		})}`);
		if (mine !== generation) return;
		attempts = attempts.concat(page.attempts);
		token = page.next_page_token;
		done = !token;
		list.set(attempts);
		status.textContent = `${formatNumber(attempts.length)}${done ? "" : "+"} attempts`;
	}
	function reset() {
		generation++;
		attempts = [];
		token = "";
		done = false;
		loading = null;
		harnessSelect.value = params.harness || "";
		verdictSelect.value = params.verdict || "";
		sortSelect.value = params.sort || "";
		if (document.activeElement !== search) search.value = params.q || "";
		const cell = run.cells.find((c) => c.id === params.cell);
		put(scope, ...[
			cell ? `cell ${cell.dataset_name} / ${cell.harness_name}` : "",
			params.task ? `task ${params.task.slice(7, 19)}` : "",
			params.tag ? `tag ${params.tag}` : ""
		].filter(Boolean).map((t) => h("span", { class: "tag" }, t)), params.cell || params.task || params.tag || params.q ? h("a", { href: ui.link("run", run.id, { tab: "attempts" }) }, " all attempts") : "");
		list.set([]);
		return more();
	}
	const change = () => ui.go(withParams(route, {
		harness: harnessSelect.value,
		verdict: verdictSelect.value
	}), true);
	harnessSelect.addEventListener("change", change);
	verdictSelect.addEventListener("change", change);
	sortSelect.addEventListener("change", () => ui.go(withParams(route, { sort: sortSelect.value }), true));
	let typing = null;
	search.addEventListener("input", () => {
		clearTimeout(typing);
		typing = setTimeout(() => ui.go(withParams(route, { q: search.value.trim() }), true), 250);
	});
	put(body, h("div", { class: "toolbar" }, search, harnessSelect, verdictSelect, sortSelect, scope, status), h("div", { class: "attempt-head" }, ...[
		"Attempt",
		"Harness",
		"Task",
		"Try",
		"Verdict",
		"Wall",
		"Rewards",
		"Events",
		"Tokens",
		"Cost",
		"Outcome"
	].map((t) => h("span", {}, t))), list.el);
	return reset().then(() => ({ update(next) {
		if ((next.params.tab || "report") !== "attempts") return false;
		route = next;
		params = next.params;
		reset();
		return true;
	} }));
}
// src/viewer.js
start({
	views: {
		runs: runsView,
		run: runView,
		attempt: attemptView,
		compare: compareView
	},
	nav: [["runs", "Runs"], ["compare", "Compare"]]
});
