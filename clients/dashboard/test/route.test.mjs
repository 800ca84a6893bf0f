import assert from 'node:assert/strict';
import test from 'node:test';
import { buildRoute, link, parseRoute, sameView, sidesOf, withParams } from '../src/lib/route.js';

test('every view round-trips through the URL', () => {
  for (const hash of ['#/runs', '#/runs?kind=import&page=abc', '#/runs/r-1?tab=attempts&verdict=failed',
    '#/imports', '#/imports/i-2', '#/attempts/a-3?errors=1&event=12&q=ls&type=command%2Cerror',
    '#/compare?a=r-1%2Foracle&b=r-1%2Fnop&only=flips', '#/datasets', '#/datasets/hemra-offline%40abc?source=largest',
    '#/harnesses?name=oracle', '#/scorers?fingerprint=sha256%3Aab', '#/judges']) {
    assert.equal(buildRoute(parseRoute(hash)), hash, hash);
  }
});

test('parse: subjects, params, defaults', () => {
  assert.deepEqual(parseRoute('#/runs/r-1?tab=charts'), { view: 'run', id: 'r-1', params: { tab: 'charts' } });
  assert.deepEqual(parseRoute('#/datasets/a%2Fb'), { view: 'dataset', id: 'a/b', params: {} });
  assert.deepEqual(parseRoute(''), { view: 'runs', id: '', params: {} });
  assert.deepEqual(parseRoute('#/nonsense/x'), { view: 'runs', id: '', params: {} });
  assert.equal(parseRoute('#/attempts').view, 'runs');
  assert.equal(parseRoute('#/runs/%E0%A4%A').id, '%E0%A4%A'); // malformed escapes stay as written
});

test('build: empty params are dropped and the rest sorted', () => {
  assert.equal(link('run', 'r-1', { verdict: '', tab: 'attempts', cell: 'c-1', task: null }), '#/runs/r-1?cell=c-1&tab=attempts');
  assert.equal(link('run', 'i-9'), '#/imports/i-9');
  assert.equal(buildRoute(withParams(parseRoute('#/compare?a=x'), { b: 'y' })), '#/compare?a=x&b=y');
});

test('sameView ignores params only', () => {
  assert.ok(sameView(parseRoute('#/runs/r-1?tab=a'), parseRoute('#/runs/r-1?tab=b')));
  assert.ok(!sameView(parseRoute('#/runs/r-1'), parseRoute('#/runs/r-2')));
});

test('compare sides of runs and imports', () => {
  const run = { id: 'r-1', label: 'gw', kind: 'run', cells: [
    { dataset_name: 'd1', harness_name: 'oracle' }, { dataset_name: 'd1', harness_name: 'nop' }] };
  assert.deepEqual(sidesOf(run).map((s) => s.ref), ['r-1/oracle', 'r-1/nop']);
  const wide = { ...run, cells: [...run.cells, { dataset_name: 'd2', harness_name: 'oracle' }] };
  assert.deepEqual(sidesOf(wide).map((s) => s.ref), ['r-1/oracle', 'r-1/nop', 'r-1/d1/oracle', 'r-1/d1/nop', 'r-1/d2/oracle']);
  assert.deepEqual(sidesOf({ ...run, cells: [run.cells[0]] }).map((s) => s.ref), ['r-1', 'r-1/oracle']);
  assert.deepEqual(sidesOf({ id: 'i-1', label: 'x', kind: 'import', cells: run.cells }).map((s) => s.ref), ['i-1']);
});
