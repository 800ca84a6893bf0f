// HEMRA trace viewer: runs -> a run's report and attempts -> an attempt's events as a
// waterfall. Plain ES modules, no build step; all state lives in the location hash.
import { formatCost, formatNumber, formatOffset, formatPercent, formatSeconds, isErrorEvent, prettyLines,
  previewText, secondsOf, shorten, summarize, verdictOf, wallTime } from './format.js';
import { EVENT_TYPES, barOf, buildHash, filterOf, isFiltering, matchesFilter, parseHash, timeWindow,
  toggleType, visibleRange, withParams } from './state.js';

const ROW = 26;
const EVENT_PAGE = 1000;
const ATTEMPT_PAGE = 500;
const MAX_AUTO_PAGES = 50;
const main = document.getElementById('main');
const crumbs = document.getElementById('crumbs');
let current = null; // { key, update(route) } of the view on screen

// --- DOM and fetch helpers --------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

async function api(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail; } catch { /* not JSON */ }
    throw new Error(`${response.status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
  return response.json();
}

function q(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== '' && v !== undefined && v !== null) p.set(k, v);
  return p.toString();
}

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

function card(label, value, cls) {
  return h('div', { class: `card ${cls || ''}` }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
}

function verdictTag(attempt) {
  const v = verdictOf(attempt);
  return h('span', { class: `verdict verdict-${v}` }, v);
}

function rewardsText(rewards) {
  const entries = Object.entries(rewards || {});
  return entries.length ? entries.map(([k, v]) => `${k} ${formatNumber(v)}`).join(', ') : '–';
}

// --- a virtual list: only the rows in view exist in the DOM --------------------------------

function virtualList({ rowClass, renderRow, onNeedMore, onClick }) {
  const spacer = h('div', { class: 'spacer' });
  const box = h('div', { class: 'vlist', tabindex: '0' }, spacer);
  let items = [];
  let selectedKey = null;
  let pending = false;
  function draw() {
    spacer.style.height = `${items.length * ROW}px`;
    const [first, last] = visibleRange(box.scrollTop, box.clientHeight || 600, ROW, items.length);
    const rows = [];
    for (let i = first; i < last; i++) {
      const row = renderRow(items[i], i);
      row.classList.add('vrow', rowClass);
      row.style.top = `${i * ROW}px`;
      row.dataset.index = String(i);
      if (selectedKey !== null && row.dataset.key === String(selectedKey)) row.classList.add('selected');
      rows.push(row);
    }
    spacer.replaceChildren(...rows);
    if (!pending && onNeedMore && box.scrollTop + (box.clientHeight || 600) * 3 > items.length * ROW) {
      pending = true;
      Promise.resolve(onNeedMore()).finally(() => { pending = false; });
    }
  }
  box.addEventListener('scroll', () => requestAnimationFrame(draw));
  box.addEventListener('click', (e) => {
    const row = e.target.closest('.vrow');
    if (row && !e.target.closest('a')) onClick(items[Number(row.dataset.index)]);
  });
  return {
    el: box,
    set(next, key) { items = next; selectedKey = key ?? selectedKey; draw(); },
    select(key) { selectedKey = key; draw(); },
    scrollTo(index) { box.scrollTop = Math.max(0, index * ROW - box.clientHeight / 3); draw(); },
    draw,
  };
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
  let loading = null;
  function more() {
    if (!loading) loading = load().finally(() => { loading = null; });
    return loading;
  }
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

// --- an attempt: summary cards and the event waterfall ----------------------------------------

async function attemptView(route) {
  const id = route.id;
  let attempt = await api(`/api/attempts/${encodeURIComponent(id)}`);
  setCrumbs(h('a', { href: '#/runs' }, 'Runs'), h('a', { href: `#/runs/${attempt.run_id}` }, attempt.run_id),
    h('span', {}, `${attempt.harness_name} · ${attempt.task_name}`));
  let events = [];
  let token = '';
  let done = false;
  let live = null;
  let params = route.params;
  let filter = filterOf(params);
  let shown = [];
  let window_ = [0, 1];
  const cards = h('div', { class: 'cards', id: 'summary' });
  const status = h('div', { class: 'status-line', id: 'events-status' });
  const detail = h('aside', { class: 'detail', id: 'event-detail', hidden: true });
  const layout = h('div', { class: 'layout' });
  const search = h('input', { type: 'search', id: 'filter-text', placeholder: 'filter: text, name, type…', 'aria-label': 'filter text' });
  const errorsBox = h('input', { type: 'checkbox', id: 'filter-errors' });
  const chips = h('span', { class: 'chips' });
  const list = virtualList({
    rowClass: 'event-row',
    renderRow: (e) => {
      const bar = barOf(e, window_);
      const barEl = h('span', { class: `bar type-${e.type}` });
      barEl.style.left = `${(bar.left * 100).toFixed(3)}%`;
      barEl.style.width = `${(bar.width * 100).toFixed(3)}%`;
      const failed = isErrorEvent(e);
      return h('div', { class: failed ? 'failed' : '', dataset: { key: e.seq, seq: e.seq, type: e.type } },
        h('span', { class: 'mono' }, formatOffset(e.offset)), h('span', { class: 'mono' }, formatSeconds(e.duration)),
        h('span', {}, h('span', { class: `tag type-${e.type}` }, e.type)), h('span', { title: e.name }, e.name),
        h('span', { class: failed ? 'status-error' : 'status-ok' }, failed ? 'error' : 'ok'),
        h('span', { class: 'track' }, barEl), h('span', { class: 'preview' }, previewText(e.payload)));
    },
    onNeedMore: () => more(),
    onClick: (e) => navigate(withParams(route, { event: e.seq })),
  });
  let loading = null;
  function more(force = false) {
    if (!loading) loading = load(force).finally(() => { loading = null; });
    return loading;
  }
  async function load(force) {
    if (done) return;
    let pages = 0;
    do {
      const page = await api(`/api/attempts/${id}/events?${q({ page_size: EVENT_PAGE, page_token: token })}`);
      events = events.concat(page.events);
      token = page.next_page_token;
      done = !token;
      pages++;
      refilter();
    } while (!done && isFiltering(filter) && shown.length < 40 && (force || pages < MAX_AUTO_PAGES));
    if (done) startLive();
  }
  function startLive() {
    if (live || attempt.state === 'finished') return;
    const last = events.length ? events[events.length - 1].seq : 0;
    live = new EventSource(`/api/attempts/${id}/events/stream?after=${last}`);
    live.addEventListener('event', (m) => { events.push(JSON.parse(m.data)); refilter(); });
    live.addEventListener('end', async () => {
      live.close();
      attempt = await api(`/api/attempts/${id}`);
      refilter();
    });
  }
  function refilter() {
    shown = events.filter((e) => matchesFilter(e, filter, isErrorEvent));
    window_ = timeWindow(shown, wallTime(attempt), isFiltering(filter));
    list.set(shown, params.event ? Number(params.event) : null);
    renderCards();
    status.textContent = `${shown.length} of ${events.length}${done ? '' : '+'} events` +
      (isFiltering(filter) ? ` · window ${formatOffset(window_[0])} – ${formatOffset(window_[1])}` : '') +
      (done ? '' : ' · scroll to load more') + (live && attempt.state !== 'finished' ? ' · live' : '');
  }
  function renderCards() {
    const s = summarize(attempt, events);
    const partial = done ? '' : '+';
    const tools = Object.entries(s.tools).map(([n, c]) => `${n} ×${c}`).join(', ');
    cards.replaceChildren(
      card('outcome', h('span', { class: `verdict-${s.verdict}` }, `${s.outcome || '–'} · ${s.verdict}`)),
      card('score', rewardsText(s.rewards)), card('wall time', formatSeconds(s.wall)),
      card('events', `${formatNumber(s.events)}${partial}`), card('model calls', `${s.modelCalls}${partial}`),
      card('tool calls', `${s.toolCalls}${partial}`, tools ? '' : ''), card('commands', `${s.commands}${partial}`),
      card('errors', `${s.errors}${partial}`, s.errors ? 'verdict-failed' : ''),
      card('tokens', s.hasUsage ? `${formatNumber(s.tokens)}${partial}` : '–'),
      card('cost', s.hasUsage ? formatCost(s.cost) : '–'),
      ...(tools ? [card('tools', tools)] : []));
  }
  function renderChips() {
    const types = [...new Set([...EVENT_TYPES.filter((t) => events.some((e) => e.type === t) || filter.types.includes(t)),
      ...events.map((e) => e.type)])];
    chips.replaceChildren(...types.map((t) => h('button', {
      class: `chip type-${t} ${filter.types.includes(t) ? 'on' : ''}`, dataset: { type: t }, 'aria-pressed': String(filter.types.includes(t)),
      onclick: () => navigate(withParams(route, { type: toggleType(filter.types, t).join(',') }), true),
    }, t)));
  }
  async function renderDetail() {
    const seq = params.event ? Number(params.event) : null;
    layout.className = seq ? 'layout with-detail' : 'layout';
    detail.hidden = !seq;
    if (!seq) return;
    let event = events.find((e) => e.seq === seq);
    if (!event) {
      try { event = await api(`/api/attempts/${id}/events/${seq}?preview=2000`); } catch (err) {
        detail.replaceChildren(h('p', { class: 'error-box' }, String(err.message))); return;
      }
    }
    const body = h('pre', { class: 'payload' }, prettyLines(event.payload));
    const loadFull = event.truncated ? h('button', { id: 'load-untruncated', onclick: async () => {
      const full = await api(`/api/attempts/${id}/events/${seq}`);
      body.textContent = prettyLines(full.payload);
      loadFull.remove();
    } }, 'Load untruncated') : null;
    detail.replaceChildren(
      h('div', { class: 'actions' }, h('strong', {}, `#${event.seq} ${event.type} · ${event.name}`),
        h('button', { onclick: () => navigate(withParams(route, { event: '' })), 'aria-label': 'close' }, '×')),
      h('dl', {}, h('dt', {}, 'time'), h('dd', {}, event.time || '–'), h('dt', {}, 'offset'), h('dd', {}, formatOffset(event.offset)),
        h('dt', {}, 'duration'), h('dd', {}, formatSeconds(event.duration)), h('dt', {}, 'status'), h('dd', {}, isErrorEvent(event) ? 'error' : 'ok'),
        h('dt', {}, 'size'), h('dd', {}, `${formatNumber(event.payload_bytes)} bytes`)),
      h('div', { class: 'actions' }, loadFull,
        h('a', { class: 'button', id: 'raw-download', href: `/api/attempts/${id}/events/${seq}/raw`, download: `${id}-event-${seq}.json` }, 'Download raw JSON')),
      event.truncated ? h('p', { class: 'muted' }, 'Long values are shortened for display.') : null,
      body);
  }
  search.addEventListener('input', () => navigate(withParams(route, { q: search.value }), true));
  errorsBox.addEventListener('change', () => navigate(withParams(route, { errors: errorsBox.checked ? '1' : '' }), true));
  const artifacts = attempt.artifacts.length ? h('p', {}, 'Artifacts: ', ...attempt.artifacts.flatMap((a, i) => [i ? ' · ' : '',
    h('a', { href: `/api/attempts/${id}/artifacts/${a.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`, download: a.path.split('/').pop() },
      `${a.path} (${formatNumber(Number(a.size_bytes))} B)`)]),
    attempt.score && attempt.score.stdout_blob_digest ? [' · ', h('a', { href: `/api/attempts/${id}/verifier-output`, download: '' }, 'verifier output')] : null) : null;
  layout.replaceChildren(h('section', {}, h('div', { class: 'event-head' },
    ...['Offset', 'Duration', 'Type', 'Name', 'Status', 'Timeline', 'Preview'].map((t) => h('span', {}, t))), list.el), detail);
  main.replaceChildren(
    h('h1', {}, `Attempt ${id}`),
    h('p', { class: 'muted' }, `${attempt.harness_name} on ${attempt.task_name} (${attempt.dataset_name}), repetition ${attempt.repetition}, try ${attempt.number}`,
      attempt.error ? h('span', { class: 'status-error' }, ` · ${shorten(attempt.error, 300)}`) : null),
    cards, artifacts,
    h('div', { class: 'toolbar' }, chips, search, h('label', {}, errorsBox, ' errors only'),
      h('button', { id: 'filter-clear', onclick: () => navigate(withParams(route, { type: '', q: '', errors: '' }), true) }, 'clear')),
    status, layout);
  function apply(next) {
    route = next;
    params = next.params;
    filter = filterOf(params);
    if (search.value.toLowerCase() !== filter.text) search.value = params.q || '';
    errorsBox.checked = filter.errorsOnly;
    refilter();
    renderChips();
    renderDetail();
  }
  apply(route);
  await more();
  renderChips();
  const selected = params.event ? shown.findIndex((e) => e.seq === Number(params.event)) : -1;
  if (selected >= 0) list.scrollTo(selected);
  return { update: apply, close() { if (live) live.close(); } };
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

const VIEWS = { runs: runsView, run: runView, attempt: attemptView, compare: compareView };

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
