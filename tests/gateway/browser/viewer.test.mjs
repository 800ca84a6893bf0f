// The trace viewer in headless Debian chromium (playwright-core). Needs GATEWAY_URL (a live
// gateway over a run with oracle and nop) and SCREENSHOT_DIR; launched by tests/gateway/test_browser.py.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { launch } from './chromium.mjs';

const URL_ = process.env.GATEWAY_URL;
const SHOTS = process.env.SCREENSHOT_DIR || tmpdir();
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

test('runs -> report -> failing attempt -> event, filters in the URL, reload restores', async () => {
  assert.ok(URL_, 'GATEWAY_URL is not set');
  const browser = await launch();
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    const response = await page.goto(`${URL_}/`);
    assert.equal(response.status(), 200);
    assert.equal(response.headers()['content-security-policy'], CSP);

    await page.getByRole('link', { name: process.env.RUN_LABEL || 'gw', exact: true }).click();
    await page.waitForSelector('table.report');
    assert.match(page.url(), /#\/runs\/r-/);
    assert.ok(await page.locator('table.report tr.baseline').count() >= 1);
    // The trace viewer has no catalog views: a dataset is named, not linked.
    assert.equal(await page.locator('section.dataset h2 a').count(), 0);
    assert.deepEqual(await page.locator('#nav a').allInnerTexts(), ['Runs', 'Compare']);

    await page.locator('nav.tabs a', { hasText: 'attempts' }).click();
    await page.locator('a.attempt-link[data-verdict="failed"]').first().click();
    await page.waitForSelector('.event-row');
    assert.match(page.url(), /#\/attempts\/a-/);
    assert.match(await page.locator('#summary').innerText(), /failed/);

    await page.locator('.event-row').nth(1).click();
    await page.waitForSelector('#event-detail:not([hidden]) pre.payload');
    assert.match(page.url(), /event=2/);
    assert.ok(await page.locator('#raw-download').getAttribute('href'));

    await page.locator('button.chip[data-type="status"]').click();
    await page.fill('#filter-text', 'harness');
    await page.waitForFunction(() => location.hash.includes('q=harness') && location.hash.includes('type=status'));
    const shown = await page.locator('.event-row').count();
    assert.ok(shown >= 1);
    const url = page.url();

    await page.reload();
    await page.waitForSelector('.event-row');
    await page.waitForSelector('#event-detail:not([hidden]) pre.payload');
    assert.equal(page.url(), url);
    assert.equal(await page.inputValue('#filter-text'), 'harness');
    assert.equal(await page.locator('button.chip[data-type="status"]').getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('.event-row').count(), shown);
    assert.match(await page.locator('#event-detail').innerText(), /#2 /);

    await page.screenshot({ path: join(SHOTS, 'viewer.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
