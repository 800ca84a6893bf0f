// Charts drawn as SVG: bars with intervals, histograms, and per-attempt strips. Colours come
// from classes in the stylesheet.
import { formatSeconds } from './format.js';
import { s } from './dom.js';
import { ticks } from './lib/stats.js';

const W = 560;
const ROW = 24;
const LEFT = 130;
const RIGHT = 20;

function axis(y, max, format) {
  const span = W - LEFT - RIGHT;
  return s('g', { class: 'axis' }, ticks(max).map((t) => s('g', {},
    s('line', { x1: LEFT + (t / max) * span, x2: LEFT + (t / max) * span, y1: 0, y2: y, class: 'grid' }),
    s('text', { x: LEFT + (t / max) * span, y: y + 14, 'text-anchor': 'middle' }, format(t)))));
}

// Horizontal bars of rates in 0..1 with their intervals: [{ label, value, interval: [lo, hi], note }].
export function intervalBars(items, title) {
  const span = W - LEFT - RIGHT;
  const height = items.length * ROW + 24;
  const x = (v) => LEFT + v * span;
  return s('svg', { class: 'chart', viewBox: `0 0 ${W} ${height}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    axis(items.length * ROW, 1, (t) => `${Math.round(t * 100)}%`),
    items.map((item, i) => s('g', { class: 'bar-row' },
      s('text', { x: LEFT - 6, y: i * ROW + 16, 'text-anchor': 'end' }, item.label),
      s('rect', { x: LEFT, y: i * ROW + 5, width: Math.max(1, item.value * span), height: ROW - 10, class: `cbar series-${i % 6}` },
        s('title', {}, `${item.label}: ${(item.value * 100).toFixed(1)}% ${item.note || ''}`)),
      item.interval ? s('g', { class: 'interval' },
        s('line', { x1: x(item.interval[0]), x2: x(item.interval[1]), y1: i * ROW + 12, y2: i * ROW + 12 }),
        s('line', { x1: x(item.interval[0]), x2: x(item.interval[0]), y1: i * ROW + 7, y2: i * ROW + 17 }),
        s('line', { x1: x(item.interval[1]), x2: x(item.interval[1]), y1: i * ROW + 7, y2: i * ROW + 17 })) : null)));
}

// A difference with its interval on a symmetric axis around 0 (compare: b - a).
export function deltaChart(delta, interval, title) {
  const span = W - LEFT - RIGHT;
  const bound = Math.max(0.05, Math.abs(delta), Math.abs(interval.low), Math.abs(interval.high));
  const x = (v) => LEFT + ((v + bound) / (2 * bound)) * span;
  return s('svg', { class: 'chart', viewBox: `0 0 ${W} 60`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    s('line', { x1: x(0), x2: x(0), y1: 4, y2: 40, class: 'zero' }),
    s('text', { x: LEFT - 6, y: 26, 'text-anchor': 'end' }, 'b − a'),
    s('line', { x1: x(interval.low), x2: x(interval.high), y1: 22, y2: 22, class: 'interval-line' }),
    s('circle', { cx: x(delta), cy: 22, r: 5, class: delta >= 0 ? 'dot up' : 'dot down' }),
    [-bound, 0, bound].map((t) => s('text', { x: x(t), y: 54, 'text-anchor': 'middle' }, `${(t * 100).toFixed(0)} pts`)));
}

// Histogram bars: [{ lo, hi, count }] per series { name: bins }.
export function histogramChart(series, title, format = (v) => v.toFixed(1)) {
  const names = Object.keys(series);
  const bins = names.length ? series[names[0]].length : 0;
  const max = Math.max(1, ...names.flatMap((n) => series[n].map((b) => b.count)));
  const height = 160;
  const plot = height - 30;
  const slot = (W - LEFT - RIGHT) / Math.max(1, bins);
  const barW = Math.max(1, (slot - 4) / Math.max(1, names.length));
  return s('svg', { class: 'chart', viewBox: `0 0 ${W} ${height + 10 + names.length * 14}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    ticks(max).map((t) => s('g', { class: 'axis' },
      s('line', { x1: LEFT, x2: W - RIGHT, y1: plot - (t / max) * plot + 4, y2: plot - (t / max) * plot + 4, class: 'grid' }),
      s('text', { x: LEFT - 6, y: plot - (t / max) * plot + 8, 'text-anchor': 'end' }, String(t)))),
    names.map((name, k) => series[name].map((b, i) => s('rect', {
      x: LEFT + i * slot + 2 + k * barW, y: plot - (b.count / max) * plot + 4, width: barW,
      height: Math.max(0, (b.count / max) * plot), class: `cbar series-${k % 6}` },
    s('title', {}, `${name}: ${b.count} in [${format(b.lo)}, ${format(b.hi)})`)))),
    bins ? [0, bins].map((i) => s('text', { x: LEFT + i * slot, y: plot + 20, 'text-anchor': 'middle', class: 'axis' },
      format(i === 0 ? series[names[0]][0].lo : series[names[0]][bins - 1].hi))) : null,
    names.map((name, k) => s('g', { class: 'legend' },
      s('rect', { x: LEFT, y: height + k * 14, width: 10, height: 10, class: `cbar series-${k % 6}` }),
      s('text', { x: LEFT + 16, y: height + 9 + k * 14 }, name))));
}

// One dot per attempt on a value axis, a row per harness: { harness: [{ value, id, label }] }.
export function stripChart(series, title, format = formatSeconds, onPick = null) {
  const names = Object.keys(series);
  const all = names.flatMap((n) => series[n].map((p) => p.value)).filter(Number.isFinite);
  const max = Math.max(1e-9, ...all);
  const span = W - LEFT - RIGHT;
  const height = names.length * ROW + 24;
  return s('svg', { class: 'chart', viewBox: `0 0 ${W} ${height}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    axis(names.length * ROW, max, format),
    names.map((name, k) => s('g', {},
      s('text', { x: LEFT - 6, y: k * ROW + 16, 'text-anchor': 'end' }, name),
      series[name].filter((p) => Number.isFinite(p.value)).map((p, i) => s('circle', {
        cx: LEFT + (p.value / max) * span, cy: k * ROW + 12 + ((i % 5) - 2) * 2, r: 3,
        class: `dot series-${k % 6}${onPick ? ' pick' : ''}`, onclick: onPick ? () => onPick(p) : null },
      s('title', {}, `${p.label}: ${format(p.value)}`))))));
}
