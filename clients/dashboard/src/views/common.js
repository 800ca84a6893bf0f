// Small pieces several views share.
import { h } from '../dom.js';
import { problemText, provenanceText } from '../lib/provenance.js';

export function when(rfc3339) {
  return rfc3339 ? new Date(rfc3339).toLocaleString() : '–';
}

export function shortDigest(digest) {
  return digest ? digest.replace(/^sha256:/, '').slice(0, 12) : '–';
}

export function empty(text) {
  return h('p', { class: 'muted empty' }, text);
}

// A link to `[view, id, params]` when the app on screen has that view, else the text alone
// (the trace viewer has no catalog views: a dataset name there is not a link).
export function anchor(ui, [view, id = '', params = {}], attrs, ...children) {
  const href = ui.link(view, id, params);
  return href ? h('a', { ...attrs, href }, ...children) : h('span', attrs, ...children);
}

// What the store could not read of a run or an attempt (a row recorded before values were
// checked, or edited by hand): named, while the rest of the page shows what it could read.
export function problem(record) {
  const text = problemText(record);
  return text ? h('p', { class: 'flags problem', role: 'status' }, text) : null;
}

// Where an import's results came from and how they came into this store.
export function provenance(run) {
  const text = provenanceText(run, when);
  return text ? h('p', { class: 'muted provenance', id: 'provenance' }, text) : null;
}
