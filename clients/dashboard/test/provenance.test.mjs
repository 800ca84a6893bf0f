import assert from 'node:assert/strict';
import test from 'node:test';
import { problemText, provenanceText } from '../src/lib/provenance.js';

const when = (t) => `<${t}>`;

test('an imported export says where it came from, who imported it, when, and what it was called', () => {
  const run = {
    kind: 'import', import_format: 'hemra-export 1',
    provenance: { export_digest: 'sha256:ab', imported_by: 'local user u@h', import_time: '2026-01-02T03:04:05Z',
      original_id: 'r-1', original_kind: 'run', original_label: 'theirs' },
  };
  assert.equal(provenanceText(run, when), 'Results made elsewhere (hemra-export 1) imported <2026-01-02T03:04:05Z> '
    + 'by local user u@h · export manifest sha256:ab · the export called it run r-1 (theirs)');
});

test('a run has no provenance; an import recorded before provenance says so', () => {
  assert.equal(provenanceText({ kind: 'run' }, when), '');
  assert.equal(provenanceText({ kind: 'import', import_format: 'harbor 0.25', provenance: {} }, when),
    'Results made elsewhere (harbor 0.25) imported (who and when were not recorded)');
});

test('a record the store could not wholly read names its problem', () => {
  assert.equal(problemText({ problem: "run r-1: create_time 1e+300 is not a time" }),
    'Unreadable: run r-1: create_time 1e+300 is not a time');
  assert.equal(problemText({ problem: '' }), '');
  assert.equal(problemText(null), '');
});
