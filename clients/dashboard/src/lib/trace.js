// An attempt's trace without the DOM: the event filter its URL asks for, the waterfall's time
// window and bars, and the rows a virtual list draws. Unit-tested with node --test.

export const EVENT_TYPES = ['message', 'tool_call', 'tool_result', 'command', 'output', 'usage', 'error', 'status'];

// The event filter a route asks for.
export function filterOf(params) {
  return {
    types: (params.type || '').split(',').filter(Boolean),
    text: (params.q || '').toLowerCase(),
    errorsOnly: params.errors === '1',
  };
}

export function isFiltering(filter) {
  return filter.types.length > 0 || filter.text !== '' || filter.errorsOnly;
}

export function toggleType(types, type) {
  return types.includes(type) ? types.filter((t) => t !== type) : [...types, type];
}

// Whether an event passes the filter; `isError` decides what counts as failed.
export function matchesFilter(event, filter, isError) {
  if (filter.types.length && !filter.types.includes(event.type)) return false;
  if (filter.errorsOnly && !isError(event)) return false;
  if (filter.text) {
    const hay = `${event.type} ${event.name} ${JSON.stringify(event.payload ?? '')}`.toLowerCase();
    if (!hay.includes(filter.text)) return false;
  }
  return true;
}

// An event's span on the attempt's time axis (its time marks its end).
export function spanOf(event) {
  const end = event.offset ?? 0;
  const start = Math.max(0, end - (event.duration || 0));
  return [start, end];
}

// The time window the bars are drawn on: the whole attempt, or (when filtering) the matching events.
export function timeWindow(events, wall, filtering) {
  if (!filtering || !events.length) {
    const last = events.reduce((m, e) => Math.max(m, spanOf(e)[1]), 0);
    return [0, Math.max(wall || 0, last, 1e-6)];
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const e of events) {
    const [s, t] = spanOf(e);
    lo = Math.min(lo, s);
    hi = Math.max(hi, t);
  }
  if (hi - lo < 1e-6) { hi = lo + 1e-3; }
  return [lo, hi];
}

// Left and width of a bar, as fractions of the window (a minimum width keeps instants visible).
export function barOf(event, window, minWidth = 0.002) {
  const [lo, hi] = window;
  const [s, t] = spanOf(event);
  const span = hi - lo;
  const left = Math.min(1, Math.max(0, (s - lo) / span));
  const width = Math.max(minWidth, Math.min(1 - left, (t - s) / span));
  return { left, width };
}

// The rows of a virtual list to render for a scroll position.
export function visibleRange(scrollTop, viewportHeight, rowHeight, count, overscan = 10) {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return [first, last];
}

// The screenshot an event names (a computer-use harness's tool_result: payload.screenshot, an
// artifact path ending in .png), as the gateway's image URL; null when it names none.
export function screenshotUrl(attemptId, event) {
  const path = event?.payload?.screenshot;
  if (typeof path !== 'string' || !/^\/[^\0]*\.png$/.test(path) || path.length > 1024) return null;
  const segments = path.replace(/^\/+/, '').split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return `/api/attempts/${encodeURIComponent(attemptId)}/images/${segments.map(encodeURIComponent).join('/')}`;
}
