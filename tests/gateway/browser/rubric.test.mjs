// An attempt's rubric on the dashboard's attempt page, in headless Debian chromium: every
// criterion with its state, the filter links in the URL, errors never shown as failures;
// and the criteria of a compare.
// Needs GATEWAY_URL and ATTEMPT_ID; launched by tests/gateway/test_dashboard.py.
import assert from 'node:assert/strict';
import test from 'node:test';
import { launch } from './chromium.mjs';

test('the attempt page lists its rubric and filters it from the URL', async () => {
  const browser = await launch();
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${process.env.GATEWAY_URL}/#/attempts/${process.env.ATTEMPT_ID}`);
    await page.waitForSelector('#rubric table.judgments');
    assert.equal(await page.locator('#rubric h2').textContent(), 'Rubric (6 criteria)');
    assert.equal(await page.locator('#rubric tr.judgment').count(), 6);
    assert.equal(await page.locator('#rubric tr.judgment-error').count(), 1);
    const empty = page.locator('#rubric tr.judgment', { hasText: 'handles_empty_input' });
    assert.match(await empty.textContent(), /failed/);
    assert.match(await empty.textContent(), /An empty file counts 0 words/);

    await page.locator('#rubric nav a', { hasText: 'failed (3)' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#rubric tr.judgment').length === 3);
    assert.match(page.url(), /judgments=failed/);
    assert.equal(await page.locator('#rubric tr.judgment-failed').count(), 3);
    await page.reload();
    await page.waitForSelector('#rubric table.judgments');
    assert.equal(await page.locator('#rubric tr.judgment').count(), 3);

    await page.locator('#rubric nav a', { hasText: 'errors (1)' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#rubric tr.judgment').length === 1);
    assert.match(await page.locator('#rubric tr.judgment').textContent(), /not JSON after 3 tries/);

    // mathematics typeset by KaTeX (its own chunk, stylesheet and fonts from the gateway, under
    // the CSP), in the task's instruction and in a model's message; what does not parse stays
    await page.locator('#instruction summary').click();
    await page.waitForSelector('#instruction .instruction-text.typeset .katex');
    assert.equal(await page.locator('#instruction .katex').count(), 1);
    assert.match(await page.locator('#instruction .instruction-text').innerText(), /leave \\\(\\nosuchmacro\{x\}\\\) as written/);
    const message = page.locator('.event-row', { hasText: 'assistant' });
    await message.click();
    await page.waitForSelector('#event-detail pre.payload.typeset .katex-display');
    assert.match(await page.locator('#event-detail pre.payload').innerText(), /costing \$5 or \$6/);
    // KaTeX's own layout classes (vlist) take none of the page's styles
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('#event-detail .katex .vlist')).borderTopWidth), '0px');
    assert.ok(await page.evaluate(async () => { await document.fonts.ready; return [...document.fonts].some((f) => f.family.includes('KaTeX') && f.status === 'loaded'); }));

    // compare: the criteria both sides were judged on (the error left out), b − a on each
    await page.goto(`${process.env.GATEWAY_URL}/#/compare?a=judged%2Foracle&b=judged%2Fnop`);
    await page.waitForSelector('table.criteria-table');
    // the task's rubric (5 judged on both sides) and the HEMRA judge's 2 criteria
    assert.equal(await page.locator('tr.criterion').count(), 7);
    assert.match(await page.locator('tr.criterion', { hasText: 'quality / sandbox_ready' }).textContent(), /judge-model-1/);
    assert.match(await page.locator('tr.criterion', { hasText: 'quality / readability' }).textContent(), /0\.75/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});

test('the attempt page shows HEMRA judge records and their raw calls; the Judges view lists the judge', async () => {
  const browser = await launch();
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${process.env.GATEWAY_URL}/#/attempts/${process.env.ATTEMPT_ID}`);
    await page.waitForSelector('#judge-scores .judge-score');
    const judged = page.locator('#judge-scores .judge-score[data-judge="quality"]');
    assert.match(await judged.locator('h3').textContent(), /^quality sha256:/);
    assert.match(await judged.locator('p').first().textContent(), /model judge-model-1/);
    // each criterion with its state; the filter of the URL applies here too
    assert.equal(await judged.locator('tr.judgment').count(), 2);
    assert.match(await judged.locator('tr.judgment', { hasText: 'sandbox_ready' }).textContent(), /passed/);
    // the calls: the unreadable answer, then the re-ask; each body downloadable byte for byte
    await judged.locator('details.judge-calls summary').click();
    assert.equal(await judged.locator('tr.judge-call').count(), 2);
    assert.match(await judged.locator('tr.judge-call').first().textContent(), /unparseable/);
    const href = await judged.locator('tr.judge-call').first().locator('a', { hasText: 'request' }).getAttribute('href');
    const request = await page.evaluate(async (url) => (await fetch(url)).text(), href);
    assert.equal(JSON.parse(request).model, 'judge-model-1');
    const response = await judged.locator('tr.judge-call').first().locator('a', { hasText: 'response' }).getAttribute('href');
    assert.match(await page.evaluate(async (url) => (await fetch(url)).text(), response), /I would rather not say/);
    // a digest that is not one of this attempt's calls is not served
    const other = href.replace(/sha256%3A[0-9a-f]{8}/, 'sha256%3A00000000');
    assert.equal(await page.evaluate(async (url) => (await fetch(url)).status, other), 404);

    await page.locator('#judge-scores nav a', { hasText: 'passed' }).first().click();
    await page.waitForFunction(() => document.querySelectorAll('#judge-scores tr.judgment').length === 1);

    // the Judges view: the judge, its definition, the attempts it judged and the run
    await page.goto(`${process.env.GATEWAY_URL}/#/judges`);
    await page.waitForSelector('tr.judge[data-judge="quality"]');
    const cells = await page.locator('tr.judge[data-judge="quality"] td').allTextContents();
    assert.equal(cells[0], 'quality');
    assert.match(cells[1], /^[0-9a-f]{12}$/); // one definition
    assert.deepEqual(cells.slice(2, 5), ['judge-model-1', '2', '0']); // two attempts judged, none failed
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
