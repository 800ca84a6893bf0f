import assert from 'node:assert/strict';
import test from 'node:test';
import { arrange, decodeList, encodeList, neighbours } from '../src/lib/attemptlist.js';

const at = (id, extra) => ({ id, state: 'finished', verdict: 'passed', outcome: 'succeeded', start_time: '2026-01-01T00:00:00Z', ...extra });
const list = [
  at('a-1', { task_name: 'fix-median', end_time: '2026-01-01T00:00:05Z', usage: { usage_events: 1, input_tokens: 10, output_tokens: 5, cost_usd: 0.5 } }),
  at('a-2', { task_name: 'text-stats', verdict: 'failed', end_time: '2026-01-01T00:00:09Z' }),
  at('a-3', { task_name: 'fix-inventory', outcome: 'cancelled', verdict: 'cancelled', end_time: '2026-01-01T00:00:00Z', error: 'cancelled' }),
  at('a-4', { task_name: 'csv', end_time: '2026-01-01T00:00:01Z', usage: { usage_events: 2, input_tokens: 100, output_tokens: 1, cost_usd: 0.1 } }),
];

test('search matches every word; sorts put attempts without a value last', () => {
  assert.deepEqual(arrange(list, { q: 'FIX' }).map((a) => a.id), ['a-1', 'a-3']);
  assert.deepEqual(arrange(list, { q: 'fix cancelled' }).map((a) => a.id), ['a-3']);
  // the cancelled attempt never ran: no duration, last both ways
  assert.deepEqual(arrange(list, { sort: 'duration' }).map((a) => a.id), ['a-4', 'a-1', 'a-2', 'a-3']);
  assert.deepEqual(arrange(list, { sort: '-duration' }).map((a) => a.id), ['a-2', 'a-1', 'a-4', 'a-3']);
  assert.deepEqual(arrange(list, { sort: '-tokens' }).map((a) => a.id), ['a-4', 'a-1', 'a-2', 'a-3']);
  assert.deepEqual(arrange(list, { sort: 'cost' }).map((a) => a.id), ['a-4', 'a-1', 'a-2', 'a-3']);
  assert.deepEqual(arrange(list, { sort: 'outcome' }).map((a) => a.id), ['a-1', 'a-4', 'a-2', 'a-3']);
  assert.equal(arrange(list, { sort: '-errors' })[0].id, 'a-3');
  assert.deepEqual(arrange(list, {}).map((a) => a.id), ['a-1', 'a-2', 'a-3', 'a-4']);
});

test('the list travels in one param; neighbours step through it', () => {
  const text = encodeList('r-1', { harness: 'nop', sort: '-duration', tab: 'attempts', q: '' });
  assert.equal(text, 'run=r-1&harness=nop&sort=-duration');
  assert.deepEqual(decodeList(text), { run: 'r-1', params: { harness: 'nop', sort: '-duration' } });
  assert.deepEqual(neighbours(list, 'a-2'), { index: 1, prev: list[0], next: list[2] });
  assert.deepEqual(neighbours(list, 'a-1').prev, null);
  assert.equal(neighbours(list, 'a-9').index, -1);
});
