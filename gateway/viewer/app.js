// HEMRA trace viewer: runs -> a run's report and attempts -> an attempt's events as a
// waterfall. Plain ES modules, no build step; all state lives in the location hash.
import { attemptView } from './attempt.js';
import { api, card, h, oneAtATime, put, q, verdictTag, virtualList } from './dom.js';
import { formatNumber, formatPercent, formatSeconds, rewardsText, verdictOf, wallTime } from './format.js';
import { buildHash, parseHash, withParams } from './state.js';

const ATTEMPT_PAGE = 500;
const main = document.getElementById('main');
const crumbs = document.getElementById('crumbs');
let current = null; // { key, update(route) } of the view on screen

// --- page helpers ----------------------------------------------------------------------

function setCrumbs(...items) {
  crumbs.replaceChildren(...items.flatMap((item, i) => [i ? h('span', {}, '›') : null, item]).filter(Boolean));
}

function showError(err) {
  main.replaceChildren(h('p', { class: 'error-box', role: 'alert' }, String(err.message || err)));
}

function navigate(route, replace = false) {
  const hash = buildHash(route);
  if (replace) {
    history.replaceState(null, '', hash);
    route_(parseHash(hash));
  } else {
    location.hash = hash;
  }
}

// --- runs --------------------------------------------------------------------------------

async function runsView(route) {
  setCrumbs(h('span', {}, 'Runs'));
  const page = await api(`/api/runs?${q({ page_size: 50, page_token: route.params.page })}`);
  const rows = page.runs.map((run) => {
    const p = run.progress || {};
    return h('tr', { class: 'run-row' },
      h('td', {}, h('a', { class: 'run-link', href: buildHash({ view: 'run', id: run.id, params: {} }) }, run.label || run.id)),
      h('td', { class: 'mono' }, run.id),
      h('td', {}, run.kind),
      h('td', {}, run.create_time ? new Date(run.create_time).toLocaleString() : '–'),
      h('td', {}, [...new Set(run.cells.map((c) => c.harness_name))].join(', ')),
      h('td', {}, [...new Set(run.cells.map((c) => c.dataset_name))].join(', ')),
      h('td', { class: 'num' }, `${p.done || 0}/${p.trials || 0}`),
      h('td', { class: 'num verdict-passed' }, p.passed || 0),
      h('td', { class: 'num verdict-failed' }, p.failed || 0),
      h('td', { class: 'num verdict-errored' }, p.errored || 0));
  });
  main.replaceChildren(
    h('h1', {}, 'Runs'),
    page.runs.length ? h('table', { class: 'runs' },
      h('thead', {}, h('tr', {}, ...['Label', 'ID', 'Kind', 'Created', 'Harnesses', 'Datasets'].map((t) => h('th', {}, t)),
        ...['Done', 'Passed', 'Failed', 'Errored'].map((t) => h('th', { class: 'num' }, t)))),
      h('tbody', {}, rows)) : h('p', { class: 'muted' }, 'No runs yet. Start one with hemra run.'),
    h('div', { class: 'actions' },
      route.params.page ? h('a', { class: 'button', href: '#/runs' }, 'Newest') : null,
      page.next_page_token ? h('a', { class: 'button', href: buildHash({ view: 'runs', id: '', params: { page: page.next_page_token } }) }, 'Older runs') : null));
}

// --- a run: report and attempts ---------------------------------------------------------

function reportTable(dataset) {
  const rewardNames = [...new Set(dataset.rows.flatMap((r) => Object.keys(r.mean_rewards || {})))].sort();
  const passRates = dataset.rows.map((r) => (r.binary_graded ? r.passed / r.binary_graded : null));
  const best = Math.max(...passRates.filter((x) => x !== null));
  const head = ['Harness', 'Model', 'Trials', 'Graded', 'Passed', ...rewardNames.map((n) => `mean ${n}`),
    'vs baseline', 'Harness failed', 'Timed out', 'Infra', 'Scorer', 'Unfinished', 'Flags'];
  return h('table', { class: 'report' },
    h('thead', {}, h('tr', {}, head.map((t, i) => h('th', { class: i >= 2 && i < head.length - 1 ? 'num' : '' }, t)))),
    h('tbody', {}, dataset.rows.map((r, i) => {
      const vs = r.vs_baseline;
      let vsText = '–';
      if (vs && !r.is_baseline && vs.paired_tasks) {
        vsText = vs.binary_tasks ? `${formatNumber(vs.passed - vs.baseline_passed)} on ${vs.binary_tasks} tasks` : `${vs.paired_tasks} paired`;
      }
      return h('tr', { class: r.is_baseline ? 'baseline' : '' },
        h('td', {}, h('a', { href: `#/runs/${encodeURIComponent(currentRunId)}?harness=${encodeURIComponent(r.harness_name)}` }, r.harness_name)),
        h('td', {}, r.model || '–'),
        h('td', { class: 'num' }, r.trials), h('td', { class: 'num' }, r.graded),
        h('td', { class: `num ${passRates[i] === best && best !== null ? 'best' : ''}` },
          r.binary_graded ? `${r.passed}/${r.binary_graded} (${formatPercent(r.passed, r.binary_graded)})` : '–'),
        ...rewardNames.map((n) => h('td', { class: 'num' }, n in (r.mean_rewards || {}) ? formatNumber(r.mean_rewards[n]) : '–')),
        h('td', { class: 'num' }, vsText),
        ...[r.harness_failed, r.timed_out, r.infra_failed, r.scorer_failed, r.unfinished].map((n) => h('td', { class: 'num' }, n)),
        h('td', { class: 'flags' }, (r.flags || []).join('; ')));
    })));
}

let currentRunId = '';

async function runView(route) {
  const [run, report] = await Promise.all([api(`/api/runs/${encodeURIComponent(route.id)}`),
    api(`/api/runs/${encodeURIComponent(route.id)}/report`)]);
  currentRunId = run.id;
  setCrumbs(h('a', { href: '#/runs' }, 'Runs'), h('span', {}, run.label || run.id));
  const p = run.progress || {};
  const harnessSelect = h('select', { id: 'attempt-harness', 'aria-label': 'harness' },
    h('option', { value: '' }, 'all harnesses'),
    [...new Set(run.cells.map((c) => c.harness_name))].map((n) => h('option', { value: n }, n)));
  const verdictSelect = h('select', { id: 'attempt-verdict', 'aria-label': 'verdict' },
    ['', 'passed', 'failed', 'errored', 'cancelled', 'queued', 'running'].map((v) => h('option', { value: v }, v || 'any verdict')));
  const status = h('div', { class: 'status-line' });
  let attempts = [];
  let token = '';
  let done = false;
  let params = route.params;
  const list = virtualList({
    rowClass: 'attempt-row',
    renderRow: (a) => h('div', { dataset: { key: a.id, verdict: verdictOf(a) } },
      h('span', {}, h('a', { class: 'attempt-link', href: `#/attempts/${a.id}`, dataset: { verdict: verdictOf(a) } }, a.id)),
      h('span', {}, a.harness_name), h('span', { title: a.task_name }, a.task_name),
      h('span', {}, `#${a.repetition}.${a.number}`), h('span', {}, verdictTag(a)),
      h('span', {}, formatSeconds(wallTime(a))), h('span', {}, rewardsText(a.score && a.score.rewards)),
      h('span', {}, a.outcome || a.state)),
    onNeedMore: () => more(),
    onClick: (a) => navigate({ view: 'attempt', id: a.id, params: {} }),
  });
  function shown() {
    return attempts.filter((a) => (!params.harness || a.harness_name === params.harness)
      && (!params.verdict || verdictOf(a) === params.verdict));
  }
  function redraw() {
    harnessSelect.value = params.harness || '';
    verdictSelect.value = params.verdict || '';
    const rows = shown();
    list.set(rows);
    status.textContent = `${rows.length} of ${attempts.length}${done ? '' : '+'} attempts shown`;
  }
  const more = oneAtATime(load);
  async function load() {
    if (done) return;
    const page = await api(`/api/runs/${encodeURIComponent(run.id)}/attempts?${q({ page_size: ATTEMPT_PAGE, page_token: token })}`);
    attempts = attempts.concat(page.attempts);
    token = page.next_page_token;
    done = !token;
    redraw();
  }
  const change = () => navigate(withParams(route, { harness: harnessSelect.value, verdict: verdictSelect.value }), true);
  harnessSelect.addEventListener('change', change);
  verdictSelect.addEventListener('change', change);
  main.replaceChildren(
    h('h1', {}, `Run ${run.label || run.id}`),
    h('div', { class: 'cards' }, card('trials', formatNumber(p.trials || 0)), card('done', formatNumber(p.done || 0)),
      card('passed', formatNumber(p.passed || 0), 'verdict-passed'), card('failed', formatNumber(p.failed || 0), 'verdict-failed'),
      card('errored', formatNumber(p.errored || 0), 'verdict-errored'), card('queued / running', `${p.queued || 0} / ${p.running || 0}`),
      card('report', report.complete ? 'complete' : 'partial')),
    h('h2', {}, 'Report'),
    ...report.datasets.map((d) => h('section', { class: 'dataset' }, h('h2', {}, `${d.dataset_name} (${d.tasks} tasks)`), reportTable(d))),
    h('h2', {}, 'Attempts'),
    h('div', { class: 'toolbar' }, harnessSelect, verdictSelect, status),
    h('div', { class: 'attempt-head' }, ...['Attempt', 'Harness', 'Task', 'Try', 'Verdict', 'Wall', 'Rewards', 'Outcome'].map((t) => h('span', {}, t))),
    list.el);
  await more();
  return { update(next) { params = next.params; route = next; redraw(); } };
}

// --- compare -------------------------------------------------------------------------------

async function compareView(route) {
  setCrumbs(h('span', {}, 'Compare'));
  const a = h('input', { type: 'text', id: 'side-a', placeholder: 'side a: run, run/harness, run/dataset/harness or import', value: route.params.a || '' });
  const b = h('input', { type: 'text', id: 'side-b', placeholder: 'side b', value: route.params.b || '' });
  const go = h('button', { onclick: () => navigate(withParams(route, { a: a.value, b: b.value })) }, 'Compare');
  const out = h('section', {});
  main.replaceChildren(h('h1', {}, 'Compare b − a'), h('div', { class: 'toolbar compare-form' }, a, b, go), out);
  if (!route.params.a || !route.params.b) return;
  const c = await api(`/api/compare?${q({ a: route.params.a, b: route.params.b })}`);
  const rows = [['side', c.a.label, c.b.label]];
  if (c.binary_tasks) {
    rows.push(['pass rate (0/1 tasks)', `${formatNumber(c.a_passed)}/${c.binary_tasks}`, `${formatNumber(c.b_passed)}/${c.binary_tasks}`]);
    rows.push(['b − a', '', `${(100 * c.delta).toFixed(1)} pts [${(100 * c.delta_interval.low).toFixed(1)}, ${(100 * c.delta_interval.high).toFixed(1)}]`]);
  }
  for (const d of c.reward_deltas) rows.push([`mean ${d.name} (${d.tasks} tasks)`, formatNumber(d.a_mean), formatNumber(d.b_mean)]);
  out.replaceChildren(
    h('table', {}, h('tbody', {}, rows.map((r) => h('tr', {}, r.map((x) => h('td', {}, x)))))),
    h('p', {}, `flipped to pass: ${c.flipped_to_pass.join(', ') || '–'}`), h('p', {}, `flipped to fail: ${c.flipped_to_fail.join(', ') || '–'}`),
    h('h2', {}, 'Tasks'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Task', 'a', 'b'].map((t) => h('th', {}, t)))),
      h('tbody', {}, c.tasks.map((t) => h('tr', {}, h('td', {}, t.task_name),
        h('td', {}, t.binary ? formatNumber(t.a_pass_rate) : rewardsText(t.a_means)),
        h('td', {}, t.binary ? formatNumber(t.b_pass_rate) : rewardsText(t.b_means)))))),
    ...c.flags.map((f) => h('p', { class: 'flags' }, `! ${f}`)));
}

// --- router --------------------------------------------------------------------------------

// What the attempt view, shared with the dashboard, asks of this app.
const ui = {
  main: (...children) => put(main, ...children),
  crumbs: setCrumbs,
  go: navigate,
  link: (view, id = '', params = {}) => (['runs', 'run', 'attempt', 'compare'].includes(view) ? buildHash({ view, id, params }) : null),
};

const VIEWS = { runs: runsView, run: runView, attempt: (route) => attemptView(route, ui), compare: compareView };

async function route_(route) {
  const key = `${route.view}:${route.id}:${route.view === 'runs' || route.view === 'compare' ? JSON.stringify(route.params) : ''}`;
  if (current && current.key === key && current.update) {
    current.update(route);
    return;
  }
  if (current && current.close) current.close();
  current = { key };
  const mine = current;
  try {
    const controller = await VIEWS[route.view](route);
    if (mine === current && controller) Object.assign(current, controller);
  } catch (err) {
    if (mine === current) showError(err);
  }
}

window.addEventListener('hashchange', () => route_(parseHash(location.hash)));
if (!location.hash) history.replaceState(null, '', '#/runs');
route_(parseHash(location.hash));
