import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, login, shot, ADMIN_PASSWORD, MERCHANT_PASSWORD} from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('a wrong password is refused on the login page', async () => {
  const context = await browser.newContext({baseURL: process.env.LIVEHAT_URL});
  const page = await context.newPage();
  await page.goto('/streams');
  await page.waitForURL(/\/login/);
  await page.fill('#username', 'merchant');
  await page.fill('#password', 'not the password');
  await page.click('button[type=submit]');
  await page.locator('.toast.error').waitFor();
  assert.match(await page.locator('.toast.error').textContent(), /wrong username or password/);
  await shot(page, 'login');
  await context.close();
});

test('the merchant sees only their streams and edits one', async () => {
  const page = await login(browser, 'merchant', MERCHANT_PASSWORD);
  await page.goto('/streams');
  await page.locator('#streams-table').waitFor();
  const rows = await page.locator('#streams-table tbody tr').count();
  assert.equal(rows, 1);
  await page.click('#streams-table a >> text=Demo beauty stream');
  await page.locator('#stream-form').waitFor();
  await page.fill('#f-persona', 'A cheerful host <script>window.pwned=1</script>');
  await page.click('#stream-form button[type=submit]');
  await page.locator('.toast >> text=Saved').waitFor();
  await page.locator('#stream-form >> text=Revision 2').waitFor();
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  await shot(page, 'streams');
  // The merchant has no operator pages.
  assert.equal(await page.locator('#nav a[href="/harnesses"]').count(), 0);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('the operator creates an API token', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  await page.goto('/settings');
  await page.locator('#tokens form input[name=name]').fill('ci');
  await page.click('#tokens form button[type=submit]');
  const secret = await page.locator('#token-secret').textContent();
  assert.match(secret, /^lh_/);
  const res = await page.request.get('/api/streams', {headers: {Authorization: 'Bearer ' + secret}});
  assert.equal(res.status(), 200);
  await shot(page, 'settings');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
