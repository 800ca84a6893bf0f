// Small pieces several views share.
import { h } from '../dom.js';

export function when(rfc3339) {
  return rfc3339 ? new Date(rfc3339).toLocaleString() : '–';
}

export function shortDigest(digest) {
  return digest ? digest.replace(/^sha256:/, '').slice(0, 12) : '–';
}

export function empty(text) {
  return h('p', { class: 'muted empty' }, text);
}
