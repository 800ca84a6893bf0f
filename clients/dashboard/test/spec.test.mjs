import assert from 'node:assert/strict';
import test from 'node:test';
import { specRows } from '../src/lib/spec.js';

test('the resolved spec: defaults read as the proto says, the scope from the task patterns', () => {
  const rows = Object.fromEntries(specRows({ sandbox: 'docker', require: ['network_block'], tasks: ['fix-*'], attempts: 3 },
    [{ dataset_name: 'd', tasks: 2 }]));
  assert.equal(rows.Sandbox, 'docker');
  assert.equal(rows.Require, 'network_block');
  assert.equal(rows.Scope, 'subset (d: 2 tasks)');
  assert.equal(rows.Timeout, "each task's agent timeout (900 s when it sets none)");
  assert.equal(rows['Infra retries'], 'at most 0 per trial');
  assert.equal(rows.Attempts, '3 per task');
  assert.ok(!('Exclude' in rows));
  assert.equal(Object.fromEntries(specRows({ timeout_secs: 60 })).Timeout, '60 s per attempt');
  assert.equal(Object.fromEntries(specRows({})).Scope, 'full datasets');
  assert.deepEqual(specRows(null), []);
});
