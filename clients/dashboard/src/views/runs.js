// Runs and imports, and one run: progress, its report, charts and its attempts.
import { formatCost, formatNumber, formatPercent, formatSeconds, ranWallTime, rewardsText, verdictOf, wallTime } from '../format.js';
import { histogramChart, intervalBars, stripChart } from '../charts.js';
import { api, card, h, put, q, table, verdictTag, virtualList } from '../dom.js';
import { sidesOf, withParams } from '../lib/route.js';
import { attemptsTaken, repairCommands, unscoredRows } from '../lib/repairs.js';
import { retriedRows, retryLines } from '../lib/retries.js';
import { encodeList } from '../lib/attemptlist.js';
import { specRows } from '../lib/spec.js';
import { loadList, LIST_CAP } from './lists.js';
import { heatClass, histogram, rewardValues, versusLines, wilson } from '../lib/stats.js';
import { anchor, empty, problem, provenance, when } from './common.js';
import { VERDICTS } from '../vocabulary.js';

const ATTEMPT_PAGE = 500;
const REFRESH_MS = 5000;
//: Charts read at most this many attempts (the first by ID), and say so.
const CHART_ATTEMPTS = 5000;

export async function runsView(route, ui, kind = '') {
  const imports = kind === 'import';
  ui.crumbs(h('span', {}, imports ? 'Imports' : 'Runs'));
  const page = await api(`/api/runs?${q({ page_size: 50, page_token: route.params.page, kind: kind || route.params.kind })}`);
  const rows = page.runs.map((run) => {
    const p = run.progress || {};
    const sides = sidesOf(run);
    return h('tr', { class: 'run-row' },
      h('td', {}, h('a', { class: 'run-link', href: ui.link('run', run.id) }, run.label || run.id), problem(run)),
      h('td', { class: 'mono' }, run.id),
      h('td', {}, run.kind === 'import' ? `import (${run.import_format})` : run.kind === 'loose' ? 'loose attempt' : 'run'),
      h('td', {}, when(run.create_time)),
      h('td', {}, [...new Set(run.cells.map((c) => c.harness_name))].join(', ')),
      h('td', {}, [...new Set(run.cells.map((c) => c.dataset_name))].map((d, i) => [i ? ', ' : '', anchor(ui, ['dataset', d], {}, d)])),
      h('td', { class: 'num' }, `${p.done || 0}/${p.trials || 0}`),
      h('td', { class: 'num verdict-passed' }, p.passed || 0),
      h('td', { class: 'num verdict-failed' }, p.failed || 0),
      h('td', { class: 'num verdict-errored' }, p.errored || 0),
      h('td', {}, sides.length ? h('a', { href: ui.link('compare', '', { a: sides[0].ref }) }, 'compare…') : ''));
  });
  const filter = imports ? null : h('select', { id: 'runs-kind', 'aria-label': 'kind', onchange: (e) => ui.go(withParams(route, { kind: e.target.value, page: '' })) },
    [['', 'runs, imports and loose attempts'], ['run', 'runs only'], ['import', 'imports only'], ['loose', 'loose attempts only']].map(([v, t]) => h('option', { value: v, selected: (route.params.kind || '') === v }, t)));
  ui.main(
    h('h1', {}, imports ? 'Imports' : 'Runs'),
    filter ? h('div', { class: 'toolbar' }, filter) : null,
    page.runs.length ? table(['Label', 'ID', 'Kind', 'Created', 'Harnesses', 'Datasets', ...['Done', 'Passed', 'Failed', 'Errored'].map((t) => h('th', { class: 'num' }, t)), ''],
      rows, { class: 'runs' })
      : empty(imports ? 'No imports yet. Bring results in with hemra import.' : 'No runs yet. Start one with hemra run.'),
    h('div', { class: 'actions' },
      route.params.page ? h('a', { class: 'button', href: ui.link(route.view, '', { ...route.params, page: '' }) }, 'Newest') : null,
      page.next_page_token ? h('a', { class: 'button', id: 'older', href: ui.link(route.view, '', { ...route.params, page: page.next_page_token }) }, 'Older') : null));
}

function reportTable(ui, run, dataset) {
  const rewardNames = [...new Set(dataset.rows.flatMap((r) => Object.keys(r.mean_rewards || {})))].sort();
  const passRates = dataset.rows.map((r) => (r.binary_graded ? r.passed / r.binary_graded : null));
  const best = Math.max(...passRates.filter((x) => x !== null));
  const head = ['Harness', 'Model', 'Trials', 'Graded', 'Passed', ...rewardNames.map((n) => `mean ${n}`),
    'vs baseline', 'Harness failed', 'Timed out', 'Verifier fault', 'Infra', 'Retried', 'Scorer', 'Unfinished', 'Mined history', 'Flags'];
  const cellOf = (harness) => run.cells.find((c) => c.dataset_name === dataset.dataset_name && c.harness_name === harness);
  return table(head.map((t, i) => h('th', { class: i >= 2 && i < head.length - 1 ? 'num' : '' }, t)),
    dataset.rows.map((r, i) => {
      const vsLines = r.is_baseline ? ['–'] : versusLines(r.vs_baseline);
      const cell = cellOf(r.harness_name);
      const attempts = ui.link('run', run.id, { tab: 'attempts', cell: cell ? cell.id : '', harness: cell ? '' : r.harness_name });
      return h('tr', { class: r.is_baseline ? 'baseline' : '' },
        h('td', {}, h('a', { class: 'harness-link', href: attempts }, r.harness_name), r.is_baseline ? h('span', { class: 'muted' }, ' baseline') : null),
        h('td', {}, r.model || '–'),
        h('td', { class: 'num' }, r.trials), h('td', { class: 'num' }, r.graded),
        h('td', { class: `num ${passRates[i] === best && best !== null ? 'best' : ''}` },
          r.binary_graded ? `${r.passed}/${r.binary_graded} (${formatPercent(r.passed, r.binary_graded)})` : '–'),
        ...rewardNames.map((n) => h('td', { class: 'num' }, n in (r.mean_rewards || {}) ? formatNumber(r.mean_rewards[n]) : '–')),
        h('td', { class: 'num vs-baseline' }, vsLines.map((line) => h('div', {}, line))),
        ...[r.harness_failed, r.timed_out, r.verifier_faults || 0, r.infra_failed].map((n) => h('td', { class: 'num' }, n)),
        h('td', { class: 'num retried', title: retryLines(r).join('\n') }, r.retried || 0),
        ...[r.scorer_failed, r.unfinished].map((n) => h('td', { class: 'num' }, n)),
        h('td', { class: 'num mined' }, r.history_mining
          ? h('a', { class: 'mining-link', href: ui.link('run', run.id, { tab: 'mining' }) }, r.history_mining) : 0),
        h('td', { class: 'flags' }, (r.flags || []).join('; ')));
    }), { class: 'report' });
}

// Pass rate per task tag (task.toml keywords, difficulty, category), harnesses as columns; each
// cell links to the attempts on the tag's tasks.
function tagTable(ui, run, dataset) {
  const rows = dataset.tag_rows || [];
  if (!rows.length) return null;
  const harnesses = dataset.rows.map((r) => r.harness_name);
  const byTag = new Map();
  for (const r of rows) (byTag.get(r.tag) || byTag.set(r.tag, {}).get(r.tag))[r.harness_name] = r;
  return h('details', { class: 'tags', open: true }, h('summary', {}, `Pass rate by task tag (${byTag.size})`),
    table([h('th', {}, 'Tag'), h('th', { class: 'num' }, 'Tasks'), ...harnesses.map((n) => h('th', { class: 'num' }, n))],
      [...byTag].map(([tag, cells]) => h('tr', { class: 'tag-row' }, h('th', { scope: 'row' }, tag),
        h('td', { class: 'num' }, Object.values(cells)[0].tasks || 0),
        ...harnesses.map((harness) => {
          const r = cells[harness];
          if (!r) return h('td', { class: 'num' }, '–');
          const rate = r.binary_graded ? (r.passed || 0) / r.binary_graded : null;
          return h('td', { class: `num ${rate === null ? '' : heatClass(rate)}` },
            h('a', { class: 'tag-link', href: ui.link('run', run.id, { tab: 'attempts', tag, harness }) },
              r.binary_graded ? `${r.passed || 0}/${r.binary_graded} (${formatPercent(r.passed || 0, r.binary_graded)})` : '–'));
        }))), { class: 'tag-table' }));
}

// The run's spec as the planner resolved it (defaults filled in): what ran where, under which limits.
function specNote(run, report) {
  const rows = run.kind === 'import' ? [] : specRows(run.spec, report.datasets);
  if (!rows.length) return null;
  return h('details', { class: 'spec', id: 'spec' }, h('summary', {}, 'Resolved spec'),
    h('dl', {}, rows.map(([label, text]) => [h('dt', {}, label), h('dd', { dataset: { key: label } }, text)])));
}

// Per cell, the trials left without a usable score and why, with the commands that queue them
// again to copy (the dashboard stays read-only), and the resumes and repairs already made.
function unscoredNote(run, report) {
  if (run.kind === 'import') return null;
  const rows = unscoredRows(report);
  const repairs = report.repairs || [];
  if (!rows.length && !repairs.length) return null;
  const commands = repairCommands(run, report);
  const taken = attemptsTaken(report);
  return h('section', { id: 'unscored' },
    h('h2', {}, 'Unscored trials'),
    rows.length ? table(['Dataset', 'Harness', 'Infrastructure', 'Scorer', 'Cancelled', 'Unfinished'].map((t) => h('th', {}, t)),
      rows.map(([d, r]) => h('tr', {}, h('td', {}, d.dataset_name), h('td', {}, r.harness_name),
        ...[r.infra_failed, r.scorer_failed, r.cancelled, r.unfinished].map((n) => h('td', { class: 'num' }, n || 0)))),
      { class: 'unscored' }) : null,
    commands.length ? h('p', { class: 'muted' }, 'Queue them again, as new attempts of the same trials (scored trials are never run again):') : null,
    ...commands.map((c) => h('pre', { class: 'command' }, h('code', {}, c))),
    ...repairs.map((r) => h('p', { class: 'repair' },
      `${r.kind === 'resume' ? 'Resumed' : 'Repaired'} ${when(r.create_time)}${r.requested_by ? ` by ${r.requested_by}` : ''}: `,
      `${r.queued} trials queued again (${(r.reasons || []).join(', ')})`,
      ...(r.allowed_changes || []).map((c) => h('span', { class: 'flags' }, ` · ${c.what} changed since the run, allowed`)))),
    repairs.length && taken ? h('p', { class: 'muted' }, `Trials by attempts taken: ${taken}.`) : null,
    report.unfair ? h('p', { class: 'flags', id: 'unfair' }, 'Not a fair comparison: a resume or repair ran on inputs changed since the run was planned.') : null);
}

// The attempts the infrastructure made retry, and why, under the report (none: nothing shown).
function retriesNote(report) {
  const rows = retriedRows(report);
  if (!rows.length) return null;
  return h('section', { id: 'retries' },
    h('h2', {}, 'Retried attempts'),
    h('p', { class: 'muted' }, 'Attempts lost to the infrastructure (or handed back by a worker that stopped) and run again; ',
      `each trial is retried at most ${report.max_infra_retries || 0} times for the infrastructure's failures.`),
    table(['Dataset', 'Harness', 'Retried', 'Why'].map((t) => h('th', {}, t)),
      rows.map(([d, r]) => h('tr', {},
        h('td', {}, d.dataset_name), h('td', {}, r.harness_name), h('td', { class: 'num' }, r.retried),
        h('td', { class: 'retry-reasons' }, ...retryLines(r).map((line) => h('div', {}, line))))),
      { class: 'retries' }));
}

function tabs(route, ui, names) {
  const current = route.params.tab || names[0];
  return h('nav', { class: 'tabs' }, names.map((n) => h('a', {
    href: ui.link(route.view, route.id, { ...route.params, tab: n === names[0] ? '' : n }),
    class: n === current ? 'tab on' : 'tab', 'aria-current': n === current ? 'page' : null,
  }, n)));
}

export async function runView(route, ui) {
  const ref = encodeURIComponent(route.id);
  const run = await api(`/api/runs/${ref}`);
  if (run.kind === 'loose') {  // one attempt outside any run (hemra try): no report, its attempt's page
    const only = await api(`/api/runs/${ref}/attempts?page_size=1`);
    if (only.attempts.length) return ui.go({ view: 'attempt', id: only.attempts[0].id, params: {} }, true);
  }
  const report = await api(`/api/runs/${ref}/report`);
  const listView = run.kind === 'import' ? 'imports' : 'runs';
  ui.crumbs(anchor(ui, [listView], {}, run.kind === 'import' ? 'Imports' : 'Runs'), h('span', {}, run.label || run.id));
  const p = run.progress || {};
  const tab = route.params.tab || 'report';
  const body = h('section', { id: `tab-${tab}` });
  ui.main(
    h('h1', {}, `${run.kind === 'import' ? 'Import' : 'Run'} ${run.label || run.id}`),
    h('p', { class: 'muted' }, `${run.id} · ${when(run.create_time)}`, run.source ? ` · from ${run.source}` : '',
      run.spec && run.spec.baseline ? ` · baseline ${run.spec.baseline}` : ''),
    provenance(run),
    problem(run),
    h('div', { class: 'cards' }, card('trials', formatNumber(p.trials || 0)), card('done', formatNumber(p.done || 0)),
      card('passed', formatNumber(p.passed || 0), 'verdict-passed'), card('failed', formatNumber(p.failed || 0), 'verdict-failed'),
      card('errored', formatNumber(p.errored || 0), 'verdict-errored'), card('cancelled', formatNumber(p.cancelled || 0)),
      card('queued / running', `${p.queued || 0} / ${p.running || 0}`), card('report', report.complete ? 'complete' : 'partial')),
    tabs(route, ui, ['report', 'charts', 'attempts', 'mining']),
    body);
  if (tab === 'attempts') return attemptsTab(route, ui, run, body);
  if (tab === 'mining') return miningTab(ui, run, body);
  if (tab === 'charts') return chartsTab(ui, run, report, body);
  // While attempts are queued or running, the report and progress refresh themselves.
  const going = (p.queued || 0) + (p.running || 0) > 0;
  const timer = going ? setTimeout(() => ui.refresh(), REFRESH_MS) : null;
  put(body, specNote(run, report), ...report.datasets.map((d) => h('section', { class: 'dataset' },
    h('h2', {}, anchor(ui, ['dataset', d.dataset_name], {}, d.dataset_name), ` (${d.tasks} tasks)`), reportTable(ui, run, d),
    tagTable(ui, run, d))),
  retriesNote(report),
  unscoredNote(run, report),
  h('p', {}, h('a', { class: 'button', href: ui.link('compare', '', { a: sidesOf(run)[0] ? sidesOf(run)[0].ref : '' }) }, 'Compare with…')),
  going ? h('p', { class: 'muted', id: 'live-note' }, `Attempts are still going: this page refreshes every ${REFRESH_MS / 1000} s.`) : null);
  return { close() { if (timer) clearTimeout(timer); } };
}

// Attempts whose commands mine the repository's history beyond HEAD, each event linked to the trace viewer.
async function miningTab(ui, run, body) {
  const found = await api(`/api/runs/${encodeURIComponent(run.id)}/mining`);
  const attempts = found.attempts || [];
  if (!attempts.length) {
    put(body, h('p', { class: 'muted', id: 'no-mining' }, 'No attempt of this run ran commands that mine the repository\'s history beyond HEAD.'));
    return;
  }
  put(body,
    h('p', { class: 'muted' }, 'Commands that read history beyond HEAD (git log --all, git reflog, fetching the upstream) or name a commit by hash, tag or remote ref ',
      '(possible: whether that commit is an ancestor of HEAD cannot be told from the events).'),
    table(['Harness', 'Task', 'Attempt', 'Patterns', 'Events'].map((t) => h('th', {}, t)),
      attempts.map((a) => h('tr', { class: a.latest ? 'mined' : 'mined muted' },
        h('td', {}, a.harness_name),
        h('td', {}, `${a.task_name} #${a.repetition}`),
        h('td', {}, h('a', { class: 'attempt-link', href: ui.link('attempt', a.attempt_id) }, a.attempt_id), a.latest ? '' : ' (retried)'),
        h('td', {}, (a.patterns || []).join(', ')),
        h('td', { class: 'mining-events' }, ...(a.events || []).map((e) => h('div', {},
          h('a', { class: 'mining-event', href: ui.link('attempt', a.attempt_id, { event: e.seq }) }, `#${e.seq}`),
          ` ${e.pattern}${e.possible ? ' (possible)' : ''}: `, h('code', {}, e.command)))))),
      { id: 'mining' }),
    found.truncated ? h('p', { class: 'muted' }, 'Only the first 1,000 flagged attempts are listed.') : null);
}

async function loadAttempts(run, limit) {
  let attempts = [];
  let token = '';
  do {
    const page = await api(`/api/runs/${run.id}/attempts?${q({ page_size: 1000, page_token: token })}`);
    attempts = attempts.concat(page.attempts);
    token = page.next_page_token;
  } while (token && attempts.length < limit);
  return { attempts, more: Boolean(token) };
}

async function chartsTab(ui, run, report, body) {
  const rates = report.datasets.flatMap((d) => d.rows.filter((r) => r.binary_graded).map((r) => ({
    label: report.datasets.length > 1 ? `${r.harness_name} · ${d.dataset_name}` : r.harness_name,
    value: r.passed / r.binary_graded, interval: wilson(r.passed, r.binary_graded), note: `(${r.passed}/${r.binary_graded})`,
  })));
  put(body, h('p', { class: 'muted' }, 'Loading attempts…'));
  const { attempts, more } = await loadAttempts(run, CHART_ATTEMPTS);
  const rewards = rewardValues(attempts);
  const bins = Object.fromEntries(Object.entries(rewards).map(([k, v]) => [k, histogram(v, 10, 0, Math.max(1, ...v))]));
  const walls = {};
  const events = {};
  for (const a of attempts) {
    const point = { id: a.id, label: `${a.task_name} #${a.repetition}.${a.number} (${verdictOf(a)})` };
    const wall = ranWallTime(a);
    if (wall !== null) (walls[a.harness_name] ||= []).push({ ...point, value: wall });
    (events[a.harness_name] ||= []).push({ ...point, value: Number(a.event_count) });
  }
  const usage = await api(`/api/runs/${run.id}/usage`);
  const byId = Object.fromEntries(attempts.map((a) => [a.id, a]));
  const costs = {};
  for (const u of usage.attempts) {
    const a = byId[u.attempt_id];
    if (a) (costs[a.harness_name] ||= []).push({ id: a.id, label: `${a.task_name} #${a.repetition}.${a.number}`, value: u.cost_usd });
  }
  const pick = (p) => ui.go({ view: 'attempt', id: p.id, params: {} });
  put(body, 
    more ? h('p', { class: 'muted' }, `Charts below use the first ${formatNumber(attempts.length)} attempts.`) : null,
    h('h2', {}, 'Pass rate per harness (0/1 tasks, 95% Wilson interval)'),
    rates.length ? intervalBars(rates, 'pass rate per harness') : h('p', { class: 'muted' }, 'No 0/1 tasks graded.'),
    h('h2', {}, 'Reward distribution'),
    Object.keys(bins).length ? histogramChart(bins, 'reward distribution', (v) => v.toFixed(1)) : h('p', { class: 'muted' }, 'No scored attempts.'),
    h('h2', {}, 'Wall time per attempt'),
    Object.keys(walls).length ? stripChart(walls, 'wall time per attempt', formatSeconds, pick)
      : h('p', { class: 'muted', id: 'no-wall' }, 'No attempt of this run ran to a result (cancelled or lost attempts have no wall time).'),
    h('h2', {}, 'Cost per attempt'),
    Object.keys(costs).length ? stripChart(costs, 'cost per attempt (USD)', (v) => `$${v.toFixed(v < 0.1 ? 4 : 2)}`, pick)
      : h('p', { class: 'muted', id: 'no-cost' }, 'No attempt of this run recorded usage events with a cost.'),
    h('h2', {}, 'Events per attempt'),
    stripChart(events, 'events per attempt', (v) => formatNumber(Math.round(v)), pick));
  return null;
}

function attemptsTab(route, ui, run, body) {
  let params = route.params;
  const harnessSelect = h('select', { id: 'attempt-harness', 'aria-label': 'harness' }, h('option', { value: '' }, 'all harnesses'),
    [...new Set(run.cells.map((c) => c.harness_name))].map((n) => h('option', { value: n }, n)));
  const verdictSelect = h('select', { id: 'attempt-verdict', 'aria-label': 'verdict' },
    ['', ...VERDICTS, 'unfinished'].map((v) => h('option', { value: v }, v || 'any verdict')));
  const search = h('input', { type: 'search', id: 'attempt-search', 'aria-label': 'search attempts',
    placeholder: 'search: task, harness, outcome, error, ID' });
  const sortSelect = h('select', { id: 'attempt-sort', 'aria-label': 'sort' },
    [['', 'ID order'], ['outcome', 'outcome'], ['-duration', 'longest first'], ['duration', 'shortest first'],
      ['-tokens', 'most tokens'], ['tokens', 'fewest tokens'], ['-cost', 'most costly'], ['cost', 'least costly'],
      ['-errors', 'errors first']].map(([v, t]) => h('option', { value: v }, t)));
  const status = h('div', { class: 'status-line', id: 'attempts-status' });
  const scope = h('div', { class: 'scope' });
  // Each attempt opens with its list in the URL, for Prev / Next on its page.
  const open = (a) => ui.link('attempt', a.id, { list: encodeList(run.id, params) });
  let attempts = [];
  let token = '';
  let done = false;
  let generation = 0;
  const list = virtualList({
    rowClass: 'attempt-row',
    renderRow: (a) => h('div', { dataset: { key: a.id, verdict: verdictOf(a) } },
      h('span', {}, h('a', { class: 'attempt-link', href: open(a), dataset: { verdict: verdictOf(a) } }, a.id)),
      h('span', {}, a.harness_name), h('span', { title: a.task_name }, a.task_name),
      h('span', {}, `#${a.repetition}.${a.number}`), h('span', {}, verdictTag(a)),
      h('span', {}, formatSeconds(wallTime(a))), h('span', {}, rewardsText(a.score && a.score.rewards)),
      h('span', { class: 'num' }, formatNumber(Number(a.event_count))),
      h('span', { class: 'num' }, a.usage && a.usage.usage_events ? formatNumber(Number(a.usage.input_tokens || 0) + Number(a.usage.output_tokens || 0)) : '–'),
      h('span', { class: 'num' }, a.usage && a.usage.usage_events ? formatCost(a.usage.cost_usd || 0) : '–'),
      h('span', {}, a.outcome || a.state)),
    onNeedMore: () => more(),
    onClick: (a) => { location.hash = open(a); },
  });
  // Not oneAtATime: reset() drops a load in flight (its page belongs to the old filters).
  let loading = null;
  function more() {
    if (!loading) loading = load().finally(() => { loading = null; });
    return loading;
  }
  async function load() {
    if (done) return;
    const mine = generation;
    if (params.q || params.sort) {
      // Searched or sorted: the whole list (up to LIST_CAP) is read, then arranged here.
      const found = await loadList(run.id, params, true);
      if (mine !== generation) return;
      done = true;
      list.set(found.attempts);
      status.textContent = `${formatNumber(found.attempts.length)} of ${formatNumber(found.read)}${found.more ? ` (the first ${formatNumber(LIST_CAP)})` : ''} attempts`;
      return;
    }
    const page = await api(`/api/runs/${run.id}/attempts?${q({ page_size: ATTEMPT_PAGE, page_token: token, harness: params.harness,
      verdict: params.verdict, cell: params.cell, task: params.task, tag: params.tag })}`);
    if (mine !== generation) return;
    attempts = attempts.concat(page.attempts);
    token = page.next_page_token;
    done = !token;
    list.set(attempts);
    status.textContent = `${formatNumber(attempts.length)}${done ? '' : '+'} attempts`;
  }
  function reset() {
    generation++;
    attempts = [];
    token = '';
    done = false;
    loading = null;
    harnessSelect.value = params.harness || '';
    verdictSelect.value = params.verdict || '';
    sortSelect.value = params.sort || '';
    if (document.activeElement !== search) search.value = params.q || '';
    const cell = run.cells.find((c) => c.id === params.cell);
    put(scope, ...[cell ? `cell ${cell.dataset_name} / ${cell.harness_name}` : '', params.task ? `task ${params.task.slice(7, 19)}` : '',
      params.tag ? `tag ${params.tag}` : '']
      .filter(Boolean).map((t) => h('span', { class: 'tag' }, t)),
    params.cell || params.task || params.tag || params.q ? h('a', { href: ui.link('run', run.id, { tab: 'attempts' }) }, ' all attempts') : '');
    list.set([]);
    return more();
  }
  const change = () => ui.go(withParams(route, { harness: harnessSelect.value, verdict: verdictSelect.value }), true);
  harnessSelect.addEventListener('change', change);
  verdictSelect.addEventListener('change', change);
  sortSelect.addEventListener('change', () => ui.go(withParams(route, { sort: sortSelect.value }), true));
  let typing = null;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => ui.go(withParams(route, { q: search.value.trim() }), true), 250);
  });
  put(body, h('div', { class: 'toolbar' }, search, harnessSelect, verdictSelect, sortSelect, scope, status),
    h('div', { class: 'attempt-head' }, ...['Attempt', 'Harness', 'Task', 'Try', 'Verdict', 'Wall', 'Rewards', 'Events', 'Tokens', 'Cost', 'Outcome'].map((t) => h('span', {}, t))),
    list.el);
  return reset().then(() => ({
    update(next) {
      if ((next.params.tab || 'report') !== 'attempts') return false;
      route = next;
      params = next.params;
      reset();
      return true;
    },
  }));
}
