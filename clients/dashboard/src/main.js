// HEMRA dashboard: a router over the hash, one view on screen at a time. Every view,
// filter and selection is in the URL, so reloading restores it and links can be shared.
import './app.css';
import { h, put } from './dom.js';
import { buildRoute, link, parseRoute, sameView } from './lib/route.js';
import { attemptView } from '../../../gateway/viewer/attempt.js';
import { datasetView, datasetsView, harnessesView, judgesView, scorersView } from './views/catalog.js';
import { compareView } from './views/compare.js';
import { runView, runsView } from './views/runs.js';

const VIEWS = {
  runs: runsView, imports: (route, ui) => runsView(route, ui, 'import'), run: runView, attempt: attemptView,
  compare: compareView, datasets: datasetsView, dataset: datasetView, harnesses: harnessesView,
  scorers: scorersView, judges: judgesView,
};
const NAV = [['runs', 'Runs'], ['imports', 'Imports'], ['compare', 'Compare'], ['datasets', 'Datasets'],
  ['harnesses', 'Harnesses'], ['scorers', 'Scorers'], ['judges', 'Judges']];
const SECTION = { run: 'runs', attempt: 'runs', dataset: 'datasets' };

const mainEl = document.getElementById('main');
const crumbsEl = document.getElementById('crumbs');
const navEl = document.getElementById('nav');
let current = null; // { route, update(route) -> bool, close() } of the view on screen

const ui = {
  main: (...children) => put(mainEl, ...children),
  link,
  crumbs: (...items) => crumbsEl.replaceChildren(...items.flatMap((item, i) => [i ? h('span', { class: 'sep' }, '›') : null, item]).filter(Boolean)),
  // Draw the view on screen again from fresh data (a run still going refreshes itself).
  refresh() {
    if (current && current.close) current.close();
    current = null;
    show(parseRoute(location.hash));
  },
  // Go to a route; `replace` keeps the history short for filters typed or toggled.
  go(route, replace = false) {
    const hash = buildRoute(route);
    if (hash === location.hash) return;
    if (replace) {
      history.replaceState(null, '', hash);
      show(parseRoute(hash));
    } else {
      location.hash = hash;
    }
  },
};

function renderNav(route) {
  const section = SECTION[route.view] || route.view;
  navEl.replaceChildren(...NAV.map(([view, label]) => h('a', {
    href: link(view), class: view === section ? 'on' : '', 'aria-current': view === section ? 'page' : null,
  }, label)));
}

async function show(route) {
  renderNav(route);
  if (current && sameView(current.route, route) && current.update && current.update(route) !== false) {
    current.route = route;
    return;
  }
  if (current && current.close) current.close();
  current = { route };
  const mine = current;
  mainEl.setAttribute('aria-busy', 'true');
  try {
    const controller = await VIEWS[route.view](route, ui);
    if (mine === current && controller) Object.assign(current, controller);
  } catch (err) {
    if (mine === current) ui.main(h('p', { class: 'error-box', role: 'alert' }, String(err.message || err)));
  } finally {
    if (mine === current) mainEl.setAttribute('aria-busy', 'false');
  }
}

window.addEventListener('hashchange', () => show(parseRoute(location.hash)));
if (!location.hash) history.replaceState(null, '', '#/runs');
show(parseRoute(location.hash));
