import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, login, shot, ADMIN_PASSWORD} from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const INJECTION = '<img src=x onerror="window.pwned=1"> tiny run';

// points reads how many points a chart box of the open run draws.
async function points(page, id) {
  return Number(await page.locator('#chart-' + id).getAttribute('data-points'));
}

test('the operator starts a tiny training run, watches its curve move and promotes it', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  await page.goto('/runs');
  await page.locator('#run-form').waitFor();
  await page.selectOption('#r-stage', 'sft');
  await page.fill('#r-name', INJECTION);
  await page.selectOption('#r-model', 'tiny');
  for (const [name, value] of Object.entries({steps: 8, batch: 1, lr: 0.01, rooms: 2, questions: 5, max_items: 2,
    vocab_size: 1000, save_every: 4, threads: 1})) {
    await page.fill('#r-' + name, String(value));
  }
  await page.click('#run-form button[type=submit]');
  await page.locator('#run-detail').waitFor();
  // The loss curve grows as metrics arrive over SSE.
  await page.waitForFunction(() => Number(document.querySelector('#chart-loss')?.dataset.points) >= 2, null, {timeout: 90000});
  const early = await points(page, 'loss');
  await page.waitForFunction((n) => Number(document.querySelector('#chart-loss').dataset.points) > n, early, {timeout: 90000});
  assert.ok(await points(page, 'loss') > early);
  assert.equal(await page.locator('#chart-loss svg path').count() >= 1, true);
  // The name is shown as text, never as markup.
  await page.locator('#runs-table >> text=' + INJECTION).first().waitFor();
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await page.locator('#runs-table img').count(), 0);
  await page.locator('#run-head .badge.state >> text=done').waitFor({timeout: 90000});
  await shot(page, 'runs');
  await page.click('#run-promote');
  await page.locator('#serving >> text=promoted by admin').waitFor();
  // Back to the configured model, so the other specs' live rooms are not
  // served by an eight-step model.
  await page.click('#serving button');
  await page.locator('#serving >> text=The console\'s configured model').waitFor();
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('the operator runs an evaluation and opens an item', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  await page.goto('/evals');
  await page.locator('#eval-form').waitFor();
  await page.selectOption('#e-suite', 'lsqa');
  await page.fill('#e-n', '3');
  await page.selectOption('#e-model', 'expert');
  await page.click('#eval-form button[type=submit]');
  await page.locator('#items-table tbody tr').nth(2).waitFor({timeout: 90000});
  assert.equal(await page.locator('#items-table tbody tr').count(), 3);
  await page.locator('#items-table tbody tr').first().click();
  await page.locator('#item-question').waitFor();
  assert.notEqual((await page.locator('#item-question').textContent()).trim(), '');
  await page.locator('#evals-table tbody tr').first().waitFor();
  // A second evaluation draws the trend over the history.
  await page.fill('#e-n', '2');
  await page.click('#eval-form button[type=submit]');
  await page.locator('#evals-chart svg').waitFor({timeout: 90000});
  assert.equal(await page.locator('#evals-table tbody tr').count(), 2);
  await page.locator('#items-table tbody tr').first().click();
  await page.locator('#item-reasons, #item-detail .kv').first().waitFor();
  await shot(page, 'evals');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
