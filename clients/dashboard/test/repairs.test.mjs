import assert from 'node:assert/strict';
import test from 'node:test';
import { attemptsTaken, repairCommands, unscoredRows } from '../src/lib/repairs.js';

const report = {
  datasets: [{ dataset_name: 'ds', rows: [
    { harness_name: 'a', infra_failed: 2, scorer_failed: 1 },
    { harness_name: 'b', passed: 3 },
    { harness_name: 'c', cancelled: 1 },
  ] }],
  trials_by_attempts: { 2: 3, 1: 9 },
};

test('only cells with unscored trials are listed, each with its dataset', () => {
  assert.deepEqual(unscoredRows(report).map(([d, r]) => `${d.dataset_name}/${r.harness_name}`), ['ds/a', 'ds/c']);
  assert.deepEqual(unscoredRows({ datasets: [] }), []);
});

test('resume for cancelled trials, repair with a flag per reason found', () => {
  assert.deepEqual(repairCommands({ id: 'r-1', kind: 'run' }, report), [
    'hemra resume r-1',
    'hemra repair r-1 --infra --scorer --cancelled',
  ]);
  const scorerOnly = { datasets: [{ rows: [{ scorer_failed: 1 }] }] };
  assert.deepEqual(repairCommands({ id: 'r-2', kind: 'run' }, scorerOnly), ['hemra repair r-2 --scorer']);
  assert.deepEqual(repairCommands({ id: 'i-1', kind: 'import' }, report), []);
  assert.deepEqual(repairCommands({ id: 'r-3', kind: 'run' }, { datasets: [{ rows: [{ passed: 1 }] }] }), []);
});

test('trials by attempts taken, fewest attempts first', () => {
  assert.equal(attemptsTaken(report), '9 in 1, 3 in 2');
  assert.equal(attemptsTaken({}), '');
});
