// The run page of a cancelled run in headless chromium: per cell, its unscored trials and why,
// and the resume and repair commands to copy (the page offers no button: it stays read-only);
// and a loose attempt (hemra try) listed as one, opening on its attempt's page.
// Needs GATEWAY_URL and RUN_ID; launched by tests/gateway/test_dashboard.py.
import assert from 'node:assert/strict';
import test from 'node:test';
import { launch } from './chromium.mjs';

test('a cancelled run offers hemra resume and hemra repair, with its unscored trials per cell', async () => {
  const browser = await launch({ viewport: { width: 1400, height: 1000 } });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(`${process.env.GATEWAY_URL}/#/runs/${process.env.RUN_ID}`);
    await page.waitForSelector('#unscored');
    const commands = await page.locator('#unscored pre.command').allTextContents();
    assert.deepEqual(commands, [`hemra resume ${process.env.RUN_ID}`, `hemra repair ${process.env.RUN_ID} --cancelled`]);
    const cells = await page.locator('#unscored table.unscored tr td').allTextContents();
    assert.deepEqual(cells, ['hemra-offline', 'nop', '0', '0', '2', '0']);
    assert.equal(await page.locator('#unscored button, #unscored form').count(), 0);
    // attempts cancelled while queued never ran: the charts show no 0-second wall times for them
    await page.goto(`${process.env.GATEWAY_URL}/#/runs/${process.env.RUN_ID}?tab=charts`);
    await page.waitForSelector('#no-wall');
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});

test('a loose attempt is listed as one and opens on its attempt page, never a report', async () => {
  const browser = await launch({ viewport: { width: 1400, height: 1000 } });
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(`${process.env.GATEWAY_URL}/#/runs?kind=loose`);
    await page.waitForSelector('table.runs');
    const rows = await page.locator('table.runs tr.run-row').allTextContents();
    assert.equal(rows.length, 1);
    assert.match(rows[0], /tried.*loose attempt/);
    await page.locator('table.runs a.run-link').click();
    await page.waitForURL(/#\/attempts\/a-/);
    await page.waitForFunction(() => /^Attempt a-/.test(document.querySelector('h1')?.textContent || ''));
    assert.match(await page.locator('h1').first().textContent(), /^Attempt a-\w+ passed/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
