// A computer-use attempt's screenshots in the trace viewer, in headless Debian chromium
// (playwright-core). Needs GATEWAY_URL and ATTEMPT_ID (an attempt of a computer-use harness);
// launched by tests/e2e/test_computer_use.py.
import assert from 'node:assert/strict';
import test from 'node:test';
import { launch } from './chromium.mjs';

const URL_ = process.env.GATEWAY_URL;
const ATTEMPT = process.env.ATTEMPT_ID;

test('the timeline shows each screenshot as an image, and the event detail shows it whole', async () => {
  assert.ok(URL_ && ATTEMPT, 'GATEWAY_URL and ATTEMPT_ID must be set');
  const browser = await launch();
  const problems = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(`${URL_}/#/attempts/${ATTEMPT}`);
    const thumb = page.locator('.event-row[data-type="tool_result"] img.shot-thumb').first();
    await thumb.waitFor();
    // Loaded and decoded as a PNG at the model's screen size (an image the browser refused has no size).
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await thumb.elementHandle());
    assert.deepEqual(await thumb.evaluate((el) => [el.naturalWidth, el.naturalHeight]), [1024, 640]);
    assert.match(await thumb.getAttribute('src'), /^\/api\/attempts\/a-[^/]+\/images\/logs\/agent\/screenshots\/0001\.png$/);

    await page.locator('.event-row[data-type="tool_result"]').first().click();
    const whole = page.locator('#event-detail:not([hidden]) img.shot');
    await whole.waitFor();
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await whole.elementHandle());
    assert.equal(await whole.evaluate((el) => el.naturalWidth), 1024);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
