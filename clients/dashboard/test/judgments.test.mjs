import assert from 'node:assert/strict';
import test from 'node:test';
import { filterJudgments, judgmentCounts, judgmentFilter, judgmentState } from '../src/lib/judgments.js';

const LIST = [
  { judge: 'quality', criterion: 'readability', value: 0.75 },
  { judge: 'quality', criterion: 'works', value: 1, passed: true },
  { judge: 'quality', criterion: 'docstrings', error: 'not JSON after 3 tries' },
  { judge: 'correctness', criterion: 'empty', value: 0, expected: '0', observed: '1' },
];

test('a judgment is passed, failed, or an error whatever its value', () => {
  assert.deepEqual(LIST.map(judgmentState), ['failed', 'passed', 'error', 'failed']);
  assert.equal(judgmentState({ value: 1, passed: true, error: 'timed out' }), 'error');
});

test('filters and their counts', () => {
  assert.deepEqual(judgmentCounts(LIST), { all: 4, failed: 2, passed: 1, errors: 1 });
  assert.deepEqual(filterJudgments(LIST, 'failed').map((j) => j.criterion), ['readability', 'empty']);
  assert.deepEqual(filterJudgments(LIST, 'errors').map((j) => j.criterion), ['docstrings']);
  assert.equal(filterJudgments(LIST, 'all').length, 4);
});

test('the filter comes from the route, anything unknown is all', () => {
  assert.equal(judgmentFilter({ judgments: 'failed' }), 'failed');
  assert.equal(judgmentFilter({ judgments: '<script>' }), 'all');
  assert.equal(judgmentFilter({}), 'all');
});
