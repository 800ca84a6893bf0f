// URL state of the dashboard (no DOM), unit-tested with node --test. Every view, filter and
// selection lives in the location hash, `#/path/segments?query`, so a link can be pasted anywhere.

// View name by the first path segment; a second segment is the view's subject (an ID or name).
const VIEWS = {
  runs: ['runs', 'run'], imports: ['imports', 'run'], attempts: [null, 'attempt'], compare: ['compare', null],
  datasets: ['datasets', 'dataset'], harnesses: ['harnesses', null], scorers: ['scorers', null],
  judges: ['judges', null],
};

// '#/runs/r-1?tab=attempts&verdict=failed' -> { view: 'run', id: 'r-1', params: { tab, verdict } }
export function parseRoute(hash) {
  const raw = (hash || '').replace(/^#/, '');
  const cut = raw.indexOf('?');
  const path = cut < 0 ? raw : raw.slice(0, cut);
  const query = cut < 0 ? '' : raw.slice(cut + 1);
  const parts = path.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  const route = { view: 'runs', id: '', params: {} };
  const [list, one] = VIEWS[parts[0]] || ['runs', null];
  if (parts[1] && one) Object.assign(route, { view: one, id: parts[1] });
  else if (list) route.view = list;
  for (const [k, v] of new URLSearchParams(query)) route.params[k] = v;
  return route;
}

// The path of a view; a run or import opened from the imports list stays an import.
function pathOf(route) {
  const id = encodeURIComponent(route.id || '');
  switch (route.view) {
    case 'run': return `/${route.id && route.id.startsWith('i-') ? 'imports' : 'runs'}/${id}`;
    case 'attempt': return `/attempts/${id}`;
    case 'dataset': return `/datasets/${id}`;
    case 'imports': case 'compare': case 'datasets': case 'harnesses': case 'scorers': case 'judges':
      return `/${route.view}`;
    default: return '/runs';
  }
}

// Empty, false and null params are left out and the rest sorted, so equal states have equal URLs.
export function buildRoute(route) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(route.params || {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (v !== '' && v !== null && v !== undefined && v !== false) params.set(k, String(v));
  }
  const query = params.toString();
  return `#${pathOf(route)}${query ? '?' + query : ''}`;
}

export function link(view, id = '', params = {}) {
  return buildRoute({ view, id, params });
}

export function withParams(route, changes) {
  return { ...route, params: { ...route.params, ...changes } };
}

// Whether two routes show the same view of the same thing (only params differ).
export function sameView(a, b) {
  return a.view === b.view && a.id === b.id;
}

// The compare sides a run offers: the run, each harness, and each dataset/harness cell.
export function sidesOf(run) {
  const ref = run.label && !run.label.includes('/') ? run.label : run.id;
  const sides = [];
  const harnesses = [...new Set(run.cells.map((c) => c.harness_name))];
  const datasets = [...new Set(run.cells.map((c) => c.dataset_name))];
  if (run.kind === 'import') return [{ ref: run.id, label: `${run.label} (import)` }];
  if (run.cells.length === 1) sides.push({ ref: run.id, label: `${ref}` });
  for (const harness of harnesses) sides.push({ ref: `${run.id}/${harness}`, label: `${ref} / ${harness}` });
  if (datasets.length > 1) {
    for (const cell of run.cells) {
      sides.push({ ref: `${run.id}/${cell.dataset_name}/${cell.harness_name}`,
        label: `${ref} / ${cell.dataset_name} / ${cell.harness_name}` });
    }
  }
  return sides;
}
