// Pure formatting helpers of the trace viewer (no DOM), unit-tested with node --test.

import { STATE, VERDICT } from './vocabulary.js';

export const ELLIPSIS = '…';

export function formatSeconds(s) {
  if (s === null || s === undefined || Number.isNaN(s)) return '–';
  const sign = s < 0 ? '-' : '';
  s = Math.abs(s);
  if (s < 0.001) return `${sign}${(s * 1e6).toFixed(0)}µs`;
  if (s < 1) return `${sign}${(s * 1000).toFixed(s < 0.01 ? 2 : 0)}ms`;
  if (s < 60) return `${sign}${s.toFixed(s < 10 ? 2 : 1)}s`;
  if (s < 3600) return `${sign}${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
  return `${sign}${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

export function formatOffset(s) {
  if (s === null || s === undefined) return '–';
  return `+${formatSeconds(s)}`;
}

export function formatNumber(n) {
  if (n === null || n === undefined) return '–';
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return Number(n.toFixed(4)).toString();
}

export function formatPercent(part, whole) {
  if (!whole) return '–';
  return `${((100 * part) / whole).toFixed(1)}%`;
}

export function formatCost(usd) {
  if (usd === null || usd === undefined) return '–';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function shorten(text, n) {
  text = String(text);
  return text.length > n ? text.slice(0, n) + ELLIPSIS : text;
}

export function secondsOf(rfc3339) {
  if (!rfc3339) return null;
  const t = Date.parse(rfc3339);
  return Number.isNaN(t) ? null : t / 1000;
}

export function wallTime(attempt) {
  const start = secondsOf(attempt.start_time);
  const end = secondsOf(attempt.end_time);
  return start !== null && end !== null ? end - start : null;
}

// The wall time statistics sample (as the criterion table's row does, services/store/criteria.py):
// null for an attempt that did not run to a result. One cancelled while queued has start = end,
// and one lost to the infrastructure says nothing of the harness: no sample, never a 0.
export function ranWallTime(attempt) {
  if (attempt.state !== 'finished' || ['cancelled', 'infra_failed'].includes(attempt.outcome)) return null;
  return wallTime(attempt);
}

// Keys whose values say most about an event, previewed first.
const TEXT_KEYS = ['content', 'text', 'message', 'command', 'arguments', 'args', 'input', 'output', 'result', 'error'];

function flat(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\s+/g, ' ').trim();
  if (typeof value !== 'object') return String(value);
  return JSON.stringify(value);
}

// One line for a timeline row: the event's text values (content: ...) rather than its JSON.
export function previewText(payload, n = 200) {
  if (payload === null || payload === undefined) return '';
  if (typeof payload !== 'object' || Array.isArray(payload)) return shorten(flat(payload), n);
  const keys = Object.keys(payload);
  const ordered = [...TEXT_KEYS.filter((k) => k in payload), ...keys.filter((k) => !TEXT_KEYS.includes(k))];
  const parts = [];
  for (const key of ordered) {
    const value = payload[key];
    if (value === '' || value === null || value === undefined) continue;
    parts.push(`${key}: ${flat(value)}`);
    if (parts.join(' · ').length > n) break;
  }
  return shorten(parts.join(' · '), n);
}

// A small parser for Python literals as str() writes them: dicts, lists, tuples,
// quoted strings, numbers, True, False, None. Returns undefined when text is not one.
export function parsePython(text) {
  let i = 0;
  const s = text;
  const ws = () => { while (i < s.length && /\s/.test(s[i])) i++; };
  const fail = () => { throw new SyntaxError('not a Python literal'); };
  function str() {
    let prefix = '';
    while (/[rbuRBU]/.test(s[i])) prefix += s[i++];
    const q = s[i];
    if (q !== "'" && q !== '"') fail();
    const triple = s.slice(i, i + 3) === q.repeat(3);
    const close = triple ? q.repeat(3) : q;
    i += close.length;
    let out = '';
    const raw = /r/i.test(prefix);
    while (i < s.length) {
      if (s.slice(i, i + close.length) === close) { i += close.length; return out; }
      const c = s[i++];
      if (c === '\\' && !raw) {
        const e = s[i++];
        const map = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v' };
        if (e in map) out += map[e];
        else if (e === 'x') { out += String.fromCharCode(parseInt(s.slice(i, i + 2), 16)); i += 2; }
        else if (e === 'u') { out += String.fromCharCode(parseInt(s.slice(i, i + 4), 16)); i += 4; }
        else if (e === 'U') { out += String.fromCodePoint(parseInt(s.slice(i, i + 8), 16)); i += 8; }
        else if (e === '\n') { /* line continuation */ }
        else out += '\\' + e;
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
      if (s[i] === ',') { i++; ws(); } else if (s[i] !== closeCh) fail();
    }
    i++;
    return items;
  }
  function value() {
    ws();
    const c = s[i];
    if (c === '{') {
      i++;
      const obj = {};
      ws();
      if (s[i] === '}') { i++; return obj; }
      while (true) {
        const key = value();
        ws();
        if (s[i] !== ':') fail();
        i++;
        obj[typeof key === 'string' ? key : JSON.stringify(key)] = value();
        ws();
        if (s[i] === ',') { i++; ws(); if (s[i] === '}') { i++; return obj; } continue; }
        if (s[i] === '}') { i++; return obj; }
        fail();
      }
    }
    if (c === '[') { i++; return seq(']'); }
    if (c === '(') { i++; return seq(')'); }
    if (c === "'" || c === '"' || (/[rbuRBU]/.test(c) && /['"]/.test(s[i + 1] ?? ''))) return str();
    for (const [word, val] of [['True', true], ['False', false], ['None', null]]) {
      if (s.startsWith(word, i)) { i += word.length; return val; }
    }
    const m = /^-?(\d+\.?\d*(e[-+]?\d+)?|\.\d+|inf|nan)/i.exec(s.slice(i));
    if (m) { i += m[0].length; return Number(m[0]); }
    fail();
  }
  try {
    const result = value();
    ws();
    if (i !== s.length) return undefined;
    return result;
  } catch {
    return undefined;
  }
}

// JSON or Python-literal text inside a recorded value, parsed; undefined for plain text.
export function parseEmbedded(text) {
  if (typeof text !== 'string') return undefined;
  const t = text.trim();
  if (t.length < 2 || !'[{('.includes(t[0])) return undefined;
  try {
    const v = JSON.parse(t);
    if (v !== null && typeof v === 'object') return v;
  } catch { /* not JSON; try Python */ }
  const v = parsePython(t);
  return v !== null && typeof v === 'object' ? v : undefined;
}

function scalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'string') return v;
  return String(v);
}

// A value as indented `key: value` lines; JSON or Python text inside strings is
// laid out the same way, multi-line strings keep their lines. Nothing is reworded.
export function prettyLines(value, indent = 0) {
  const pad = '  '.repeat(indent);
  if (typeof value === 'string') {
    const inner = parseEmbedded(value);
    if (inner !== undefined) return prettyLines(inner, indent);
    return value.split('\n').map((line) => pad + line).join('\n');
  }
  if (value === null || typeof value !== 'object') return pad + scalar(value);
  const entries = Array.isArray(value) ? value.map((v, k) => [`- [${k}]`, v]) : Object.entries(value);
  if (!entries.length) return pad + (Array.isArray(value) ? '[]' : '{}');
  const lines = [];
  for (const [key, v] of entries) {
    const label = Array.isArray(value) ? key : `${key}:`;
    const nested = typeof v === 'string' ? parseEmbedded(v) : undefined;
    if (v !== null && typeof v === 'object' || nested !== undefined) {
      lines.push(`${pad}${label}`);
      lines.push(prettyLines(nested ?? v, indent + 1));
    } else if (typeof v === 'string' && v.includes('\n')) {
      lines.push(`${pad}${label} |`);
      lines.push(prettyLines(v, indent + 1));
    } else {
      lines.push(`${pad}${label} ${scalar(v)}`);
    }
  }
  return lines.join('\n');
}

// An event that failed: an error event, or one whose payload reports a failure.
export function isErrorEvent(event) {
  if (event.type === 'error') return true;
  const p = event.payload;
  if (!p || typeof p !== 'object') return false;
  if (p.is_error === true || p.timed_out === true) return true;
  if (typeof p.exit_code === 'number' && p.exit_code !== 0) return true;
  if (typeof p.error === 'string' && p.error !== '' && p.error !== ELLIPSIS) return true;
  if (p.status === 'error' || p.status === 'failed') return true;
  return false;
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

// Token and cost figures an event carries (usage events, or a usage object in a payload).
export function usageOf(event) {
  const p = event.payload;
  if (!p || typeof p !== 'object') return null;
  const u = p.usage && typeof p.usage === 'object' ? p.usage : event.type === 'usage' ? p : null;
  if (!u) return null;
  const input = num(u.input_tokens ?? u.prompt_tokens);
  const output = num(u.output_tokens ?? u.completion_tokens);
  const total = num(u.total_tokens) || input + output;
  const cost = num(u.cost_usd ?? u.cost ?? u.total_cost);
  return { input, output, total, cost };
}

// An attempt's verdict as the store decided it (passed, failed, errored, cancelled; the API sends
// it), or its state while unfinished. Never decided again here.
export function verdictOf(attempt) {
  if (attempt.state && attempt.state !== STATE.FINISHED) return attempt.state;
  return attempt.verdict || VERDICT.ERRORED;
}

// Summary cards for an attempt over the events loaded so far.
export function summarize(attempt, events) {
  const s = { outcome: attempt.outcome || attempt.state, verdict: verdictOf(attempt),
    rewards: attempt.score ? attempt.score.rewards : {}, wall: wallTime(attempt), events: events.length,
    modelCalls: 0, toolCalls: 0, commands: 0, errors: 0, tokens: 0, cost: 0, hasUsage: false, tools: {} };
  for (const e of events) {
    if (e.type === 'tool_call') { s.toolCalls++; s.tools[e.name] = (s.tools[e.name] || 0) + 1; }
    if (e.type === 'command') s.commands++;
    if (e.type === 'message' && e.payload && e.payload.role === 'assistant') s.modelCalls++;
    if (isErrorEvent(e)) s.errors++;
    const u = usageOf(e);
    if (u) {
      s.hasUsage = true;
      s.tokens += u.total;
      s.cost += u.cost;
      if (e.type === 'usage') s.modelCalls++;
    }
  }
  return s;
}

// Rewards by name as one line: "reward 1, tokens 2,300".
export function rewardsText(rewards) {
  const entries = Object.entries(rewards || {});
  return entries.length ? entries.map(([k, v]) => `${k} ${formatNumber(v)}`).join(', ') : '–';
}
