// An attempt's rubric on the dashboard's attempt page, in headless Debian chromium: every
// criterion with its state, the filter links in the URL, errors never shown as failures;
// and the criteria of a compare.
// Needs GATEWAY_URL and ATTEMPT_ID; launched by tests/gateway/test_dashboard.py.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { chromium } from 'playwright-core';

test('the attempt page lists its rubric and filters it from the URL', async () => {
  const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hemra-chromium-')), {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${process.env.GATEWAY_URL}/#/attempts/${process.env.ATTEMPT_ID}`);
    await page.waitForSelector('#rubric table.judgments');
    assert.equal(await page.locator('#rubric h2').textContent(), 'Rubric (6 criteria)');
    assert.equal(await page.locator('tr.judgment').count(), 6);
    assert.equal(await page.locator('tr.judgment-error').count(), 1);
    const empty = page.locator('tr.judgment', { hasText: 'handles_empty_input' });
    assert.match(await empty.textContent(), /failed/);
    assert.match(await empty.textContent(), /An empty file counts 0 words/);

    await page.locator('#rubric nav a', { hasText: 'failed (3)' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tr.judgment').length === 3);
    assert.match(page.url(), /judgments=failed/);
    assert.equal(await page.locator('tr.judgment-failed').count(), 3);
    await page.reload();
    await page.waitForSelector('#rubric table.judgments');
    assert.equal(await page.locator('tr.judgment').count(), 3);

    await page.locator('#rubric nav a', { hasText: 'errors (1)' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tr.judgment').length === 1);
    assert.match(await page.locator('tr.judgment').textContent(), /not JSON after 3 tries/);

    // compare: the criteria both sides were judged on (the error left out), b − a on each
    await page.goto(`${process.env.GATEWAY_URL}/#/compare?a=judged%2Foracle&b=judged%2Fnop`);
    await page.waitForSelector('table.criteria-table');
    assert.equal(await page.locator('tr.criterion').count(), 5);
    assert.match(await page.locator('tr.criterion', { hasText: 'quality / readability' }).textContent(), /0\.75/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
