// The Plugins page: the operator uploads a package packed by the real
// `livehat plugin pack`, sees it listed, tries one of its tools against the
// demo stream's catalog, and switches it off.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join, resolve} from 'node:path';
import {launch, login, shot, ADMIN_PASSWORD} from './lib.mjs';

let browser;
let packDir;
let lhp;

before(async () => {
  // Pack examples/plugins/shop with the CLI a plugin developer uses; the
  // module build and the sandbox compilation are cached across runs.
  packDir = mkdtempSync(join(tmpdir(), 'livehat-e2e-plugin-'));
  lhp = join(packDir, 'shop-tools-1.0.0.lhp');
  execFileSync('go', ['run', '.', 'plugin', 'pack', 'examples/plugins/shop', '-o', lhp],
    {cwd: resolve(import.meta.dirname, '..', '..'), stdio: 'pipe', timeout: 240000});
  browser = await launch();
});
after(async () => {
  await browser?.close();
  if (packDir) rmSync(packDir, {recursive: true, force: true});
});

test('the operator uploads a plugin, tries a tool and switches it off', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  await page.goto('/plugins');
  await page.locator('#upload-form').waitFor();
  await page.setInputFiles('#package-file', lhp);
  await page.click('#upload-form button[type=submit]');
  const row = page.locator('#plugins-table tr[data-plugin="shop-tools"]');
  await row.waitFor();
  assert.equal((await row.locator('td').nth(1).textContent()).trim(), '1.0.0');
  assert.match(await row.textContent(), /unsigned/);

  // The upload opens the plugin: its versions and the trial panel.
  await page.locator('#plugin-versions tr[data-version="1.0.0"]').waitFor();
  await page.selectOption('#try-export', {label: 'tool: lookup_product'});
  await page.fill('#try-input', '{"query": "serum"}');
  await page.selectOption('#try-catalog-source', {label: 'Stream: Demo beauty stream'});
  await page.click('#try-run');
  await page.locator('#try-output').waitFor();
  assert.match(await page.locator('#try-output').textContent(), /p-serum/);
  assert.match(await page.locator('#try-latency').textContent(), /ms|s$/);
  // The trial is counted in the table.
  await page.locator('#plugins-table tr[data-plugin="shop-tools"] td.calls >> text=1').waitFor();

  // Arguments the tool's schema refuses come back as the plugin's error.
  await page.selectOption('#try-export', {label: 'tool: check_stock'});
  await page.fill('#try-input', '{"quantity": 0}');
  await page.click('#try-run');
  await page.locator('#try-error').waitFor();
  assert.match(await page.locator('#try-error').textContent(), /input rejected/);

  // Switch it off: live streams run without it from their next turn.
  await row.locator('button.toggle').click();
  await page.locator('#plugins-table tr[data-plugin="shop-tools"] td.state >> text=disabled').waitFor();
  // The trial's result stays on the page across the refresh.
  assert.match(await page.locator('#try-error').textContent(), /input rejected/);
  await shot(page, 'plugins');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a broken package is refused with the reason', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  await page.goto('/plugins');
  await page.locator('#upload-form').waitFor();
  await page.setInputFiles('#package-file', {name: 'broken.lhp', mimeType: 'application/zip', buffer: Buffer.from('<script>window.pwned=1</script>')});
  await page.click('#upload-form button[type=submit]');
  await page.locator('.toast.error').waitFor();
  assert.match(await page.locator('.toast.error').textContent(), /not a zip archive/);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
