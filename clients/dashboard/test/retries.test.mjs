import assert from 'node:assert/strict';
import test from 'node:test';
import { retriedRows, retryLines } from '../src/lib/retries.js';

test('a row says how many attempts each reason made retry', () => {
  const row = { retried: 3, retry_reasons: [{ reason: 'sandbox broke', attempts: 2 }, { reason: 'engine away', attempts: 1 }] };
  assert.deepEqual(retryLines(row), ['2 × sandbox broke', '1 × engine away']);
  assert.deepEqual(retryLines({ retried: 0 }), []);
});

test('only rows with retried attempts are listed, each with its dataset', () => {
  const report = { datasets: [{ dataset_name: 'ds', rows: [{ harness_name: 'a', retried: 2 }, { harness_name: 'b' }] }] };
  assert.deepEqual(retriedRows(report).map(([d, r]) => `${d.dataset_name}/${r.harness_name}`), ['ds/a']);
  assert.deepEqual(retriedRows({ datasets: [] }), []);
});
