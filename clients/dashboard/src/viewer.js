// The trace viewer `hemra serve` serves by default: runs and imports, a run's report,
// charts and attempts, an attempt's trace, and compare; the catalog views are the dashboard's.
import { start } from './shell.js';
import { attemptView } from './views/attempt.js';
import { compareView } from './views/compare.js';
import { runView, runsView } from './views/runs.js';

start({
  views: { runs: runsView, run: runView, attempt: attemptView, compare: compareView },
  nav: [['runs', 'Runs'], ['compare', 'Compare']],
});
