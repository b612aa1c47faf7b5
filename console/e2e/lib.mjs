// Shared helpers of the browser suite. The Go test (browser_test.go at the
// repository root) starts `livehat serve` on a fresh data folder and passes
// its address and the first-run passwords in the environment.
import {chromium} from 'playwright-core';
import {mkdirSync} from 'node:fs';
import {join} from 'node:path';

export const BASE = process.env.LIVEHAT_URL;
export const ADMIN_PASSWORD = process.env.LIVEHAT_ADMIN_PASSWORD;
export const MERCHANT_PASSWORD = process.env.LIVEHAT_MERCHANT_PASSWORD;
const SHOTS = process.env.LIVEHAT_SCREENSHOTS || 'screenshots';
if (!BASE) throw new Error('LIVEHAT_URL is not set: run the suite through `go test -run TestBrowser .`');

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

// login opens a new page logged in as user and returns it. Console errors
// and failed requests other than expected 4xx answers are collected on
// page.problems so that a test can assert the page ran cleanly. opts.locale
// is the browser's language ("zh-CN"), which picks the console's locale;
// the default is en-US, so that pages read in English whatever the host says.
export async function login(browser, username, password, opts = {}) {
  const context = await browser.newContext({baseURL: BASE, viewport: {width: 1280, height: 860}, locale: opts.locale || 'en-US'});
  const page = watch(await context.newPage());
  await page.goto('/login');
  await page.fill('#username', username);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/login')), page.click('button[type=submit]')]);
  return page;
}

// watch collects a page's console errors and page errors (other than
// expected 4xx answers) on page.problems.
export function watch(page) {
  page.problems = [];
  page.on('pageerror', (err) => page.problems.push('page error: ' + err.message));
  page.on('console', (msg) => { if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) page.problems.push('console: ' + msg.text()); });
  return page;
}

// shot writes a full-page screenshot named after the page.
export async function shot(page, name) {
  mkdirSync(SHOTS, {recursive: true});
  await page.screenshot({path: join(SHOTS, name + '.png'), fullPage: true});
}
