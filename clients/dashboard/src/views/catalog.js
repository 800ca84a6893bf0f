// Datasets (with the criterion table and their tasks), harnesses, scorers and judges.
import { formatNumber, shorten } from '../format.js';
import { api, h, q, table } from '../dom.js';
import { link, withParams } from '../lib/route.js';
import { cellText, heatClass, sampleNote } from '../lib/stats.js';
import { empty, shortDigest, when } from './common.js';

export async function datasetsView(route, ui) {
  ui.crumbs(h('span', {}, 'Datasets'));
  const { datasets } = await api('/api/datasets');
  ui.main(h('h1', {}, 'Datasets'), datasets.length ? table(['Dataset', 'Digest', 'Tasks', 'Runs', 'Imports', 'Harnesses', 'Last used', 'Source'],
    datasets.map((d) => h('tr', {},
      h('td', {}, h('a', { class: 'dataset-link', href: link('dataset', `${d.dataset_name}@${shortDigest(d.digest)}`) }, d.dataset_name)),
      h('td', { class: 'mono' }, shortDigest(d.digest)), h('td', { class: 'num' }, d.tasks), h('td', { class: 'num' }, d.runs),
      h('td', { class: 'num' }, d.imports), h('td', {}, d.harness_names.join(', ')), h('td', {}, when(d.last_used_time)),
      h('td', { class: 'muted' }, shorten(d.source, 80))))) : empty('No datasets yet: a run or an import records them.'));
}

function criterionTable(t, dataset) {
  const sources = t.sources;
  const head = [h('th', {}, 'Criterion'), ...sources.map((s) => h('th', { class: 'num' }, s.harness_name))];
  const rows = t.rows.map((row) => h('tr', { class: row.task_digest ? 'task-row' : row.unit === 'value' ? 'aggregate-row judge-row' : 'aggregate-row' },
    h('th', { scope: 'row' }, row.criterion, row.lower_is_better ? h('span', { class: 'muted' }, ' (lower is better)') : null),
    row.cells.map((c, i) => {
      const s = sources[i];
      // Heat shades how good a rate is: an error rate (lower is better) is left plain.
      const heat = row.unit === 'rate' && !row.lower_is_better && c.samples ? heatClass(c.value) : '';
      const href = link('run', s.run_id, { tab: 'attempts', cell: s.cell_id, task: row.task_digest });
      const title = `${s.harness_name} from ${s.kind} ${s.run_label} (${s.run_id}), ${s.create_time || ''}, ${s.complete ? 'complete' : 'incomplete'}; ${c.samples} graded, ${c.excluded} left out`;
      return h('td', { class: `num crit ${heat} ${c.best ? 'best' : ''} ${s.complete ? '' : 'incomplete'}`, title },
        h('a', { class: 'crit-link', href, dataset: { samples: c.samples } }, cellText(c, row.unit)),
        h('span', { class: 'note' }, sampleNote(c, s), c.excluded ? ` · excl. ${c.excluded}` : ''));
    })));
  return h('table', { class: 'criteria', dataset: { dataset } }, h('thead', {}, h('tr', {}, head)), h('tbody', {}, rows));
}

function sourcesPanel(t) {
  return h('details', { class: 'sources', id: 'sources' }, h('summary', {}, `Sources (${t.sources.length})`),
    table(['Harness', 'Source', 'Kind', 'Date', 'Trials', 'Status', 'Model', 'Other cells'], t.sources.map((s) => h('tr', {},
      h('td', {}, s.harness_name), h('td', {}, h('a', { href: link('run', s.run_id) }, s.run_label || s.run_id)), h('td', {}, s.kind),
      h('td', {}, when(s.create_time)), h('td', { class: 'num' }, s.trials), h('td', {}, s.complete ? 'complete' : 'incomplete'),
      h('td', {}, s.model || '–'), h('td', { class: 'num' }, s.other_cells)))));
}

export async function datasetView(route, ui) {
  const ref = route.id;
  ui.crumbs(h('a', { href: link('datasets') }, 'Datasets'), h('span', {}, ref));
  const source = route.params.source || 'newest';
  const [t, tasks] = await Promise.all([
    api(`/api/datasets/${encodeURIComponent(ref)}/criteria?${q({ source })}`),
    api(`/api/datasets/${encodeURIComponent(ref)}/tasks?${q({ page_size: 200, page_token: route.params.tasks_page })}`)]);
  const sourceSelect = h('select', { id: 'source', 'aria-label': 'source run' },
    [['newest', 'Source: newest complete'], ['largest', 'Source: largest']].map(([v, l]) => h('option', { value: v, selected: v === source }, l)));
  sourceSelect.addEventListener('change', () => ui.go(withParams(route, { source: sourceSelect.value === 'newest' ? '' : sourceSelect.value })));
  ui.main(
    h('h1', {}, `Dataset ${t.dataset_name}`), h('p', { class: 'muted mono' }, t.dataset_digest),
    h('h2', {}, 'Criterion table'),
    h('p', { class: 'muted' }, 'Harnesses as columns, one source (run or import cell) each; every cell shows its graded sample count and the source\'s date, '
      + 'the best value of each row is underlined, and clicking a cell opens the attempts behind it. Trials nothing graded are left out (excl.), never counted as failed.'),
    h('div', { class: 'toolbar' }, sourceSelect),
    t.sources.length ? [criterionTable(t, t.dataset_name), sourcesPanel(t)] : empty('No run or import has used this dataset.'),
    h('h2', {}, `Tasks`),
    table(['Task', 'Digest', 'Attempts', 'Passed', 'Failed', 'Errored', 'Harnesses', 'Scorers'], tasks.tasks.map((x) => h('tr', {},
      h('td', {}, x.task_name), h('td', { class: 'mono' }, shortDigest(x.digest)), h('td', { class: 'num' }, x.attempts),
      h('td', { class: 'num verdict-passed' }, x.passed), h('td', { class: 'num verdict-failed' }, x.failed), h('td', { class: 'num verdict-errored' }, x.errored),
      h('td', {}, x.harness_names.join(', ')),
      h('td', {}, x.scorer_fingerprints.map((f, i) => [i ? ', ' : '', h('a', { class: 'mono', href: link('scorers', '', { fingerprint: f }) }, shortDigest(f))]))))),
    h('div', { class: 'actions' },
      route.params.tasks_page ? h('a', { class: 'button', href: link('dataset', ref, { ...route.params, tasks_page: '' }) }, 'First tasks') : null,
      tasks.next_page_token ? h('a', { class: 'button', href: link('dataset', ref, { ...route.params, tasks_page: tasks.next_page_token }) }, 'More tasks') : null));
}

export async function harnessesView(route, ui) {
  ui.crumbs(h('span', {}, 'Harnesses'));
  const { harnesses } = await api('/api/harnesses');
  const name = route.params.name || '';
  const shown = harnesses.filter((x) => !name || x.harness_name === name);
  ui.main(h('h1', {}, 'Harnesses'), name ? h('p', {}, `Only ${name} · `, h('a', { href: link('harnesses') }, 'all harnesses')) : null,
    shown.length ? table(['Harness', 'Kind', 'Agent', 'Version', 'Model', 'Env names', 'Runs', 'Imports', 'Trials', 'Datasets', 'Last used', 'Digest'],
      shown.map((x) => h('tr', {}, h('td', {}, h('a', { href: link('harnesses', '', { name: x.harness_name }) }, x.harness_name)), h('td', {}, x.kind),
        h('td', {}, x.agent || '–'), h('td', {}, x.agent_version || '–'), h('td', {}, x.model || '–'), h('td', { class: 'mono' }, x.env.join(' ') || '–'),
        h('td', { class: 'num' }, x.runs), h('td', { class: 'num' }, x.imports), h('td', { class: 'num' }, formatNumber(x.trials)),
        h('td', {}, x.dataset_names.map((d, i) => [i ? ', ' : '', h('a', { href: link('dataset', d) }, d)])), h('td', {}, when(x.last_used_time)),
        h('td', { class: 'mono' }, shortDigest(x.digest))))) : empty('No harnesses yet: a run or an import records them.'));
}

export async function scorersView(route, ui) {
  ui.crumbs(h('span', {}, 'Scorers'));
  const { scorers } = await api('/api/scorers');
  const fp = route.params.fingerprint || '';
  const shown = scorers.filter((x) => !fp || x.fingerprint === fp);
  ui.main(h('h1', {}, 'Scorers'),
    h('p', { class: 'muted' }, 'A scorer fingerprint covers the verifier (the task\'s tests/ digest) and its reward names; tasks pair only when both sides were graded by the same one.'),
    fp ? h('p', {}, `Only ${shortDigest(fp)} · `, h('a', { href: link('scorers') }, 'all scorers')) : null,
    shown.length ? shown.map((x) => h('section', { class: 'scorer' },
      h('h2', {}, h('a', { class: 'mono', href: link('scorers', '', { fingerprint: x.fingerprint }) }, shortDigest(x.fingerprint)), ` ${x.scorer}`,
        x.judge_model ? ` · judge model ${x.judge_model}` : ''),
      h('p', {}, `rewards: ${x.reward_names.join(', ') || '–'} · ${formatNumber(x.attempts)} scored attempts · ${x.task_count} tasks · datasets: ${x.dataset_names.join(', ')}`),
      h('p', { class: 'task-list' }, x.tasks.map((t, i) => [i ? ', ' : '', `${t.task_name} (${t.attempts})`]),
        x.task_count > x.tasks.length ? ` … and ${x.task_count - x.tasks.length} more` : '')))
      : empty('No attempt has been scored yet.'));
}

export async function judgesView(route, ui) {
  ui.crumbs(h('span', {}, 'Judges'));
  const { judges, note } = await api('/api/judges');
  ui.main(h('h1', {}, 'Judges'),
    judges.length ? table(['Judge', 'Definitions (fingerprints)', 'Models', 'Judged attempts', 'Judge failed', 'Runs'],
      judges.map((j) => h('tr', { class: 'judge', 'data-judge': j.judge }, h('td', {}, j.judge),
        h('td', { class: 'mono' }, (j.fingerprints || []).map((f, i) => [i ? ', ' : '', h('span', { title: f }, shortDigest(f))])),
        h('td', {}, j.models.join(', ') || '–'), h('td', { class: 'num' }, j.attempts), h('td', { class: 'num' }, j.failed || 0),
        h('td', {}, j.run_ids.map((r, i) => [i ? ', ' : '', h('a', { href: link('run', r) }, r)]))))) : null,
    note ? h('p', { class: 'muted', id: 'judges-note' }, note) : null);
}
