// Small pieces several views share.
import { formatNumber, verdictOf } from '../../../../gateway/viewer/format.js';
import { h } from '../dom.js';

export function verdictTag(attempt) {
  const v = verdictOf(attempt);
  return h('span', { class: `verdict verdict-${v}` }, v);
}

export function rewardsText(rewards) {
  const entries = Object.entries(rewards || {});
  return entries.length ? entries.map(([k, v]) => `${k} ${formatNumber(v)}`).join(', ') : '–';
}

export function when(rfc3339) {
  return rfc3339 ? new Date(rfc3339).toLocaleString() : '–';
}

export function shortDigest(digest) {
  return digest ? digest.replace(/^sha256:/, '').slice(0, 12) : '–';
}

export function empty(text) {
  return h('p', { class: 'muted empty' }, text);
}
