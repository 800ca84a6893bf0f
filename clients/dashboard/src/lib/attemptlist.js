// A run's list of attempts as the attempts tab shows it (no DOM), unit-tested with node --test:
// the server's filters, then text search and sorting here, over the attempts read. The list
// travels in the URL, to an attempt page too, so Prev / Next step through the same list.
import { ranWallTime, verdictOf } from '../format.js';
import { VERDICTS } from '../vocabulary.js';

// Filters the server applies (the attempts API's own names), and what this module applies.
export const SERVER_FILTERS = ['harness', 'verdict', 'cell', 'task', 'tag'];
export const LIST_PARAMS = [...SERVER_FILTERS, 'q', 'sort'];

// Sort keys by name; `-name` sorts descending. An attempt without a value (no usage reported,
// never ran) sorts last either way.
const VERDICT_ORDER = [...VERDICTS, 'queued', 'leased', 'running'];
export const SORTS = {
  outcome: (a) => `${String(VERDICT_ORDER.indexOf(verdictOf(a)) + 1).padStart(2, '0')} ${a.outcome || a.state || ''}`,
  duration: (a) => ranWallTime(a),
  tokens: (a) => (a.usage && a.usage.usage_events ? Number(a.usage.input_tokens || 0) + Number(a.usage.output_tokens || 0) : null),
  cost: (a) => (a.usage && a.usage.usage_events ? Number(a.usage.cost_usd || 0) : null),
  // Attempts with a recorded error (the harness's, the infrastructure's or the scorer's) first.
  errors: (a) => (a.error ? 1 : 0) + (verdictOf(a) === 'errored' ? 1 : 0),
};

// The text a search matches: ID, task, harness, model, verdict, outcome and error.
function haystack(a) {
  return [a.id, a.task_name, a.harness_name, a.model, verdictOf(a), a.outcome, a.error, `#${a.repetition}.${a.number}`]
    .filter(Boolean).join('\n').toLowerCase();
}

function compare(x, y) {
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;
  if (y === null || y === undefined) return -1;
  return x < y ? -1 : 1;
}

// The attempts matching every word of `q`, sorted by `sort` (ties and no sort: ID order).
export function arrange(attempts, { q = '', sort = '' } = {}) {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = words.length ? attempts.filter((a) => { const text = haystack(a); return words.every((w) => text.includes(w)); }) : attempts.slice();
  const desc = sort.startsWith('-');
  const key = SORTS[sort.replace(/^-/, '')];
  if (key) {
    const keyed = shown.map((a) => [key(a), a]);
    keyed.sort(([x, a], [y, b]) => {
      const nulls = (x === null || x === undefined) - (y === null || y === undefined);
      if (nulls) return nulls;
      return (desc ? compare(y, x) : compare(x, y)) || compare(a.id, b.id);
    });
    shown = keyed.map(([, a]) => a);
  }
  return shown;
}

// The list's params from a route's (empty ones left out), and the `list` param that carries
// them, with the run, to an attempt page: 'run=r-1&harness=nop&sort=-duration'.
export function listParams(params) {
  return Object.fromEntries(LIST_PARAMS.filter((k) => params[k]).map((k) => [k, params[k]]));
}

export function encodeList(runId, params) {
  return new URLSearchParams({ run: runId, ...listParams(params) }).toString();
}

export function decodeList(text) {
  const all = Object.fromEntries(new URLSearchParams(text || ''));
  return { run: all.run || '', params: listParams(all) };
}

// The attempts before and after `id` in `list` (null at either end), and its position.
export function neighbours(list, id) {
  const index = list.findIndex((a) => a.id === id);
  if (index < 0) return { index, prev: null, next: null };
  return { index, prev: list[index - 1] || null, next: list[index + 1] || null };
}
