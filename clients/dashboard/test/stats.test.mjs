import assert from 'node:assert/strict';
import test from 'node:test';
import { cellText, heatClass, histogram, passRates, rewardValues, sampleNote, ticks, versusLines, wilson } from '../src/lib/stats.js';

const close = (a, b, eps = 1e-4) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

test('wilson interval matches the textbook values', () => {
  const [lo, hi] = wilson(8, 10);
  close(lo, 0.4902, 1e-3);
  close(hi, 0.9433, 1e-3);
  assert.deepEqual(wilson(0, 0), null);
  const [lo0, hi0] = wilson(0, 5);
  assert.equal(lo0, 0);
  assert.ok(hi0 > 0.4 && hi0 < 0.5);
  const [lo1, hi1] = wilson(5, 5);
  assert.equal(hi1, 1);
  assert.ok(lo1 > 0.5);
});

test('histogram bins every value once, the maximum in the last bin', () => {
  const bins = histogram([0, 0.05, 0.5, 1, 1, NaN], 10, 0, 1);
  assert.equal(bins.length, 10);
  assert.equal(bins.reduce((n, b) => n + b.count, 0), 5);
  assert.equal(bins[0].count, 2);
  assert.equal(bins[9].count, 2);
  assert.deepEqual(histogram([]), []);
  assert.equal(histogram([3, 3, 3], 4).reduce((n, b) => n + b.count, 0), 3);
});

test('heat classes and cell texts', () => {
  assert.equal(heatClass(0), 'heat-0');
  assert.equal(heatClass(0.84), 'heat-8');
  assert.equal(heatClass(1.7), 'heat-10');
  assert.equal(heatClass(null), '');
  assert.equal(cellText({ samples: 3, value: 2 / 3 }, 'rate'), '66.7%');
  assert.equal(cellText({ samples: 3, value: 0.74219 }, 'reward'), '0.742');
  assert.equal(cellText({ samples: 2, value: 12.44 }, 'seconds'), '12.4s');
  assert.equal(cellText({ samples: 2, value: 600 }, 'seconds'), '10.0m');
  assert.equal(cellText({ samples: 0, value: 0 }, 'rate'), '–');
  assert.equal(sampleNote({ samples: 500 }, { create_time: '2026-09-14T10:00:00Z' }), 'n=500 · 09-14');
  assert.equal(sampleNote(null, null), 'n=0');
});

test('pass rates and rewards per harness from attempts', () => {
  const scored = (harness, rewards) => ({ harness_name: harness, score: { state: 'scored', rewards } });
  const attempts = [scored('a', { reward: 1 }), scored('a', { reward: 0 }), scored('a', { reward: 1 }),
    scored('b', { reward: 0.5 }), { harness_name: 'b', score: { state: 'scorer_failed', rewards: {} } }, { harness_name: 'c', score: null }];
  const rates = passRates(attempts);
  assert.equal(rates.length, 1);
  assert.equal(rates[0].harness, 'a');
  assert.equal(rates[0].passed, 2);
  assert.equal(rates[0].n, 3);
  assert.ok(rates[0].interval[0] < 2 / 3 && rates[0].interval[1] > 2 / 3);
  assert.deepEqual(rewardValues(attempts), { a: [1, 0, 1], b: [0.5] });
});

test('axis ticks are round numbers covering the range', () => {
  assert.deepEqual(ticks(1), [0, 0.25, 0.5, 0.75, 1].filter((t) => ticks(1).includes(t)));
  assert.deepEqual(ticks(100), [0, 25, 50, 75, 100].filter((t) => ticks(100).includes(t)));
  const t = ticks(37);
  assert.equal(t[0], 0);
  assert.ok(t[t.length - 1] >= 30 && t.every((x, i) => i === 0 || x > t[i - 1]));
  assert.deepEqual(ticks(0), [0]);
});

test('vs baseline: points of pass rate, as the CLI prints them, then mean rewards', () => {
  assert.deepEqual(versusLines({ paired_tasks: 7, binary_tasks: 7, passed: 0, baseline_passed: 7, delta_points: -100 }), ['-100.0 pts on 7 tasks']);
  assert.deepEqual(versusLines({ paired_tasks: 3, binary_tasks: 3 }), ['+0.0 pts on 3 tasks']);
  assert.deepEqual(versusLines({ paired_tasks: 2, numeric_tasks: 2, mean_rewards: { score: 0.5 }, baseline_mean_rewards: { score: 0.8 } }),
    ['score -0.300', '(on 2 tasks)']);
  assert.deepEqual(versusLines({ paired_tasks: 0 }), ['–']);
  assert.deepEqual(versusLines(null), ['–']);
});
