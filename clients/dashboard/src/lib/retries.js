// Why a report row's attempts were retried (ReportRow.retry_reasons): a line per reason,
// the most frequent first as the store lists them.
export function retryLines(row) {
  return ((row && row.retry_reasons) || []).map((r) => `${r.attempts || 0} × ${r.reason || '(no error recorded)'}`);
}

// The report's rows with retried attempts, each with its dataset: what the run page lists.
export function retriedRows(report) {
  return ((report && report.datasets) || []).flatMap((d) => (d.rows || []).filter((r) => r.retried).map((r) => [d, r]));
}
