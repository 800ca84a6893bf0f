// An attempt: summary cards, artifacts, score, and its events as a waterfall (live while it
// runs). One view for the trace viewer and the dashboard, which pass `ui`: main(...children),
// crumbs(...items), go(route, replace) and link(view, id, params) -> href, or null for a view
// that app does not have.
import { formatCost, formatNumber, formatOffset, formatSeconds, isErrorEvent, prettyLines, previewText, rewardsText,
  shorten, summarize, wallTime } from './format.js';
import { EVENT_TYPES, barOf, filterOf, isFiltering, matchesFilter, timeWindow, toggleType, withParams } from './state.js';
import { api, card, h, oneAtATime, put, q, verdictTag, virtualList } from './dom.js';

const EVENT_PAGE = 1000;
const MAX_AUTO_PAGES = 50;
const MAX_UNTRUNCATED = 64 * 1024 * 1024;

export async function attemptView(route, ui) {
  const id = route.id;
  let attempt = await api(`/api/attempts/${encodeURIComponent(id)}`);
  ui.crumbs(h('a', { href: ui.link('runs') }, 'Runs'), h('a', { href: ui.link('run', attempt.run_id) }, attempt.run_id),
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
        h('span', { class: 'track' }, barEl),
        h('span', { class: 'preview' }, e.payload_cut ? `[${formatNumber(e.payload_bytes)} bytes] ${previewText(e.payload)}` : previewText(e.payload)));
    },
    onNeedMore: () => more(),
    onClick: (e) => ui.go(withParams(route, { event: e.seq })),
  });
  const more = oneAtATime(load);
  async function load() {
    if (done) return;
    let pages = 0;
    do {
      const page = await api(`/api/attempts/${id}/events?${q({ page_size: EVENT_PAGE, page_token: token })}`);
      events = events.concat(page.events);
      token = page.next_page_token;
      done = !token;
      pages++;
      refilter();
    } while (!done && isFiltering(filter) && shown.length < 40 && pages < MAX_AUTO_PAGES);
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
    status.textContent = `${formatNumber(shown.length)} of ${formatNumber(events.length)}${done ? '' : ` (of ${formatNumber(attempt.event_count)})`} events`
      + (isFiltering(filter) ? ` · window ${formatOffset(window_[0])} – ${formatOffset(window_[1])}` : '')
      + (done ? '' : ' · scroll to load more') + (live && attempt.state !== 'finished' ? ' · live' : '');
  }
  function renderCards() {
    const s = summarize(attempt, events);
    const partial = done ? '' : '+';
    const tools = Object.entries(s.tools).map(([n, c]) => `${n} ×${c}`).join(', ');
    put(cards, 
      card('outcome', h('span', { class: `verdict-${s.verdict}` }, `${s.outcome || '–'} · ${s.verdict}`)),
      card('score', rewardsText(s.rewards)), card('wall time', formatSeconds(s.wall)),
      card('events', formatNumber(attempt.event_count)), card('model calls', `${s.modelCalls}${partial}`),
      card('tool calls', `${s.toolCalls}${partial}`), card('commands', `${s.commands}${partial}`),
      card('errors', `${s.errors}${partial}`, s.errors ? 'verdict-failed' : ''),
      card('tokens', s.hasUsage ? `${formatNumber(s.tokens)}${partial}` : '–'),
      card('cost', s.hasUsage ? formatCost(s.cost) : '–'),
      ...(tools ? [card('tools', tools)] : []));
  }
  function renderChips() {
    const types = [...new Set([...EVENT_TYPES.filter((t) => events.some((e) => e.type === t) || filter.types.includes(t)),
      ...events.map((e) => e.type)])];
    put(chips, ...types.map((t) => h('button', {
      class: `chip type-${t} ${filter.types.includes(t) ? 'on' : ''}`, dataset: { type: t }, 'aria-pressed': String(filter.types.includes(t)),
      onclick: () => ui.go(withParams(route, { type: toggleType(filter.types, t).join(',') }), true),
    }, t)));
  }
  async function renderDetail() {
    const seq = params.event ? Number(params.event) : null;
    layout.className = seq ? 'layout with-detail' : 'layout';
    detail.hidden = !seq;
    if (!seq) return;
    let event = events.find((e) => e.seq === seq);
    // A list event whose payload the store cut holds only its first bytes as text: ask for
    // the event itself, previewed (long strings shortened), so its fields can be laid out.
    if (!event || event.payload_cut) {
      try { event = await api(`/api/attempts/${id}/events/${seq}?preview=2000`); } catch (err) {
        put(detail, h('p', { class: 'error-box' }, String(err.message))); return;
      }
    }
    const body = h('pre', { class: 'payload' }, prettyLines(event.payload));
    // Past this size the page would hold the whole value; such events are shown shortened only.
    const whole = event.payload_bytes <= MAX_UNTRUNCATED;
    const loadFull = event.truncated && whole ? h('button', { id: 'load-untruncated', onclick: async () => {
      loadFull.disabled = true;
      const full = await api(`/api/attempts/${id}/events/${seq}`);
      body.textContent = prettyLines(full.payload);
      loadFull.remove();
      note.remove();
    } }, 'Load untruncated') : null;
    const note = h('p', { class: 'muted', id: 'shortened-note' }, !event.truncated ? ''
      : whole ? `Long values are shortened for display (${formatNumber(event.payload_bytes)} bytes recorded).`
        : `This event holds ${formatNumber(event.payload_bytes)} bytes: it is shown shortened only; download it raw to see everything.`);
    put(detail, 
      h('div', { class: 'actions' }, h('strong', {}, `#${event.seq} ${event.type} · ${event.name}`),
        h('button', { onclick: () => ui.go(withParams(route, { event: '' })), 'aria-label': 'close' }, '×')),
      h('dl', {}, h('dt', {}, 'time'), h('dd', {}, event.time || '–'), h('dt', {}, 'offset'), h('dd', {}, formatOffset(event.offset)),
        h('dt', {}, 'duration'), h('dd', {}, formatSeconds(event.duration)), h('dt', {}, 'status'), h('dd', {}, isErrorEvent(event) ? 'error' : 'ok'),
        h('dt', {}, 'size'), h('dd', {}, `${formatNumber(event.payload_bytes)} bytes`)),
      h('div', { class: 'actions' }, loadFull,
        h('a', { class: 'button', id: 'raw-download', href: `/api/attempts/${id}/events/${seq}/raw`, download: `${id}-event-${seq}.json` }, 'Download raw JSON')),
      note, body);
  }
  search.addEventListener('input', () => ui.go(withParams(route, { q: search.value }), true));
  errorsBox.addEventListener('change', () => ui.go(withParams(route, { errors: errorsBox.checked ? '1' : '' }), true));
  const score = attempt.score;
  const artifacts = h('p', { class: 'artifacts' }, 'Artifacts: ', attempt.artifacts.length ? attempt.artifacts.flatMap((a, i) => [i ? ' · ' : '',
    h('a', { href: `/api/attempts/${id}/artifacts/${a.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`, download: a.path.split('/').pop() },
      `${a.path} (${formatNumber(Number(a.size_bytes))} B)`)]) : 'none',
  score && score.stdout_blob_digest ? [' · ', h('a', { href: `/api/attempts/${id}/verifier-output`, download: '' }, 'verifier output')] : null);
  const scorers = score && ui.link('scorers', '', { fingerprint: score.scorer_fingerprint });
  const fingerprint = shorten((score && score.scorer_fingerprint) || '', 23);
  const scoreLine = score ? h('p', { class: 'muted' }, `Scored by ${score.scorer || '–'}${score.judge_model ? ` (judge model ${score.judge_model})` : ''} · `,
    scorers ? h('a', { href: scorers }, fingerprint) : h('span', { class: 'mono' }, fingerprint),
    score.error ? h('span', { class: 'status-error' }, ` · ${shorten(score.error, 300)}`) : null) : null;
  put(layout, h('section', {}, h('div', { class: 'event-head' },
    ...['Offset', 'Duration', 'Type', 'Name', 'Status', 'Timeline', 'Preview'].map((t) => h('span', {}, t))), list.el), detail);
  ui.main(
    h('h1', {}, `Attempt ${id} `, verdictTag(attempt)),
    h('p', { class: 'muted' }, `${attempt.harness_name} (${attempt.model || 'no model'}) on ${attempt.task_name} (${attempt.dataset_name}), repetition ${attempt.repetition}, try ${attempt.number}`,
      attempt.agent_version ? ` · agent ${attempt.agent_version}` : '',
      attempt.error ? h('span', { class: 'status-error' }, ` · ${shorten(attempt.error, 300)}`) : null),
    cards, scoreLine, artifacts,
    h('div', { class: 'toolbar' }, chips, search, h('label', {}, errorsBox, ' errors only'),
      h('button', { id: 'filter-clear', onclick: () => ui.go(withParams(route, { type: '', q: '', errors: '' }), true) }, 'clear')),
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
