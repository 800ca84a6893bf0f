// The web dashboard (`hemra serve --ui clients/dashboard/dist`): every view.
import { start } from './shell.js';
import { attemptView } from './views/attempt.js';
import { datasetView, datasetsView, harnessesView, judgesView, scorersView } from './views/catalog.js';
import { compareView } from './views/compare.js';
import { runView, runsView } from './views/runs.js';

start({
  views: {
    runs: runsView, imports: (route, ui) => runsView(route, ui, 'import'), run: runView, attempt: attemptView,
    compare: compareView, datasets: datasetsView, dataset: datasetView, harnesses: harnessesView,
    scorers: scorersView, judges: judgesView,
  },
  nav: [['runs', 'Runs'], ['imports', 'Imports'], ['compare', 'Compare'], ['datasets', 'Datasets'],
    ['harnesses', 'Harnesses'], ['scorers', 'Scorers'], ['judges', 'Judges']],
});
