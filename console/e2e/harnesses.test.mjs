import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, login, shot, ADMIN_PASSWORD, MERCHANT_PASSWORD} from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the operator edits a draft, runs the release gate, publishes and rolls back', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  page.on('dialog', (d) => d.accept());
  await page.goto('/harnesses');
  await page.locator('#versions-table tbody tr').first().waitFor();
  const before = await page.locator('#versions-table tbody tr').count();
  assert.ok(before >= 1);

  // Open a draft of the newest version and edit it.
  await page.locator('#versions-table tbody tr').first().locator('text=Edit as draft').click();
  await page.locator('#draft-form').waitFor();
  const doc = await page.inputValue('#d-document');
  assert.match(doc, /"name": "demo-live-shop"/);
  await page.fill('#d-document', doc.replace('"description": "', '"description": "Edited in the browser test. '));
  await page.fill('#d-notes', 'e2e <img src=x onerror="window.pwned=1">');
  await page.click('#draft-save');
  await page.locator('#draft-meta >> text=Revision 2').waitFor();

  // Validate, diff and preview an HSA variant side by side.
  await page.click('#draft-validate');
  await page.locator('#draft-side >> text=Valid').waitFor();
  await page.click('#draft-diff');
  await page.locator('#draft-side table.changes >> text=description').waitFor();
  await page.selectOption('#hsa-family', 'tool-rename');
  await page.click('#hsa-form button[type=submit]');
  await page.locator('#hsa-variant').waitFor();
  assert.notEqual(await page.locator('#hsa-base').textContent(), await page.locator('#hsa-variant').textContent());

  // Commit: the new version is the gate's candidate; run the gate small.
  await page.click('#draft-commit');
  await page.locator('.toast >> text=Committed version').waitFor();
  await page.locator('#versions-table tbody tr').nth(before).waitFor();
  await page.fill('#g-n', '2');
  await page.click('#gate-run');
  await page.locator('#gate-table').waitFor({timeout: 90_000});
  const state = await page.locator('#gate-state .badge').first().textContent();
  assert.ok(['passed', 'regressed'].includes(state), 'gate state ' + state);
  // The four live-room suites, and the stream's replayed questions once it has any.
  const suites = await page.locator('#gate-table tr.suite-row td:first-child').allTextContents();
  assert.deepEqual(suites.filter((s) => s !== 'replay'), ['hvqa', 'lsqa', 'robust', 'strategy']);

  // Publish the candidate to the demo stream through the gate.
  await page.click('#gate-publish');
  await page.locator('#publish-form').waitFor();
  await page.locator('#p-streams input[type=checkbox]').first().check();
  if (state === 'regressed') await page.fill('#p-override', 'browser test: ship despite a small-n regression');
  await page.click('#publish-submit');
  await page.locator('.toast >> text=Published').waitFor();
  await page.locator('#releases-table tbody tr').nth(1).waitFor();
  await page.locator('#compat-table').waitFor();
  await shot(page, 'harnesses');

  // Roll it back in one click.
  await page.locator('#releases-table tbody tr').first().locator('button >> text=Roll back').click();
  await page.locator('.toast >> text=Rolled back: 1 streams restored').waitFor();

  // The evolution page lists the gate's failures (if any) and the history.
  await page.goto('/evolution');
  await page.locator('#evo-version').waitFor();
  await page.locator('#loops h2 >> text=History').waitFor();
  await shot(page, 'evolution');

  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a merchant has no harness management', async () => {
  const page = await login(browser, 'merchant', MERCHANT_PASSWORD);
  const res = await page.request.get('/api/releases');
  assert.equal(res.status(), 403);
  assert.equal(await page.locator('#nav a[href="/evolution"]').count(), 0);
  await page.context().close();
});
