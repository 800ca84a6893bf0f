// Compare two sides task by task: b − a, with the interval, McNemar, pass@k, flips and the paired table.
import { formatNumber, rewardsText } from '../format.js';
import { deltaChart } from '../charts.js';
import { api, h, put, q, table } from '../dom.js';
import { sidesOf, withParams } from '../lib/route.js';
import { heatClass } from '../lib/stats.js';
import { empty } from './common.js';

function sidePicker(id, label, value, sides) {
  const input = h('input', { type: 'text', id, list: `${id}-options`, value: value || '', placeholder: `${label}: run, run/harness, run/dataset/harness or import`, 'aria-label': label });
  const options = h('datalist', { id: `${id}-options` }, sides.map((s) => h('option', { value: s.ref }, s.label)));
  const select = h('select', { 'aria-label': `${label} from recent runs`, id: `${id}-pick`, onchange: (e) => { input.value = e.target.value; } },
    h('option', { value: '' }, `${label}: pick…`), sides.map((s) => h('option', { value: s.ref, selected: s.ref === value }, s.label)));
  return { input, el: h('div', { class: 'side' }, select, input, options) };
}

function passAtK(side) {
  const ks = Object.keys(side.pass_at_k || {}).map(Number).sort((x, y) => x - y);
  return ks.length ? ks.map((k) => `pass@${k} ${formatNumber(side.pass_at_k[k])} · pass^${k} ${formatNumber(side.pass_hat_k[k])}`).join('; ') : '–';
}

// Rubric criteria judged on both sides of a paired task, b − a on each (see docs/judges.md).
function criteriaSection(criteria, notComparable) {
  if (!criteria.length && !notComparable.length) return null;
  const rows = criteria.map((x) => h('tr', { class: 'criterion' },
    h('td', {}, `${x.judge} / ${x.criterion}`), h('td', {}, x.judge_model || '–'), h('td', { class: 'num' }, x.tasks),
    h('td', { class: 'num' }, formatNumber(x.a_mean || 0)), h('td', { class: 'num' }, formatNumber(x.b_mean || 0)),
    h('td', { class: 'num' }, `${formatNumber(x.delta || 0)}${x.interval ? ` [${formatNumber(x.interval.low || 0)}, ${formatNumber(x.interval.high || 0)}]` : ''}`),
    h('td', { class: 'num' }, `${(100 * (x.a_pass_rate || 0)).toFixed(0)}% / ${(100 * (x.b_pass_rate || 0)).toFixed(0)}%`)));
  return [h('h2', {}, `Rubric criteria (${criteria.length})`),
    table(['Judge / criterion', 'Model', 'Tasks', 'a', 'b', 'b − a', 'Passed a / b'], rows, { class: 'criteria-table' }),
    notComparable.length ? [h('h3', {}, `Criteria not comparable (${notComparable.length})`),
      table(['Task', 'Reason'], notComparable.map((n) => h('tr', {}, h('td', {}, n.task_name), h('td', {}, n.reason))))] : null];
}

export async function compareView(route, ui) {
  ui.crumbs(h('span', {}, 'Compare'));
  const runs = (await api('/api/runs?page_size=100')).runs;
  const sides = runs.flatMap(sidesOf);
  const a = sidePicker('side-a', 'side a', route.params.a, sides);
  const b = sidePicker('side-b', 'side b', route.params.b, sides);
  const only = h('select', { id: 'task-filter', 'aria-label': 'tasks shown' },
    [['', 'all paired tasks'], ['flips', 'flipped tasks'], ['differ', 'tasks that differ']].map(([v, t]) => h('option', { value: v, selected: (route.params.only || '') === v }, t)));
  only.addEventListener('change', () => ui.go(withParams(route, { only: only.value }), true));
  const go = h('button', { id: 'compare-go', onclick: () => ui.go(withParams(route, { a: a.input.value.trim(), b: b.input.value.trim() })) }, 'Compare');
  const out = h('section', { id: 'comparison' });
  ui.main(h('h1', {}, 'Compare b − a'), h('div', { class: 'toolbar compare-form' }, a.el, b.el, go), out);
  if (!route.params.a || !route.params.b) {
    put(out, empty('Pick two sides: a run cell (run, run/harness, run/dataset/harness) or an import.'));
    return null;
  }
  const judge = route.params.judge || '';
  const c = await api(`/api/compare?${q({ a: route.params.a, b: route.params.b, judge })}`);
  const render = () => {
    const flips = new Set([...c.flipped_to_pass, ...c.flipped_to_fail]);
    const filter = route.params.only || '';
    const tasks = c.tasks.filter((t) => !filter || (filter === 'flips' ? flips.has(t.task_name)
      : (t.binary ? t.a_pass_rate !== t.b_pass_rate : JSON.stringify(t.a_means) !== JSON.stringify(t.b_means))));
    const summary = [['', c.a.label || c.a.ref, c.b.label || c.b.ref],
      ['kind', c.a.kind, c.b.kind], ['model', c.a.model || '–', c.b.model || '–'],
      ['trials (graded)', `${c.a.trials} (${c.a.graded})`, `${c.b.trials} (${c.b.graded})`],
      ['infra / scorer failed / cancelled / unfinished', `${c.a.infra_failed} / ${c.a.scorer_failed} / ${c.a.cancelled} / ${c.a.unfinished}`,
        `${c.b.infra_failed} / ${c.b.scorer_failed} / ${c.b.cancelled} / ${c.b.unfinished}`],
      ['pass@k', passAtK(c.a), passAtK(c.b)]];
    if (c.binary_tasks) summary.push(['passed (0/1 tasks)', `${formatNumber(c.a_passed)}/${c.binary_tasks}`, `${formatNumber(c.b_passed)}/${c.binary_tasks}`]);
    for (const d of c.reward_deltas) summary.push([`mean ${d.name} (${d.tasks} tasks)`, formatNumber(d.a_mean), `${formatNumber(d.b_mean)} (Δ ${formatNumber(d.delta)}${d.interval ? ` [${formatNumber(d.interval.low)}, ${formatNumber(d.interval.high)}]` : ''})`]);
    const interval = c.delta_interval;
    put(out, 
      table(['', 'a', 'b'].map((t) => h('th', {}, t)), summary.slice(1).map((r) => h('tr', {}, h('th', {}, r[0]), h('td', {}, r[1]), h('td', {}, r[2]))), { class: 'summary' }),
      c.binary_tasks ? h('div', { class: 'delta' },
        h('p', { id: 'delta-text' }, h('strong', {}, `b − a: ${(100 * c.delta).toFixed(1)} pts`),
          interval ? ` (${Math.round(100 * interval.level)}% interval ${(100 * interval.low).toFixed(1)} to ${(100 * interval.high).toFixed(1)}, ${interval.resamples} paired resamples)` : '',
          c.mcnemar ? ` · McNemar: a fail → b pass ${c.mcnemar.a_fail_b_pass}, a pass → b fail ${c.mcnemar.a_pass_b_fail}, p = ${formatNumber(c.mcnemar.p_value)}` : ''),
        interval ? deltaChart(c.delta, interval, 'b − a pass rate with its interval') : null) : null,
      h('div', { class: 'flips' },
        h('p', { class: 'verdict-passed' }, `Flipped to pass (${c.flipped_to_pass.length}): ${c.flipped_to_pass.join(', ') || '–'}`),
        h('p', { class: 'verdict-failed' }, `Flipped to fail (${c.flipped_to_fail.length}): ${c.flipped_to_fail.join(', ') || '–'}`)),
      ...c.flags.map((f) => h('p', { class: 'flags' }, `! ${f}`)),
      h('h2', {}, `Paired tasks (${c.paired_tasks})`), h('div', { class: 'toolbar' }, only, h('span', { class: 'status-line' }, `${tasks.length} shown`)),
      table(['Task', 'a trials', 'b trials', 'a', 'b', 'b − a'].map((t) => h('th', {}, t)), tasks.map((t) => {
        const flip = c.flipped_to_pass.includes(t.task_name) ? 'flip-pass' : c.flipped_to_fail.includes(t.task_name) ? 'flip-fail' : '';
        return h('tr', { class: `paired ${flip}` }, h('td', {}, t.task_name), h('td', { class: 'num' }, t.a_trials), h('td', { class: 'num' }, t.b_trials),
          h('td', { class: `num ${t.binary ? heatClass(t.a_pass_rate) : ''}` }, t.binary ? `${(100 * t.a_pass_rate).toFixed(0)}%` : rewardsText(t.a_means)),
          h('td', { class: `num ${t.binary ? heatClass(t.b_pass_rate) : ''}` }, t.binary ? `${(100 * t.b_pass_rate).toFixed(0)}%` : rewardsText(t.b_means)),
          h('td', { class: 'num' }, t.binary ? `${(100 * (t.b_pass_rate - t.a_pass_rate)).toFixed(0)} pts` : ''));
      }), { class: 'paired-table' }),
      c.not_comparable.length ? [h('h2', {}, `Not comparable (${c.not_comparable.length})`),
        table(['Task', 'Reason'], c.not_comparable.map((n) => h('tr', {}, h('td', {}, n.task_name), h('td', {}, n.reason))))] : null,
      criteriaSection(c.criteria || [], c.criteria_not_comparable || []));
  };
  render();
  return { update(next) {
    if (next.params.a !== route.params.a || next.params.b !== route.params.b || (next.params.judge || '') !== judge) return false;
    route = next;
    only.value = next.params.only || '';
    render();
    return true;
  } };
}
