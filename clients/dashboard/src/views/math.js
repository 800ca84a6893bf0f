// Text blocks with their mathematics typeset by KaTeX (npm, pinned in package.json). KaTeX,
// its stylesheet and its fonts are a chunk of their own, fetched from the page's origin only
// when a text holds math (lib/math.js), so pages without math load none of it. katex.render
// builds DOM nodes and sets their sizes through the CSSOM, which the gateway's CSP allows
// (no inline style attribute, no inline script).
import { h, put } from '../dom.js';
import { splitMath } from '../lib/math.js';

let loading = null;
function katex() {
  loading ||= Promise.all([import('katex'), import('katex/dist/katex.min.css')]).then(([module]) => module.default);
  return loading;
}

// One piece of math as a node, or its source text when KaTeX cannot parse it.
function typeset(render, part) {
  const el = h('span', { class: part.display ? 'math math-display' : 'math', title: part.source });
  try {
    render(part.math, el, { displayMode: part.display, throwOnError: true, strict: 'ignore', trust: false, maxSize: 50, maxExpand: 200 });
    return el;
  } catch {
    return part.source;
  }
}

// A `tag` element holding `text`, shown at once as written, its math typeset once KaTeX is in.
export function mathText(text, tag = 'div', attrs = {}) {
  const el = h(tag, attrs, text);
  const parts = splitMath(String(text ?? ''));
  if (!parts.some((p) => p.math !== undefined)) return el;
  katex().then((k) => {
    put(el, parts.map((p) => (p.math === undefined ? p.text : typeset(k.render, p))));
    el.classList.add('typeset');
  }).catch(() => { /* KaTeX could not load: the text stays as written */ });
  return el;
}
