-- The executors a pool needs now: its runs' queued and leased jobs, each run counted at most
-- up to its own concurrency (a run limited to 2 at once keeps 2 executors' slots busy, not
-- 2,000), divided by the attempts one executor works at once, rounded up. Leased jobs count
-- so that KEDA never scales away an executor that is working. Cancelled runs hold no queued
-- jobs (cancelling closes them) and their leased ones end at the next heartbeat.
SELECT COALESCE(CEIL(SUM(wanted)::numeric / {{ .concurrency }}), 0)::bigint AS executors
FROM (
    SELECT CASE WHEN r.limited THEN LEAST(COUNT(*), r.concurrency) ELSE COUNT(*) END AS wanted
    FROM jobs j JOIN runs r ON r.id = j.run_id
    WHERE j.state IN ('queued', 'leased') AND r.pool = '{{ .pool }}'
    GROUP BY r.id, r.limited, r.concurrency
) AS per_run
