// Headless Debian chromium (playwright-core) as every browser test here launches it: a fresh
// --user-data-dir (playwright passes it for a persistent context), nothing that dials out.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export function launch(options = {}) {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hemra-chromium-')), {
    ...options,
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
