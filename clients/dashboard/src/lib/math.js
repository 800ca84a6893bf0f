// Mathematics in text (no DOM), unit-tested with node --test: LaTeX between \( \), \[ \],
// $$ $$ or $ $ is found here and typeset by views/math.js. A lone `$` (a price, a shell
// variable) is text: an inline $…$ opens before a non-space, closes after one, is not
// followed by a digit and stays on one line; `\$` is a dollar sign.

const DELIMITERS = [
  ['$$', '$$', true],
  ['\\[', '\\]', true],
  ['\\(', '\\)', false],
  ['$', '$', false],
];

// The text cut into [{ text }] and [{ math, display, source }] pieces, in order.
export function splitMath(text) {
  const parts = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '\\' && text[i + 1] === '$') { plain += '\\$'; i += 2; continue; }
    const found = DELIMITERS.map(([open, close, display]) => text.startsWith(open, i) && closing(text, i, open, close, display))
      .find(Boolean);
    if (!found) { plain += text[i++]; continue; }
    if (plain) parts.push({ text: plain });
    plain = '';
    parts.push(found);
    i += found.source.length;
  }
  if (plain) parts.push({ text: plain });
  return parts;
}

function closing(text, start, open, close, display) {
  const from = start + open.length;
  let end = text.indexOf(close, from);
  if (open === '$') {
    if (!text[from] || /\s/.test(text[from])) return null;
    while (end >= 0 && (text[end - 1] === '\\' || /\s/.test(text[end - 1]) || /\d/.test(text[end + 1] || ''))) end = text.indexOf(close, end + 1);
    if (end >= 0 && text.slice(from, end).includes('\n')) return null;
  }
  if (end < 0 || end === from) return null;
  return { math: text.slice(from, end).trim(), display, source: text.slice(start, end + close.length) };
}

export function hasMath(text) {
  return typeof text === 'string' && splitMath(text).some((p) => p.math !== undefined);
}
