import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, login, shot, ADMIN_PASSWORD, MERCHANT_PASSWORD} from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// The demo catalog plus a hoodie, as a merchant's spreadsheet export.
const CATALOG = [
  'id,name,aliases,price,list_price,stock,variants,size_chart,shipping_days,shipping_fee,return_days',
  'p-hoodie,加绒卫衣,卫衣|hoodie,159,199,,M:0|L:30,M:155-168:45-60|L:165-178:58-75,2,0,7',
  'p-serum,玻尿酸精华,精华|hyaluronic serum|serum,199,299,120,,,,,',
  'p-cream,修护面霜,面霜|repair cream|cream,259,359,8,,,,,',
  'p-sunscreen,清透防晒霜,防晒|sunscreen|spf50,129,169,0,,,,,',
  'p-lipstick,丝绒口红,口红|velvet lipstick|lipstick,89,129,300,,,,,',
].join('\n') + '\n';

const INJECTION = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';

test('the merchant imports a catalog and the avatar answers from it in the live view', async () => {
  const page = await login(browser, 'merchant', MERCHANT_PASSWORD);
  const [demo] = await (await page.request.get('/api/streams')).json();
  const stats = await (await page.request.get('/api/streams/' + demo.id + '/live/stats')).json();
  assert.match(stats.model, /bundled HAT model/, 'serve answers with the bundled model by default');
  await page.goto('/streams');
  await page.click('#streams-table a >> text=Demo beauty stream');
  await page.locator('#catalog-import').waitFor();

  // A file with a bad row stores nothing and says which row is wrong.
  await page.setInputFiles('#catalog-file', {name: 'bad.csv', mimeType: 'text/csv',
    buffer: Buffer.from('id,name,price,stock\np-a,A,ten,1\n,B,5,1\n')});
  await page.click('#catalog-submit');
  await page.locator('#catalog-problem-table').waitFor();
  const rows = await page.locator('#catalog-problem-table tbody tr').allTextContents();
  assert.equal(rows.length, 2);
  assert.match(rows[0], /^2price"ten" is not a number/);
  assert.match(rows[1], /^3id.*is not an id/);

  await page.setInputFiles('#catalog-file', {name: 'catalog.csv', mimeType: 'text/csv', buffer: Buffer.from(CATALOG)});
  await page.click('#catalog-submit');
  await page.locator('.toast >> text=Catalog imported').waitFor();
  await page.locator('#catalog-result >> text=5 products').waitFor();

  await page.click('#streams-table a >> text=Live view');
  await page.waitForURL(/\/live\?stream=/);
  await page.locator('#session-info >> text=bundled HAT model').waitFor();

  // Ask as a viewer: the answer streams in, with the tool call in the trace.
  await page.fill('#viewer-text', '卫衣多少钱？');
  await page.click('#send');
  const answer = page.locator('#avatar .answer').last();
  await answer.locator('.chunk').first().waitFor();
  await page.locator('#traces .trace').first().locator('table.tools td', {hasText: /^product_lookup$/}).waitFor();
  assert.match(await answer.textContent(), /159元/);
  const trace = await page.locator('#traces .trace').first().textContent();
  assert.match(trace, /compliance/);
  assert.match(trace, /卫衣多少钱/);

  // A quick question in English.
  await page.click('#quick button >> text=/^How much is the/');
  await page.locator('#traces .trace').nth(1).waitFor();

  // Viewer text is shown as text, never as markup.
  await page.fill('#viewer-text', INJECTION);
  await page.click('#send');
  await page.locator('#chat-log .chat-line .text', {hasText: 'onerror'}).first().waitFor();
  assert.equal(await page.locator('#chat-log .chat-line .text', {hasText: 'onerror'}).first().textContent(), INJECTION);
  await page.locator('#traces .trace h3', {hasText: 'onerror'}).first().waitFor();
  assert.equal(await page.locator('#main img').count(), 0);
  assert.equal(await page.locator('#main script').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);

  // In Chinese, the turns' outcomes and hook decisions are words too.
  const zh = await login(browser, 'merchant', MERCHANT_PASSWORD, {locale: 'zh-CN'});
  await zh.goto('/live?stream=' + demo.id);
  await zh.locator('#traces .trace [data-outcome="replied"]').first().waitFor();
  assert.equal(await zh.locator('#traces .trace [data-outcome="replied"]').first().textContent(), '已回答');
  assert.ok((await zh.locator('#traces .trace table.hooks').first().textContent()).includes('通过'));
  await zh.context().close();

  // Latency statistics and the histogram.
  await page.locator('#turn-count b >> text=/^([3-9]|[1-9][0-9]+)$/').waitFor();
  assert.notEqual((await page.locator('#p50 b').textContent()).trim(), '');
  assert.equal(await page.locator('#histogram svg rect').count() > 0, true);

  // A merchant goes on air through the go-live checklist, shown in the live
  // view: the demo stream has not been rehearsed, so it blocks, links to the
  // stream page's checklist, and nothing goes on air.
  await page.click('#air-toggle');
  await page.locator('#golive-card #golive-checks li[data-code="rehearsal_missing"][data-level="block"]').waitFor();
  assert.equal(await page.locator('#golive-go').isDisabled(), true);
  assert.match(await page.locator('#golive-page').getAttribute('href'), /^\/streams\?focus=golive#/);
  await shot(page, 'live-checklist');
  await page.click('#golive-close');
  assert.equal(await page.locator('#golive-card').count(), 0);
  assert.match(await page.locator('#air-state').textContent(), /^off air$/);
  const unchecked = await page.evaluate((sid) => LiveHAT.api('POST', '/api/streams/' + sid + '/live/air', {on_air: true}).then(() => 'on air', (e) => e.code), demo.id);
  assert.equal(unchecked, 'golive_required', 'the unchecked switch is not the merchant\'s');

  // The operators' switch puts it on air (the live view follows); the
  // merchant stops it from the live view.
  const admin = await login(browser, 'admin', ADMIN_PASSWORD);
  const csrf = (await (await admin.request.get('/api/me')).json()).csrf;
  const res = await admin.request.post('/api/streams/' + demo.id + '/live/air', {data: {on_air: true}, headers: {'X-CSRF-Token': csrf}});
  assert.equal(res.status(), 200, await res.text());
  await admin.context().close();
  await page.locator('#air-state >> text=/^on air$/').waitFor();
  await shot(page, 'live');
  await page.click('#air-toggle');
  await page.locator('#air-state >> text=/^off air$/').waitFor();
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
