// Numbers behind the dashboard's tables and charts (no DOM), unit-tested with node --test.

// Wilson score interval of a pass rate (95% by default): [low, high], or null with no trials.
export function wilson(passed, n, z = 1.959964) {
  if (!n) return null;
  const p = passed / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

// Equal-width bins over [lo, hi] (0..1 for rewards by default): [{ lo, hi, count }].
export function histogram(values, bins = 10, lo = null, hi = null) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (!finite.length) return [];
  lo = lo ?? Math.min(...finite);
  hi = hi ?? Math.max(...finite);
  if (hi <= lo) hi = lo + 1;
  const width = (hi - lo) / bins;
  const out = Array.from({ length: bins }, (_, i) => ({ lo: lo + i * width, hi: lo + (i + 1) * width, count: 0 }));
  for (const v of finite) {
    const i = Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / width)));
    out[i].count++;
  }
  return out;
}

// A heat class for a 0..1 value: heat-0 .. heat-10 (colours live in the stylesheet: the CSP
// allows no inline styles).
export function heatClass(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '';
  return `heat-${Math.round(Math.min(1, Math.max(0, value)) * 10)}`;
}

// A criterion cell's text: "83.3%" for rates, "0.742" for rewards, "12.4s" for seconds.
export function cellText(cell, unit) {
  if (!cell || !cell.samples) return '–';
  if (unit === 'rate') return `${(100 * cell.value).toFixed(1)}%`;
  if (unit === 'seconds') return cell.value < 60 ? `${cell.value.toFixed(1)}s` : `${(cell.value / 60).toFixed(1)}m`;
  if (unit === 'tokens') return Math.round(cell.value).toLocaleString('en-US');
  return Number(cell.value.toFixed(3)).toString();
}

// "n=12 · 09-14": a cell's sample count and its source's date (month-day, UTC).
export function sampleNote(cell, source) {
  const date = source && source.create_time ? source.create_time.slice(5, 10) : '';
  return `n=${cell ? cell.samples : 0}${date ? ' · ' + date : ''}`;
}

// Per harness: passed and graded 0/1 attempts, from attempt records.
export function passRates(attempts) {
  const by = new Map();
  for (const a of attempts) {
    const rewards = a.score && a.score.state === 'scored' ? Object.values(a.score.rewards || {}) : null;
    if (!rewards || rewards.length !== 1 || !(rewards[0] === 0 || rewards[0] === 1)) continue;
    const row = by.get(a.harness_name) || { harness: a.harness_name, passed: 0, n: 0 };
    row.n++;
    if (rewards[0] === 1) row.passed++;
    by.set(a.harness_name, row);
  }
  return [...by.values()].map((r) => ({ ...r, rate: r.passed / r.n, interval: wilson(r.passed, r.n) }));
}

// Every reward value of scored attempts, by harness.
export function rewardValues(attempts) {
  const by = {};
  for (const a of attempts) {
    if (!a.score || a.score.state !== 'scored') continue;
    for (const v of Object.values(a.score.rewards || {})) (by[a.harness_name] ||= []).push(v);
  }
  return by;
}

// Nice axis ticks over [0, max].
export function ticks(max, count = 4) {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const step = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = 0; v <= max + nice * 1e-9; v += nice) out.push(Number(v.toPrecision(12)));
  return out;
}

// "+12.5", "-0.300": a difference with its sign, as Python's `{x:+.Nf}` writes it.
function signed(x, digits) {
  return `${x < 0 || Object.is(x, -0) ? '' : '+'}${x.toFixed(digits)}`;
}

// A report row's "vs baseline", line by line as `hemra show --report` prints it (clients/cli/render.py
// versus): percentage points of pass rate on the paired 0/1 tasks (the store's delta_points:
// one number, one unit), then each mean reward's difference on the other paired tasks.
export function versusLines(vs) {
  if (!vs || !vs.paired_tasks) return ['–'];
  const parts = [];
  if (vs.binary_tasks) parts.push(`${signed(vs.delta_points || 0, 1)} pts on ${vs.binary_tasks} tasks`);
  if (vs.numeric_tasks) {
    const base = vs.baseline_mean_rewards || {};
    for (const name of Object.keys(vs.mean_rewards || {}).sort()) parts.push(`${name} ${signed(vs.mean_rewards[name] - (base[name] || 0), 3)}`);
    parts.push(`(on ${vs.numeric_tasks} tasks)`);
  }
  return parts;
}
