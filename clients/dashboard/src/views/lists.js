// A run's attempts as one list (the attempts tab searched or sorted, and Prev / Next on an
// attempt page): every attempt matching the server's filters, read a page at a time up to
// LIST_CAP, then searched and sorted in the page (lib/attemptlist.js).
import { api, h, put, q } from '../dom.js';
import { SERVER_FILTERS, arrange, decodeList, neighbours } from '../lib/attemptlist.js';
import { formatNumber } from '../format.js';

export const LIST_CAP = 5000;
// Lists read lately, by run and server filters: stepping through a list reads it once.
const read = new Map();

async function readAll(runId, params) {
  let attempts = [];
  let token = '';
  do {
    const page = await api(`/api/runs/${encodeURIComponent(runId)}/attempts?${q({ page_size: 1000, page_token: token,
      ...Object.fromEntries(SERVER_FILTERS.map((k) => [k, params[k]])) })}`);
    attempts = attempts.concat(page.attempts);
    token = page.next_page_token;
  } while (token && attempts.length < LIST_CAP);
  return { attempts, more: Boolean(token) };
}

// { attempts (searched and sorted), more (the cap was reached), read (how many were read) };
// `fresh` reads again rather than reuse a list read before (the attempts tab always does).
export async function loadList(runId, params, fresh = false) {
  const key = JSON.stringify([runId, ...SERVER_FILTERS.map((k) => params[k] || '')]);
  if (fresh || !read.has(key)) {
    read.set(key, readAll(runId, params).catch((err) => { read.delete(key); throw err; }));
    if (read.size > 8) read.delete(read.keys().next().value);
  }
  const { attempts, more } = await read.get(key);
  return { attempts: arrange(attempts, params), more, read: attempts.length };
}

// Prev / Next through the list an attempt was opened from (its `list` param), and back to it.
export function listNav(ui, route, attempt) {
  const el = h('nav', { class: 'list-nav', id: 'list-nav', 'aria-label': 'attempts of the list' });
  const text = route.params.list;
  if (!text) return el;
  const { run, params } = decodeList(text);
  const back = ui.link('run', run, { tab: 'attempts', ...params });
  const step = (a, label, rel) => (a
    ? h('a', { class: `button ${rel}`, rel, href: ui.link('attempt', a.id, { list: text }) }, label)
    : h('span', { class: `button disabled ${rel}`, 'aria-disabled': 'true' }, label));
  loadList(run, params).then(({ attempts, more }) => {
    const { index, prev, next } = neighbours(attempts, attempt.id);
    put(el, step(prev, '‹ Prev', 'prev'),
      h('span', { class: 'position' }, index < 0 ? 'not in the list' : `${formatNumber(index + 1)} of ${formatNumber(attempts.length)}${more ? '+' : ''}`),
      step(next, 'Next ›', 'next'), back ? h('a', { class: 'back', href: back }, 'the list') : null);
  }).catch(() => put(el, back ? h('a', { class: 'back', href: back }, 'the list') : null));
  return el;
}
