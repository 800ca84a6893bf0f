// An attempt: summary cards, score, its rubric's criteria, artifacts, and its events as a
// waterfall (live while it runs). The view wires five parts: the trace (events read a page at a time, then followed
// live), the filter bar, the waterfall, the summary cards and the event detail; the route
// (filters, selected event) drives them all.
import { formatCost, formatNumber, formatOffset, formatSeconds, isErrorEvent, prettyLines, previewText, rewardsText,
  shorten, summarize, wallTime } from '../format.js';
import { api, card, h, oneAtATime, put, q, table, verdictTag, virtualList } from '../dom.js';
import { JUDGMENT_FILTERS, filterJudgments, judgmentCounts, judgmentFilter, judgmentState } from '../lib/judgments.js';
import { EVENT_TYPES, barOf, filterOf, isFiltering, matchesFilter, screenshotUrl, timeWindow, toggleType } from '../lib/trace.js';
import { buildRoute, withParams } from '../lib/route.js';
import { problem } from './common.js';
import { instructionPanel } from './instruction.js';
import { listNav } from './lists.js';
import { mathText } from './math.js';

const EVENT_PAGE = 1000;
// While a filter is on, pages are read on until this many events match (or MAX_AUTO_PAGES).
const FILTER_FILL = 40;
const MAX_AUTO_PAGES = 50;
const MAX_UNTRUNCATED = 64 * 1024 * 1024;

export async function attemptView(route, ui) {
  const id = route.id;
  const trace = new Trace(await api(`/api/attempts/${encodeURIComponent(id)}`), () => refilter());
  const { attempt } = trace;
  ui.crumbs(h('a', { href: ui.link('runs') }, 'Runs'), h('a', { href: ui.link('run', attempt.run_id) }, attempt.run_id),
    h('span', {}, `${attempt.harness_name} · ${attempt.task_name}`));
  let params = route.params;
  let filter = filterOf(params);
  let shown = [];
  const here = () => route;
  const cards = h('div', { class: 'cards', id: 'summary' });
  const status = h('div', { class: 'status-line', id: 'events-status' });
  const bar = filterBar(ui, here);
  const detail = eventDetail(ui, id, here);
  const rows = waterfall({ id, onNeedMore: () => more(), onPick: (e) => ui.go(withParams(route, { event: e.seq })) });
  const layout = h('div', { class: 'layout' }, rows.el, detail.el);
  const rubric = rubricPanel(attempt.score);
  const judged = judgesPanel(attempt);

  const more = oneAtATime(async () => {
    if (trace.done) return;
    let pages = 0;
    do {
      await trace.readPage();
      pages++;
      refilter();
    } while (!trace.done && isFiltering(filter) && shown.length < FILTER_FILL && pages < MAX_AUTO_PAGES);
    if (trace.done) trace.follow();
  });
  function refilter() {
    shown = trace.events.filter((e) => matchesFilter(e, filter, isErrorEvent));
    const span = timeWindow(shown, wallTime(trace.attempt), isFiltering(filter));
    rows.set(shown, span, params.event ? Number(params.event) : null);
    summaryCards(cards, trace);
    status.textContent = statusText(trace, shown, filter, span);
  }
  function apply(next) {
    route = next;
    params = next.params;
    filter = filterOf(params);
    bar.show(filter, params, trace.events);
    refilter();
    layout.className = params.event ? 'layout with-detail' : 'layout';
    rubric.show(route);
    judged.show(route);
    detail.show(params.event ? Number(params.event) : null, trace.events);
  }

  ui.main(...attemptHeader(attempt), listNav(ui, route, attempt), instructionPanel(id), cards, scoreLine(attempt.score, ui), rubric.el, judged.el, artifactsLine(attempt), bar.el,
    status, layout);
  apply(route);
  await more();
  bar.show(filter, params, trace.events);
  const selected = params.event ? shown.findIndex((e) => e.seq === Number(params.event)) : -1;
  if (selected >= 0) rows.scrollTo(selected);
  return { update: apply, close: () => trace.close() };
}

// --- the trace: recorded events a page at a time, then new ones as they happen ------------

class Trace {
  constructor(attempt, onChange) {
    this.attempt = attempt;
    this.onChange = onChange;
    this.events = [];
    this.token = '';
    this.done = false;
    this.live = null;
  }

  get following() {
    return Boolean(this.live) && this.attempt.state !== 'finished';
  }

  async readPage() {
    const page = await api(`/api/attempts/${this.attempt.id}/events?${q({ page_size: EVENT_PAGE, page_token: this.token })}`);
    this.events = this.events.concat(page.events);
    this.token = page.next_page_token;
    this.done = !this.token;
  }

  // Once every recorded event is read, a running attempt's new events arrive over SSE; at
  // its end the attempt is read again for its outcome and score.
  follow() {
    if (this.live || this.attempt.state === 'finished') return;
    const last = this.events.length ? this.events[this.events.length - 1].seq : 0;
    this.live = new EventSource(`/api/attempts/${this.attempt.id}/events/stream?after=${last}`);
    this.live.addEventListener('event', (m) => { this.events.push(JSON.parse(m.data)); this.onChange(); });
    this.live.addEventListener('end', async () => {
      this.live.close();
      this.attempt = await api(`/api/attempts/${this.attempt.id}`);
      this.onChange();
    });
  }

  close() {
    if (this.live) this.live.close();
  }
}

function statusText(trace, shown, filter, span) {
  const { attempt, events, done } = trace;
  return `${formatNumber(shown.length)} of ${formatNumber(events.length)}${done ? '' : ` (of ${formatNumber(attempt.event_count)})`} events`
    + (isFiltering(filter) ? ` · window ${formatOffset(span[0])} – ${formatOffset(span[1])}` : '')
    + (done ? '' : ' · scroll to load more') + (trace.following ? ' · live' : '');
}

// --- what the attempt is: title, score and artifacts ---------------------------------------

function attemptHeader(attempt) {
  return [
    h('h1', {}, `Attempt ${attempt.id} `, verdictTag(attempt)),
    h('p', { class: 'muted' }, `${attempt.harness_name} (${attempt.model || 'no model'}) on ${attempt.task_name} (${attempt.dataset_name}), repetition ${attempt.repetition}, try ${attempt.number}`,
      attempt.agent_version ? ` · agent ${attempt.agent_version}` : '',
      attempt.error ? h('span', { class: 'status-error' }, ` · ${shorten(attempt.error, 300)}`) : null),
    problem(attempt),
  ];
}

function scoreLine(score, ui) {
  if (!score) return null;
  const scorers = ui.link('scorers', '', { fingerprint: score.scorer_fingerprint });
  const fingerprint = shorten(score.scorer_fingerprint || '', 23);
  return h('p', { class: 'muted' }, `Scored by ${score.scorer || '–'}${score.judge_model ? ` (judge model ${score.judge_model})` : ''} · `,
    scorers ? h('a', { href: scorers }, fingerprint) : h('span', { class: 'mono' }, fingerprint),
    score.error ? h('span', { class: 'status-error' }, ` · ${shorten(score.error, 300)}`) : null);
}

// The criteria the task's rubric judged (score.judgments), filtered by the route's `judgments`.
function rubricPanel(score) {
  const list = (score && score.judgments) || [];
  const el = h('section', { class: 'rubric', id: 'rubric' });
  function show(route) {
    if (!list.length) return;
    const filter = judgmentFilter(route.params);
    put(el, h('h2', {}, `Rubric (${list.length} criteria)`), filterTabs(route, list, filter), judgmentsTable(list, filter));
  }
  return { el, show };
}

function filterTabs(route, list, filter) {
  const counts = judgmentCounts(list);
  return h('nav', { class: 'tabs' }, JUDGMENT_FILTERS.map((f) => h('a', {
    href: buildRoute(withParams(route, { judgments: f === 'all' ? '' : f })),
    class: f === filter ? 'tab on' : 'tab', 'aria-current': f === filter ? 'page' : null,
  }, `${f} (${counts[f]})`)));
}

function judgmentsTable(list, filter) {
  const rows = filterJudgments(list, filter).map((j) => {
    const state = judgmentState(j);
    return h('tr', { class: `judgment judgment-${state}` },
      h('td', {}, j.judge || '–'), h('td', {}, j.criterion || '–', j.description ? h('div', { class: 'muted' }, shorten(j.description, 200)) : null),
      h('td', {}, j.error ? '–' : formatNumber(Number(j.value || 0))),
      h('td', { class: state === 'error' ? 'verdict-errored' : `verdict-${state}` }, state),
      h('td', {}, j.expected || ''), h('td', {}, j.observed || ''),
      h('td', {}, shorten(j.error || j.reason || '', 400)), h('td', {}, j.judge_model || '–'));
  });
  return table(['judge', 'criterion', 'value', '', 'expected', 'observed', 'reason', 'model'], rows, { class: 'judgments' });
}

// HEMRA judges' scores of the attempt (newest first, each judging kept): the score, each
// criterion (the same filter as the rubric's), and every model call with its request and
// response as recorded, byte for byte.
function judgesPanel(attempt) {
  const scores = attempt.judge_scores || [];
  const el = h('section', { class: 'judge-scores', id: 'judge-scores' });
  function show(route) {
    if (!scores.length) return;
    const filter = judgmentFilter(route.params);
    put(el, h('h2', {}, `HEMRA judges (${scores.length} ${scores.length === 1 ? 'judging' : 'judgings'})`),
      ...scores.map((score, i) => judgeScore(attempt, score, i, route, filter)));
  }
  return { el, show };
}

function judgeScore(attempt, score, index, route, filter) {
  const list = score.judgments || [];
  const failed = score.state === 'SCORE_STATE_SCORER_FAILED';
  const value = failed ? 'judge failed (counted apart, never 0)' : `score ${formatNumber(Number((score.rewards || {})[score.judge] || 0))}`;
  return h('div', { class: 'judge-score', 'data-judge': score.judge },
    h('h3', {}, `${score.judge} `, h('span', { class: 'mono muted' }, shorten(score.scorer_fingerprint || '', 23)),
      index ? h('span', { class: 'muted' }, ' · earlier judging') : null),
    h('p', { class: failed ? 'status-error' : 'muted' }, `${value} · model ${score.judge_model || '–'}`,
      score.error ? ` · ${shorten(score.error, 300)}` : ''),
    list.length ? [filterTabs(route, list, filter), judgmentsTable(list, filter)] : null,
    judgeCalls(attempt, score.judge_calls || []));
}

function judgeCalls(attempt, calls) {
  const base = `/api/attempts/${attempt.id}/judge-calls`;
  const body = (digest, label) => digest ? h('a', { href: `${base}/${encodeURIComponent(digest)}`, download: '' }, label) : '–';
  const rows = calls.map((c) => h('tr', { class: `judge-call call-${c.outcome || 'ok'}` },
    h('td', { class: 'num' }, c.sample || 0), h('td', { class: 'num' }, c.retry || 0), h('td', {}, c.criterion || 'all'),
    h('td', { class: 'num' }, c.http_status || '–'), h('td', {}, c.outcome || 'ok'), h('td', {}, c.served_model || '–'),
    h('td', { class: 'num' }, `${formatNumber(Number(c.latency_ms || 0))} ms`),
    h('td', { class: 'num' }, `${formatNumber(Number(c.input_tokens || 0))} / ${formatNumber(Number(c.output_tokens || 0))}`),
    h('td', {}, body(c.request_blob_digest, 'request'), ' · ', body(c.response_blob_digest, 'response')),
    h('td', {}, shorten(c.error || '', 300))));
  return h('details', { class: 'judge-calls' }, h('summary', {}, `${calls.length} model ${calls.length === 1 ? 'call' : 'calls'}`),
    table(['sample', 'try', 'criterion', 'status', 'outcome', 'served model', 'latency', 'tokens in / out', 'raw', 'error'], rows));
}

function artifactsLine(attempt) {
  const base = `/api/attempts/${attempt.id}`;
  const files = attempt.artifacts.flatMap((a, i) => [i ? ' · ' : '',
    h('a', { href: `${base}/artifacts/${a.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`, download: a.path.split('/').pop() },
      `${a.path} (${formatNumber(Number(a.size_bytes))} B)`)]);
  return h('p', { class: 'artifacts' }, 'Artifacts: ', files.length ? files : 'none',
    attempt.score && attempt.score.stdout_blob_digest ? [' · ', h('a', { href: `${base}/verifier-output`, download: '' }, 'verifier output')] : null);
}

// Counts so far; a "+" marks those that grow as more pages are read.
function summaryCards(el, trace) {
  const s = summarize(trace.attempt, trace.events);
  const partial = trace.done ? '' : '+';
  const tools = Object.entries(s.tools).map(([n, c]) => `${n} ×${c}`).join(', ');
  put(el,
    card('outcome', h('span', { class: `verdict-${s.verdict}` }, `${s.outcome || '–'} · ${s.verdict}`)),
    card('score', rewardsText(s.rewards)), card('wall time', formatSeconds(s.wall)),
    card('events', formatNumber(trace.attempt.event_count)), card('model calls', `${s.modelCalls}${partial}`),
    card('tool calls', `${s.toolCalls}${partial}`), card('commands', `${s.commands}${partial}`),
    card('errors', `${s.errors}${partial}`, s.errors ? 'verdict-failed' : ''),
    card('tokens', s.hasUsage ? `${formatNumber(s.tokens)}${partial}` : '–'),
    card('cost', s.hasUsage ? formatCost(s.cost) : '–'),
    ...(tools ? [card('tools', tools)] : []));
}

// --- the filter bar: type chips, text, errors only ------------------------------------------

function filterBar(ui, here) {
  const go = (changes) => ui.go(withParams(here(), changes), true);
  const search = h('input', { type: 'search', id: 'filter-text', placeholder: 'filter: text, name, type…', 'aria-label': 'filter text',
    oninput: () => go({ q: search.value }) });
  const errorsBox = h('input', { type: 'checkbox', id: 'filter-errors', onchange: () => go({ errors: errorsBox.checked ? '1' : '' }) });
  const chips = h('span', { class: 'chips' });
  return {
    el: h('div', { class: 'toolbar' }, chips, search, h('label', {}, errorsBox, ' errors only'),
      h('button', { id: 'filter-clear', onclick: () => go({ type: '', q: '', errors: '' }) }, 'clear')),
    // Show the filter a route asks for; the chips are the types seen so far (known ones first).
    show(filter, params, events) {
      if (search.value.toLowerCase() !== filter.text) search.value = params.q || '';
      errorsBox.checked = filter.errorsOnly;
      const types = [...new Set([...EVENT_TYPES.filter((t) => events.some((e) => e.type === t) || filter.types.includes(t)),
        ...events.map((e) => e.type)])];
      put(chips, ...types.map((t) => h('button', {
        class: `chip type-${t} ${filter.types.includes(t) ? 'on' : ''}`, dataset: { type: t }, 'aria-pressed': String(filter.types.includes(t)),
        onclick: () => go({ type: toggleType(filter.types, t).join(',') }),
      }, t)));
    },
  };
}

// --- the waterfall: one row an event, its bar on the (possibly zoomed) time window ----------

function waterfall({ id, onNeedMore, onPick }) {
  let span = [0, 1];
  const list = virtualList({ rowClass: 'event-row', renderRow: (e) => eventRow(id, e, span), onNeedMore, onClick: onPick });
  return {
    el: h('section', {}, h('div', { class: 'event-head' },
      ...['Offset', 'Duration', 'Type', 'Name', 'Status', 'Timeline', 'Preview'].map((t) => h('span', {}, t))), list.el),
    set(events, nextSpan, selected) {
      span = nextSpan;
      list.set(events, selected);
    },
    scrollTo: (index) => list.scrollTo(index),
  };
}

function eventRow(id, e, span) {
  const bar = barOf(e, span);
  const barEl = h('span', { class: `bar type-${e.type}` });
  barEl.style.left = `${(bar.left * 100).toFixed(3)}%`;
  barEl.style.width = `${(bar.width * 100).toFixed(3)}%`;
  const failed = isErrorEvent(e);
  return h('div', { class: failed ? 'failed' : '', dataset: { key: e.seq, seq: e.seq, type: e.type } },
    h('span', { class: 'mono' }, formatOffset(e.offset)), h('span', { class: 'mono' }, formatSeconds(e.duration)),
    h('span', {}, h('span', { class: `tag type-${e.type}` }, e.type)), h('span', { title: e.name }, e.name),
    h('span', { class: failed ? 'status-error' : 'status-ok' }, failed ? 'error' : 'ok'),
    h('span', { class: 'track' }, barEl),
    h('span', { class: 'preview' }, thumbnail(id, e),
      e.payload_cut ? `[${formatNumber(e.payload_bytes)} bytes] ${previewText(e.payload)}` : previewText(e.payload)));
}

// A computer-use screenshot, small in its row and whole in the event's detail.
function thumbnail(id, e) {
  const src = screenshotUrl(id, e);
  return src ? h('img', { class: 'shot-thumb', src, alt: `screenshot ${e.payload.screenshot}`, loading: 'lazy' }) : null;
}

function screenshot(id, e) {
  const src = screenshotUrl(id, e);
  return src ? h('a', { href: src, target: '_blank', rel: 'noopener' },
    h('img', { class: 'shot', src, alt: `screenshot ${e.payload.screenshot}` })) : null;
}

// --- one event in full: its fields laid out, the whole value on demand, a raw download -------

function eventDetail(ui, id, here) {
  const el = h('aside', { class: 'detail', id: 'event-detail', hidden: true });
  async function show(seq, events) {
    el.hidden = !seq;
    if (!seq) return;
    let event = events.find((e) => e.seq === seq);
    // A list event whose payload the store cut holds only its first bytes as text: ask for
    // the event itself, previewed (long strings shortened), so its fields can be laid out.
    if (!event || event.payload_cut) {
      try { event = await api(`/api/attempts/${id}/events/${seq}?preview=2000`); } catch (err) {
        put(el, h('p', { class: 'error-box' }, String(err.message))); return;
      }
    }
    // A model's message is read as text, its mathematics typeset (views/math.js).
    const body = event.type === 'message' ? mathText(prettyLines(event.payload), 'pre', { class: 'payload' })
      : h('pre', { class: 'payload' }, prettyLines(event.payload));
    const note = h('p', { class: 'muted', id: 'shortened-note' }, shortenedNote(event));
    put(el,
      h('div', { class: 'actions' }, h('strong', {}, `#${event.seq} ${event.type} · ${event.name}`),
        h('button', { onclick: () => ui.go(withParams(here(), { event: '' })), 'aria-label': 'close' }, '×')),
      h('dl', {}, h('dt', {}, 'time'), h('dd', {}, event.time || '–'), h('dt', {}, 'offset'), h('dd', {}, formatOffset(event.offset)),
        h('dt', {}, 'duration'), h('dd', {}, formatSeconds(event.duration)), h('dt', {}, 'status'), h('dd', {}, isErrorEvent(event) ? 'error' : 'ok'),
        h('dt', {}, 'size'), h('dd', {}, `${formatNumber(event.payload_bytes)} bytes`)),
      h('div', { class: 'actions' }, untruncateButton(id, event, body, note),
        h('a', { class: 'button', id: 'raw-download', href: `/api/attempts/${id}/events/${seq}/raw`, download: `${id}-event-${seq}.json` }, 'Download raw JSON')),
      note, screenshot(id, event), body);
  }
  return { el, show };
}

// Past MAX_UNTRUNCATED the page would hold the whole value: such events are shown shortened only.
function shortenedNote(event) {
  if (!event.truncated) return '';
  return event.payload_bytes <= MAX_UNTRUNCATED
    ? `Long values are shortened for display (${formatNumber(event.payload_bytes)} bytes recorded).`
    : `This event holds ${formatNumber(event.payload_bytes)} bytes: it is shown shortened only; download it raw to see everything.`;
}

function untruncateButton(id, event, body, note) {
  if (!event.truncated || event.payload_bytes > MAX_UNTRUNCATED) return null;
  const button = h('button', { id: 'load-untruncated', onclick: async () => {
    button.disabled = true;
    const full = await api(`/api/attempts/${id}/events/${event.seq}`);
    body.textContent = prettyLines(full.payload);
    button.remove();
    note.remove();
  } }, 'Load untruncated');
  return button;
}
