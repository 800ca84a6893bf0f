// The dashboard (clients/dashboard/dist) in headless Debian chromium (playwright-core). Needs
// GATEWAY_URL (a live gateway serving the dashboard over a run of oracle and nop) and
// SCREENSHOT_DIR; launched by tests/gateway/test_dashboard.py.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { launch } from './chromium.mjs';

const URL_ = process.env.GATEWAY_URL;
const SHOTS = process.env.SCREENSHOT_DIR || tmpdir();
const LABEL = process.env.RUN_LABEL || 'gw';
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

async function reloadKeeps(page, ready) {
  const url = page.url();
  await page.reload();
  await page.waitForSelector(ready);
  assert.equal(page.url(), url);
}

test('runs -> report -> compare -> criterion table -> attempt, URL state survives reloads', async () => {
  assert.ok(URL_, 'GATEWAY_URL is not set');
  const browser = await launch({ viewport: { width: 1400, height: 1000 } });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    // no page here holds mathematics: KaTeX is never fetched
    page.on('request', (r) => { if (/katex/i.test(r.url())) problems.push(`fetched ${r.url()}`); });
    const response = await page.goto(`${URL_}/`);
    assert.equal(response.status(), 200);
    assert.equal(response.headers()['content-security-policy'], CSP);
    assert.match(await page.title(), /HEMRA dashboard/);

    // runs -> a run's report
    await page.getByRole('link', { name: LABEL, exact: true }).first().click();
    await page.waitForSelector('table.report');
    assert.match(page.url(), /#\/runs\/r-/);
    const runId = page.url().match(/#\/runs\/(r-[0-9a-z]+)/)[1];
    assert.ok(await page.locator('table.report tr.baseline').count() >= 1);
    assert.ok(await page.locator('table.report td.best').count() >= 1);
    // vs baseline in the CLI report's words and unit: points of pass rate
    assert.equal(await page.locator('table.report tr:not(.baseline) td.vs-baseline div').first().innerText(), '-100.0 pts on 7 tasks');
    // the resolved spec, and the pass rate per task tag linking to the tag's attempts
    await page.locator('#spec summary').click();
    assert.equal(await page.locator('#spec dd[data-key="Sandbox"]').innerText(), 'host');
    assert.equal(await page.locator('#spec dd[data-key="Require"]').innerText(), 'nothing');
    assert.match(await page.locator('#spec dd[data-key="Scope"]').innerText(), /^full datasets \(hemra-offline: \d+ tasks\)$/);
    assert.match(await page.locator('#spec dd[data-key="Timeout"]').innerText(), /agent timeout/);
    const tagRow = page.locator('table.tag-table tr.tag-row', { has: page.locator('th', { hasText: /^binary-reward$/ }) });
    assert.deepEqual((await tagRow.locator('td').allInnerTexts()).slice(1), ['7/7 (100.0%)', '0/7 (0.0%)']);
    await tagRow.locator('a.tag-link').nth(1).click();
    await page.waitForFunction(() => location.hash.includes('tag=binary-reward'));
    await page.waitForSelector('.attempt-row');
    assert.match(await page.locator('#attempts-status').innerText(), /^7 attempts$/);
    assert.equal(await page.locator('.attempt-row[data-verdict="failed"]').count(), 7);

    // attempts: sorted and searched in the URL, then Prev / Next through that list
    const seconds = (t) => (t.endsWith('ms') ? Number(t.slice(0, -2)) / 1000 : Number(t.replace(/s$/, '')));
    await page.selectOption('#attempt-sort', '-duration');
    await page.waitForFunction(() => location.hash.includes('sort=-duration'));
    await page.waitForFunction(() => /^7 of 7 attempts$/.test(document.querySelector('#attempts-status').textContent));
    const walls = (await page.locator('.attempt-row span:nth-child(6)').allInnerTexts()).map(seconds);
    assert.deepEqual(walls, [...walls].sort((x, y) => y - x));
    await page.fill('#attempt-search', 'text-stats');
    await page.waitForFunction(() => location.hash.includes('q=text-stats'));
    await page.waitForFunction(() => /^1 of 7 attempts$/.test(document.querySelector('#attempts-status').textContent));
    assert.match(await page.locator('.attempt-row').first().innerText(), /text-stats/);
    await reloadKeeps(page, '.attempt-row');
    assert.equal(await page.inputValue('#attempt-search'), 'text-stats');
    assert.equal(await page.inputValue('#attempt-sort'), '-duration');
    await page.fill('#attempt-search', '');
    await page.waitForFunction(() => !location.hash.includes('q='));
    await page.waitForFunction(() => /^7 of 7 attempts$/.test(document.querySelector('#attempts-status').textContent));
    const order = await page.locator('.attempt-row a.attempt-link').allInnerTexts();
    await page.locator('.attempt-row a.attempt-link').nth(1).click();
    await page.waitForSelector('#list-nav .position');
    assert.equal(await page.locator('#list-nav .position').innerText(), '2 of 7');
    await page.locator('#list-nav a.next').click();
    await page.waitForFunction((id) => location.hash.startsWith(`#/attempts/${id}?`), order[2]);
    // the new attempt's page replaces the old one once its attempt is read: wait for its position
    await page.waitForFunction(() => document.querySelector('#list-nav .position')?.textContent === '3 of 7');
    assert.match(page.url(), /list=.*sort%3D-duration/);
    await page.locator('#list-nav a.prev').click();
    await page.waitForFunction((id) => location.hash.startsWith(`#/attempts/${id}?`), order[1]);
    await page.waitForFunction(() => document.querySelector('#list-nav .position')?.textContent === '2 of 7');
    await page.locator('#list-nav a.prev').click();
    await page.waitForFunction((id) => location.hash.startsWith(`#/attempts/${id}?`), order[0]);
    await page.waitForFunction(() => document.querySelector('#list-nav .position')?.textContent === '1 of 7');
    assert.equal(await page.locator('#list-nav span.prev[aria-disabled="true"]').count(), 1);
    await page.locator('#list-nav a.back').click();
    await page.waitForSelector('.attempt-row');
    assert.equal(await page.inputValue('#attempt-sort'), '-duration');
    await page.goto(`${URL_}/#/runs/${runId}`);
    await page.waitForSelector('table.report');

    // charts: pass rate with its interval, reward distribution, wall time and events per attempt
    await page.locator('nav.tabs a', { hasText: 'charts' }).click();
    await page.waitForSelector('svg.chart');
    assert.match(page.url(), /tab=charts/);
    assert.ok(await page.locator('svg.chart').count() >= 4);
    assert.ok(await page.locator('svg.chart g.interval').count() >= 2);
    await page.screenshot({ path: join(SHOTS, 'dashboard-charts.png'), fullPage: true });

    // compare: two sides picked, the paired table, flips, the interval
    await page.locator('nav.tabs a', { hasText: 'report' }).click();
    await page.waitForSelector('table.report');
    await page.getByRole('link', { name: 'Compare with…' }).click();
    await page.waitForSelector('#side-a');
    await page.selectOption('#side-a-pick', `${runId}/oracle`);
    await page.selectOption('#side-b-pick', `${runId}/nop`);
    await page.click('#compare-go');
    await page.waitForSelector('table.paired-table');
    assert.match(page.url(), new RegExp(`a=${runId}%2Foracle`));
    assert.match(await page.locator('#delta-text').innerText(), /b − a: -\d/);
    assert.ok(await page.locator('#comparison svg.chart').count() === 1);
    const allTasks = await page.locator('tr.paired').count();
    await page.selectOption('#task-filter', 'flips');
    await page.waitForFunction(() => location.hash.includes('only=flips'));
    const flips = await page.locator('tr.paired').count();
    assert.ok(flips >= 1 && flips <= allTasks);
    await page.screenshot({ path: join(SHOTS, 'dashboard-compare.png'), fullPage: true });
    assert.equal(await page.locator('tr.paired.flip-fail').count(), flips);
    await reloadKeeps(page, 'table.paired-table');
    assert.equal(await page.inputValue('#task-filter'), 'flips');
    assert.equal(await page.locator('tr.paired').count(), flips);

    // the criterion table: harnesses as columns, best marked, heat-shaded, cells link to attempts
    await page.locator('#nav a', { hasText: 'Datasets' }).click();
    await page.locator('a.dataset-link', { hasText: 'hemra-offline' }).click();
    await page.waitForSelector('table.criteria');
    await page.selectOption('#source', 'largest');
    await page.waitForFunction(() => location.hash.includes('source=largest'));
    await page.waitForSelector('table.criteria');
    await reloadKeeps(page, 'table.criteria');
    assert.equal(await page.inputValue('#source'), 'largest');
    const heads = await page.locator('table.criteria thead th').allInnerTexts();
    assert.ok(heads.includes('oracle') && heads.includes('nop'), heads.join(','));
    assert.ok(await page.locator('table.criteria td.best').count() >= 1);
    assert.ok(await page.locator('table.criteria td.heat-10').count() >= 1);
    assert.ok(await page.locator('table.criteria td.heat-0').count() >= 1);
    assert.match(await page.locator('table.criteria td .note').first().innerText(), /^n=\d+ · \d\d-\d\d/);
    // efficiency rows beside wall time: tokens and the error rate (lower is better, never heat-shaded)
    const criteria = await page.locator('table.criteria tbody th').allInnerTexts();
    for (const name of ['Wall time per attempt', 'Tokens per attempt', 'Error rate']) {
      assert.ok(criteria.some((c) => c.startsWith(name)), `${name} not in ${criteria.join(' | ')}`);
    }
    const errorRow = page.locator('table.criteria tr', { has: page.locator('th', { hasText: 'Error rate' }) });
    assert.deepEqual(await errorRow.locator('a.crit-link').allInnerTexts(), ['0.0%', '0.0%']);
    assert.equal(await errorRow.locator('td[class*="heat-"]').count(), 0);
    await page.screenshot({ path: join(SHOTS, 'dashboard-criteria.png'), fullPage: true });
    const nopColumn = heads.indexOf('nop');
    const cell = page.locator('table.criteria tr.task-row').first().locator('td').nth(nopColumn - 1).locator('a.crit-link');
    await cell.click();
    await page.waitForSelector('.attempt-row');
    assert.match(page.url(), /tab=attempts/);
    assert.match(page.url(), /cell=/);
    assert.match(page.url(), /task=sha256/);
    assert.equal(await page.locator('.attempt-row').count(), 1);

    // one failing attempt: its waterfall, an event, filters in the URL, reload restores
    await page.locator('a.attempt-link[data-verdict="failed"]').first().click();
    await page.waitForSelector('.event-row');
    assert.match(page.url(), /#\/attempts\/a-/);
    assert.match(await page.locator('#summary').innerText(), /failed/);
    await page.locator('.event-row').nth(1).click();
    await page.waitForSelector('#event-detail:not([hidden]) pre.payload');
    assert.match(page.url(), /event=2/);
    assert.ok(await page.locator('#raw-download').getAttribute('href'));
    await page.locator('button.chip[data-type="status"]').click();
    await page.waitForFunction(() => location.hash.includes('type=status'));
    const shown = await page.locator('.event-row').count();
    await reloadKeeps(page, '#event-detail:not([hidden]) pre.payload');
    assert.equal(await page.locator('button.chip[data-type="status"]').getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('.event-row').count(), shown);

    // the other sections answer
    for (const [section, ready] of [['Harnesses', 'table'], ['Scorers', 'section.scorer'], ['Judges', '#judges-note'], ['Imports', 'p.empty']]) {
      await page.locator('#nav a', { hasText: section }).click();
      await page.waitForSelector(`main ${ready}`);
    }
    await page.goto(`${URL_}/#/runs/${runId}?tab=report`);
    await page.waitForSelector('table.report');
    await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
