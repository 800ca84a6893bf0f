// What the store says of where a run came from and what of it could not be read, as text
// (pure functions: the views put them on the page, node --test checks them).

// Where an import's results came from and how they came into this store (the API's
// `provenance`), or '' for a run HEMRA executed. `when` formats an RFC 3339 time.
export function provenanceText(run, when) {
  if (!run || run.kind !== 'import') return '';
  const p = run.provenance || {};
  const parts = [`Results made elsewhere (${run.import_format || 'format not recorded'})`];
  if (p.import_time) parts.push(`imported ${when(p.import_time)}`);
  else parts.push('imported');
  parts.push(p.imported_by ? `by ${p.imported_by}` : '(who and when were not recorded)');
  if (p.export_digest) parts.push(`· export manifest ${p.export_digest}`);
  if (p.original_id) parts.push(`· the export called it ${p.original_kind} ${p.original_id} (${p.original_label})`);
  return parts.join(' ');
}

// What the store could not read of a run or an attempt (its `problem`), or ''.
export function problemText(record) {
  return record && record.problem ? `Unreadable: ${record.problem}` : '';
}
