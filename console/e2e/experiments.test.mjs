import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, login, shot, BASE, ADMIN_PASSWORD} from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the operator runs an experiment and sees the shop events per arm', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  await page.goto('/experiments');
  const form = page.locator('#new-experiment');
  await form.waitFor();
  // A name with markup must show as text.
  const name = 'coupon A/A <img src=x onerror="window.pwned=1">';
  await form.locator('input[name=name]').fill(name);
  await form.locator('select[name=unit]').selectOption('stream');
  await form.locator('input[name=attribution_window_minutes]').fill('0');
  await form.locator('input[name=planned_units_per_arm]').fill('1');
  await form.locator('select[name="arms[1].harness_version"]').selectOption({index: 1});
  await form.locator('button[type=submit]').click();
  await page.locator('#experiment-card span.badge:text-is("draft")').waitFor();
  assert.equal(await page.locator('#experiment-card h2').textContent(), name);

  await page.click('#start-experiment');
  await page.locator('#experiment-card span.badge:text-is("running")').waitFor();
  await page.locator('#arm-table').waitFor();

  // The shop side posts events with an API token, as a script would.
  const {secret, stream} = await page.evaluate(async () => {
    const tok = await LiveHAT.api('POST', '/api/tokens', {name: 'shop events'});
    const id = new URLSearchParams(location.search).get('id');
    const x = await LiveHAT.api('GET', '/api/experiments/' + id);
    return {secret: tok.secret, stream: x.streams[0].stream_id};
  });
  const now = new Date().toISOString();
  const batch = {events: [
    {id: 'e2e-view-1', viewer_id: 'viewer-1', item_id: 'p-serum', kind: 'item_view', time: now},
    {id: 'e2e-buy-1', viewer_id: 'viewer-1', item_id: 'p-serum', kind: 'purchase', amount_minor: 19900, currency: 'CNY', time: now},
    {id: 'e2e-bad-1', viewer_id: 'viewer-2', item_id: 'no-such-item', kind: 'item_view', time: now},
  ]};
  const post = async () => {
    const res = await fetch(BASE + '/api/streams/' + stream + '/events', {method: 'POST',
      headers: {Authorization: 'Bearer ' + secret, 'Content-Type': 'application/json'}, body: JSON.stringify(batch)});
    assert.equal(res.status, 200);
    return res.json();
  };
  const first = await post();
  assert.equal(first.accepted, 2);
  assert.equal(first.rejected, 1);
  assert.match(first.events[2].reason, /not in the catalog/);
  const again = await post();
  assert.equal(again.duplicates, 2);
  assert.equal(again.accepted, 0);

  await page.reload();
  const table = page.locator('#arm-table');
  await table.waitFor();
  assert.equal(await table.locator('tbody tr').count(), 2);
  // The stream's arm has the purchase: 199.00 yuan of GMV.
  await table.locator('td >> text=199.00').waitFor();
  // One stream cannot reach a verdict: it is withheld, with the progress shown.
  await page.locator('#peeking-warning').waitFor();
  await page.locator('#chart-primary svg').waitFor();
  await shot(page, 'experiments');
  // Metrics read as names, not ids, in either language.
  assert.ok((await table.locator('thead').textContent()).includes('Conversion rate'));
  const zh = await login(browser, 'admin', ADMIN_PASSWORD, {locale: 'zh-CN'});
  await zh.goto(page.url());
  await zh.locator('#arm-table').waitFor();
  const zhHead = await zh.locator('#arm-table thead').textContent();
  assert.ok(zhHead.includes('转化率') && !zhHead.includes('conversion_rate'), zhHead);
  assert.deepEqual(zh.problems, []);
  await zh.context().close();

  await page.click('#stop-experiment');
  await page.locator('#experiment-card span.badge:text-is("stopped")').waitFor();
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
