// A run's resolved spec as the run page lists it (no DOM), unit-tested with node --test. The
// planner records the spec with every default filled in (services/common/runspec.py); a field
// absent here is a zero its JSON leaves out, read as the proto comments say.

const list = (values) => (values && values.length ? values.join(', ') : '');
const joined = (...parts) => parts.filter(Boolean).join(' · ');

// Whole datasets, or a subset picked by task patterns; with the tasks each dataset ran.
export function scopeText(spec, datasets = []) {
  const counts = datasets.map((d) => `${d.dataset_name}: ${d.tasks} tasks`).join(', ');
  const subset = (spec.tasks || []).length || (spec.exclude || []).length;
  return `${subset ? 'subset' : 'full datasets'}${counts ? ` (${counts})` : ''}`;
}

// [label, text] pairs, empty ones left out; `datasets` are the report's (dataset_name, tasks).
export function specRows(spec, datasets = []) {
  if (!spec) return [];
  const rows = [
    ['Datasets', list(spec.datasets)],
    ['Harnesses', list(spec.harnesses)],
    ['Baseline', spec.baseline || ''],
    ['Model', spec.model || ''],
    ['Scope', scopeText(spec, datasets)],
    ['Tasks', list(spec.tasks)],
    ['Exclude', list(spec.exclude)],
    ['Attempts', `${spec.attempts || 1} per task`],
    ['Concurrency', String(spec.concurrency || 1)],
    ['Timeout', spec.timeout_secs ? `${spec.timeout_secs} s per attempt` : "each task's agent timeout (900 s when it sets none)"],
    ['Infra retries', `at most ${spec.max_infra_retries || 0} per trial`],
    ['Sandbox', joined(spec.sandbox || 'host', spec.sandbox_image && `image ${spec.sandbox_image}`,
      spec.sandbox_network && `network ${spec.sandbox_network}`)],
    ['Require', list(spec.require) || 'nothing'],
    ['Verifier', joined(spec.verifier_isolation && `isolation ${spec.verifier_isolation}`,
      spec.verifier_network && `network ${spec.verifier_network}`, list(spec.verifier_env) && `env ${list(spec.verifier_env)}`)],
    ['Judges', list(spec.judges)],
    ['Pool', spec.pool || ''],
    ['History kept', list(spec.history_kept)],
    ['Run file', spec.run_file || ''],
  ];
  return rows.filter(([, text]) => text !== '');
}
