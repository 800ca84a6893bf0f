// DOM helpers of the trace viewer and the dashboard: elements without innerHTML, SVG, API
// calls, and a virtual list. Sizes and positions are set through the CSSOM (element.style.x =
// ...), which the strict CSP allows; markup never carries a style attribute.
import { verdictOf } from './format.js';
import { visibleRange } from './lib/trace.js';

const SVG = 'http://www.w3.org/2000/svg';

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Replace an element's children, leaving out null, undefined and false (as h() does).
export function put(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export function h(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

export function s(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}

export class ApiError extends Error {
  constructor(status, detail) {
    super(`${status}: ${detail}`);
    this.status = status;
  }
}

export async function api(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail; } catch { /* not JSON */ }
    throw new ApiError(response.status, typeof detail === 'string' ? detail : JSON.stringify(detail));
  }
  return response.json();
}

export function q(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== '' && v !== undefined && v !== null) p.set(k, v);
  return p.toString();
}

// `load` wrapped so that calls while one is running share it instead of starting another.
export function oneAtATime(load) {
  let running = null;
  return () => {
    if (!running) running = load().finally(() => { running = null; });
    return running;
  };
}

export function card(label, value, cls = '') {
  return h('div', { class: `card ${cls}` }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
}

export function verdictTag(attempt) {
  const v = verdictOf(attempt);
  return h('span', { class: `verdict verdict-${v}` }, v);
}

export function table(head, rows, attrs = {}) {
  return h('table', attrs, h('thead', {}, h('tr', {}, head.map((t) => (t instanceof Node ? t : h('th', {}, t))))),
    h('tbody', {}, rows));
}

// A list of fixed-height rows of which only those in view exist in the page.
export function virtualList({ rowClass, rowHeight = 26, renderRow, onNeedMore, onClick }) {
  const spacer = h('div', { class: 'spacer' });
  // Not "vlist": KaTeX's vertical lists (typeset math) use that class.
  const box = h('div', { class: 'virtual-list', tabindex: '0' }, spacer);
  let items = [];
  let selectedKey = null;
  let pending = false;
  function draw() {
    spacer.style.height = `${items.length * rowHeight}px`;
    const [first, last] = visibleRange(box.scrollTop, box.clientHeight || 600, rowHeight, items.length);
    const rows = [];
    for (let i = first; i < last; i++) {
      const row = renderRow(items[i], i);
      row.classList.add('vrow', rowClass);
      row.style.top = `${i * rowHeight}px`;
      row.dataset.index = String(i);
      if (selectedKey !== null && row.dataset.key === String(selectedKey)) row.classList.add('selected');
      rows.push(row);
    }
    spacer.replaceChildren(...rows);
    if (!pending && onNeedMore && box.scrollTop + (box.clientHeight || 600) * 3 > items.length * rowHeight) {
      pending = true;
      Promise.resolve(onNeedMore()).finally(() => { pending = false; });
    }
  }
  box.addEventListener('scroll', () => requestAnimationFrame(draw));
  box.addEventListener('click', (e) => {
    const row = e.target.closest('.vrow');
    if (row && !e.target.closest('a') && onClick) onClick(items[Number(row.dataset.index)]);
  });
  return {
    el: box,
    set(next, key) { items = next; selectedKey = key ?? selectedKey; draw(); },
    scrollTo(index) { box.scrollTop = Math.max(0, index * rowHeight - box.clientHeight / 3); draw(); },
  };
}
