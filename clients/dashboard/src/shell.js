// The one router of the web package: a view per route, one on screen at a time. Every
// view, filter and selection is in the URL, so reloading restores it and links can be
// shared. The dashboard and the trace viewer are this shell with different view sets.
import './app.css';
import { h, put } from './dom.js';
import { buildRoute, link, parseRoute, sameView } from './lib/route.js';

// Where a view's nav entry is: a run and its attempts sit under Runs, a dataset under Datasets.
const SECTION = { run: 'runs', attempt: 'runs', dataset: 'datasets' };

// views: { name: (route, ui) -> controller? }, nav: [[view, label]] for the header.
export function start({ views, nav }) {
  const mainEl = document.getElementById('main');
  const crumbsEl = document.getElementById('crumbs');
  const navEl = document.getElementById('nav');
  let current = null; // { route, update(route) -> bool, close() } of the view on screen

  // What a view may ask of the app it runs in.
  const ui = {
    main: (...children) => put(mainEl, ...children),
    // The href of a view, or null when this app does not have it.
    link: (view, id = '', params = {}) => (view in views ? link(view, id, params) : null),
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
    navEl.replaceChildren(...nav.map(([view, label]) => h('a', {
      href: link(view), class: view === section ? 'on' : '', 'aria-current': view === section ? 'page' : null,
    }, label)));
  }

  async function show(route) {
    if (!(route.view in views)) route = { view: 'runs', id: '', params: {} };
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
      const controller = await views[route.view](route, ui);
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
}
