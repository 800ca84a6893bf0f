// Trials left without a usable score, and the commands that queue them again (hemra resume,
// hemra repair): the run page shows both, to copy; the dashboard itself stays read-only.

const UNSCORED = ['infra_failed', 'scorer_failed', 'cancelled', 'unfinished'];

// The report's rows with unscored trials, each with its dataset.
export function unscoredRows(report) {
  return ((report && report.datasets) || []).flatMap((d) => (d.rows || [])
    .filter((r) => UNSCORED.some((key) => (r[key] || 0) > 0)).map((r) => [d, r]));
}

// The commands for a run: resume when trials were cancelled or did not finish, repair with a
// flag per reason found. None for an import (nothing of it runs here).
export function repairCommands(run, report) {
  if (!run || run.kind === 'import') return [];
  const rows = unscoredRows(report).map(([, r]) => r);
  const sum = (key) => rows.reduce((n, r) => n + (r[key] || 0), 0);
  const commands = [];
  if (sum('cancelled') || sum('unfinished')) commands.push(`hemra resume ${run.id}`);
  const flags = [['infra_failed', '--infra'], ['scorer_failed', '--scorer'], ['cancelled', '--cancelled']]
    .filter(([key]) => sum(key)).map(([, flag]) => flag);
  if (flags.length) commands.push(`hemra repair ${run.id} ${flags.join(' ')}`);
  return commands;
}

// "9 in 1, 2 in 2": trials by how many attempts they took (Report.trials_by_attempts).
export function attemptsTaken(report) {
  return Object.entries((report && report.trials_by_attempts) || {}).sort(([a], [b]) => a - b)
    .map(([n, trials]) => `${trials} in ${n}`).join(', ');
}
