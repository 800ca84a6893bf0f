// A rubric's criteria as the attempt page shows them: each judgment's state, the filter
// (route param `judgments`), and how many judgments each filter holds.

export const JUDGMENT_FILTERS = ['all', 'failed', 'passed', 'errors'];

// A criterion its judge could not judge is an error, never a failure (its value means nothing).
export function judgmentState(j) {
  if (j.error) return 'error';
  return j.passed ? 'passed' : 'failed';
}

export function judgmentFilter(params) {
  return JUDGMENT_FILTERS.includes(params.judgments) ? params.judgments : 'all';
}

const WANTED = { all: () => true, failed: (s) => s === 'failed', passed: (s) => s === 'passed', errors: (s) => s === 'error' };

export function filterJudgments(list, filter) {
  const wanted = WANTED[filter] || WANTED.all;
  return list.filter((j) => wanted(judgmentState(j)));
}

export function judgmentCounts(list) {
  return Object.fromEntries(JUDGMENT_FILTERS.map((f) => [f, filterJudgments(list, f).length]));
}
