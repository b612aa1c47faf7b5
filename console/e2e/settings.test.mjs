import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {createServer} from 'node:http';
import {launch, login, shot, ADMIN_PASSWORD} from './lib.mjs';

let browser;
let fake;
const seen = []; // the Authorization header of each request the fake server got

// fake is an OpenAI-compatible server that streams a one-word answer.
function startFake() {
  return new Promise((resolve) => {
    const srv = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        if (req.url !== '/v1/chat/completions') { res.writeHead(404).end('{"error":{"message":"not found"}}'); return; }
        seen.push(req.headers.authorization || '');
        res.writeHead(200, {'Content-Type': 'text/event-stream'});
        res.end('data: {"model":"e2e-qwen","choices":[{"delta":{"content":"OK"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
      });
    });
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

before(async () => { browser = await launch(); fake = await startFake(); });
after(async () => { await browser?.close(); fake?.close(); });

test('the operator serves the organisation and one stream from a model server, the key write-only, in English and Chinese', async () => {
  const page = await login(browser, 'admin', ADMIN_PASSWORD);
  const url = 'http://127.0.0.1:' + fake.address().port;
  const host = url.slice('http://'.length);
  const [demo] = await (await page.request.get('/api/streams')).json();
  try {
    await page.goto('/settings');
    await page.locator('#serving-org-form').waitFor();
    assert.match(await page.locator('#serving-org-state').textContent(), /console's model/);
    assert.equal(await page.locator('#serving-org-key-state').textContent(), 'not set');

    // Test what the form holds before saving: the key goes to the server.
    await page.fill('#serving-org-url', url);
    await page.fill('#serving-org-model', 'qwen');
    await page.fill('#serving-org-api_key', 'sk-e2e-secret');
    await page.fill('#serving-org-timeout_s', '5');
    await page.click('#serving-org-test');
    await page.locator('#serving-org-test-result >> text=Connected').waitFor();
    assert.match(await page.locator('#serving-org-test-result').textContent(), /e2e-qwen answered in/);
    assert.equal(seen.at(-1), 'Bearer sk-e2e-secret');

    await page.click('#serving-org-form button[type=submit]');
    await page.locator('#serving-org-state >> text=model server qwen at ' + host).waitFor();
    assert.equal(await page.locator('#serving-org-key-state').textContent(), 'set');
    assert.equal(await page.locator('#serving-org-api_key').inputValue(), '', 'the key is never shown again');
    assert.equal(await page.locator('#serving-org-timeout_s').inputValue(), '5');
    assert.ok(!(await page.content()).includes('sk-e2e-secret'), 'the page holds no key');
    const stored = await (await page.request.get('/api/serving-model')).text();
    assert.ok(!stored.includes('sk-e2e-secret') && stored.includes('"has_api_key":true'), stored);

    // Testing again with the key field empty uses the stored key.
    await page.click('#serving-org-test');
    await page.locator('#serving-org-test-result >> text=Connected').waitFor();
    assert.equal(seen.at(-1), 'Bearer sk-e2e-secret');

    // A server that is not there: the test says why.
    await page.fill('#serving-org-url', 'http://127.0.0.1:9');
    await page.click('#serving-org-test');
    await page.locator('#serving-org-test-result >> text=Failed (unreachable)').waitFor();

    // One stream of its own.
    await page.selectOption('#serving-stream-picker', demo.id);
    // The forms are drawn again for the stream picked; typing before that
    // would go into the forms it replaces.
    await page.locator(`#serving[data-stream="${demo.id}"]`).waitFor();
    assert.match(await page.locator('#serving-stream-state').textContent(), /organisation's model \(qwen at /);
    await page.fill('#serving-stream-url', url);
    await page.fill('#serving-stream-model', 'big');
    await page.click('#serving-stream-form button[type=submit]');
    await page.locator('#serving-stream-state >> text=own model server big at ' + host).waitFor();
    const stats = await (await page.request.get('/api/streams/' + demo.id + '/live/stats')).json();
    assert.equal(stats.model, 'big at ' + host, 'the live view names the stream\'s server');
    await page.click('#serving-stream-test');
    await page.locator('#serving-stream-test-result >> text=Connected').waitFor();
    assert.equal(seen.at(-1), '', 'the stream\'s server has no key');
    await shot(page, 'settings-serving-en');
    assert.deepEqual(page.problems, []);

    const zh = await login(browser, 'admin', ADMIN_PASSWORD, {locale: 'zh-CN'});
    await zh.goto('/settings');
    await zh.locator('#serving-org-form').waitFor();
    assert.equal(await zh.locator('#serving h2').textContent(), '推理模型');
    assert.equal(await zh.locator('#serving-org-key-state').textContent(), '已设置');
    assert.match(await zh.locator('#serving-org-state').textContent(), /本组织的直播间使用推理服务 qwen at /);
    assert.equal(await zh.locator('#serving-org-test').textContent(), '测试连接');
    assert.equal(await zh.title(), 'LiveHAT · 设置');
    await shot(zh, 'settings-serving-zh');
    assert.deepEqual(zh.problems, []);
    await zh.context().close();

    // Back to the console's model, stream first.
    await page.click('#serving-stream-reset');
    await page.locator('#serving-stream-state >> text=uses the organisation\'s model').waitFor();
    await page.click('#serving-org-reset');
    await page.locator('#serving-org-state >> text=console\'s model').waitFor();
  } finally {
    // Later tests expect the bundled model, whatever happened here.
    await page.request.delete('/api/serving-model/streams/' + demo.id, {headers: {'X-CSRF-Token': await csrf(page)}});
    await page.request.delete('/api/serving-model', {headers: {'X-CSRF-Token': await csrf(page)}});
    await page.context().close();
  }
});

// csrf is the session's CSRF token, which the API wants on writes.
async function csrf(page) {
  return (await (await page.request.get('/api/me')).json()).csrf;
}
