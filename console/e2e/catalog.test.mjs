import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {launch, login, shot, watch, MERCHANT_PASSWORD} from './lib.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

// Each locale's run: the texts the page must show in it, and its own
// stream (named to sort after the demo stream, which other specs take as
// the first).
const RUNS = [
  {locale: 'zh-CN', lang: 'zh-CN', stream: '商品库演示', heading: /商品库/, save: '保存', link: /1号/, conflict: /他人保存了商品库/,
    nav: /直播间/, importProblems: /文件有 \d+ 个问题/, priceProblem: /应为数字/, specProblem: /“abc”不是数字/, tag: 'zh'},
  {locale: 'en-US', lang: 'en', stream: 'Zz catalog demo', heading: /Catalog/, save: 'Save', link: /No\. 1/, conflict: /Someone else saved the catalog/,
    nav: /Streams/, importProblems: /The file has \d+ problem/, priceProblem: /want a number/, specProblem: /"abc" is not a number/, tag: 'en'},
];

const BAD_CSV = 'id,name,price,stock,link\np-a,卫衣,159,,1\np-b,,ten,-3,2\np-c,帽子,29,5,x\n';

// cell is the editor's input of a catalog path ("products[0].price").
const cell = (path) => `[data-path="${path}"]`;

async function catalogOf(page, id) {
  return page.evaluate(async (sid) => LiveHAT.api('GET', '/api/streams/' + sid + '/catalog'), id);
}

async function saved(page) {
  await page.click('#catalog-save');
  await page.locator('#catalog-status').filter({hasText: /(saved|已保存)$/}).waitFor();
}

for (const run of RUNS) {
  test(`a merchant builds a catalog in the editor (${run.locale})`, async () => {
    const page = await login(browser, 'merchant', MERCHANT_PASSWORD, {locale: run.locale});
    assert.match(await page.locator('#nav').textContent(), run.nav);
    const stream = await page.evaluate((name) => LiveHAT.api('POST', '/api/streams', {name}), run.stream);
    await page.goto('/catalog?stream=' + stream.id);
    await page.locator('#catalog-products').waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), run.lang);
    assert.match(await page.locator('h1').textContent(), run.heading);
    assert.equal((await page.locator('#catalog-save').textContent()).trim(), run.save);

    // Products: a required field left empty and a price that is not a
    // number are marked as they are typed, and clear when fixed.
    await page.click('#catalog-add-product');
    await page.fill(cell('products[0].name'), '纯棉T恤');
    await page.fill(cell('products[0].price'), 'abc');
    await page.locator(cell('products[0].price') + '.invalid').waitFor();
    assert.match(await page.locator('#catalog-problem-list').textContent(), run.priceProblem);
    await page.fill(cell('products[0].price'), '59');
    await page.fill(cell('products[0].stock'), '30');
    await page.locator(cell('products[0].price') + '.invalid').waitFor({state: 'detached'});
    await page.click('#catalog-add-product');
    await page.fill(cell('products[1].name'), '每日坚果');
    await page.fill(cell('products[1].price'), '99');
    await page.click('#catalog-add-product');
    await page.fill(cell('products[2].name'), '保温杯');
    await page.fill(cell('products[2].price'), '¥129');

    // Food facts and returns of the nuts.
    await page.click('#catalog-products-table tbody tr:nth-child(2) td.actions button.secondary');
    await page.fill(cell('products[1].ingredients'), '腰果, 巴旦木, 蔓越莓干');
    await page.fill(cell('products[1].allergens'), 'tree_nut');
    await page.fill(cell('products[1].shelf_life_days'), '180');
    await page.selectOption(cell('products[1].returns.accepted'), 'no');

    // A variant on the size axis of the tee, with its own price and stock,
    // a second one whose stock goes over the product's (marked), then fixed.
    await page.click('#catalog-products-table tbody tr:nth-child(1) td.actions button.secondary');
    await page.click('#catalog-add-variant');
    await page.fill(cell('products[0].variants[0].axis'), 'size');
    await page.fill(cell('products[0].variants[0].name'), 'M');
    await page.fill(cell('products[0].variants[0].stock'), '10');
    await page.click('#catalog-add-variant');
    await page.fill(cell('products[0].variants[1].name'), 'L');
    await page.fill(cell('products[0].variants[1].price'), '69');
    await page.fill(cell('products[0].variants[1].stock'), '40');
    await page.locator('#catalog-products-table tbody tr.row-invalid').first().waitFor();
    await page.fill(cell('products[0].variants[1].stock'), '20');
    await page.locator('#catalog-products-table tbody tr.row-invalid').waitFor({state: 'detached'});
    await page.click('#catalog-add-size');
    await page.fill(cell('products[0].size_chart[0].size'), 'M');
    await page.fill(cell('products[0].size_chart[0].min_height_cm'), '160');
    await page.fill(cell('products[0].size_chart[0].max_height_cm'), '170');

    // Specs of the tee: a number with its unit (a value that is not a
    // number is marked, and nothing is saved until it is fixed), a text
    // with its Chinese form, a yes/no.
    await page.click('#catalog-add-spec');
    await page.fill(cell('products[0].specs[0].key'), 'weight_g');
    await page.fill(cell('products[0].specs[0].label'), 'weight');
    await page.fill(cell('products[0].specs[0].label_zh'), '重量');
    await page.selectOption(cell('products[0].specs[0].type'), 'number');
    await page.fill(cell('products[0].specs[0].value'), 'abc');
    await page.locator(cell('products[0].specs[0].value') + '.invalid').waitFor();
    assert.match(await page.locator('#catalog-problem-list').textContent(), run.specProblem);
    await page.click('#catalog-save');
    await page.locator('.toast.error').first().waitFor();
    await page.fill(cell('products[0].specs[0].value'), '180');
    await page.fill(cell('products[0].specs[0].unit'), 'g');
    await page.locator(cell('products[0].specs[0].value') + '.invalid').waitFor({state: 'detached'});
    await page.click('#catalog-add-spec');
    await page.fill(cell('products[0].specs[1].key'), 'material');
    await page.fill(cell('products[0].specs[1].value'), 'cotton');
    await page.fill(cell('products[0].specs[1].value_zh'), '纯棉');
    await page.click('#catalog-add-spec');
    await page.fill(cell('products[0].specs[2].key'), 'machine_washable');
    await page.selectOption(cell('products[0].specs[2].type'), 'bool');
    assert.equal(await page.locator(cell('products[0].specs[2].unit')).count(), 0, 'a yes/no has no unit');

    // A coupon (满99减10) and a promotion (第二件半价 on the tee).
    await page.click('#catalog-add-coupon');
    await page.fill(cell('coupons[0].name'), '满99减10');
    await page.locator(cell('coupons[0].name')).locator('xpath=ancestor::tr').locator('td.nowrap input').fill('10');
    await page.fill(cell('coupons[0].min_spend'), '99');
    await page.click('#catalog-add-promotion');
    await page.fill(cell('promotions[0].title'), '第二件半价');
    await page.selectOption(cell('promotions[0].kind'), 'multi_buy');
    await page.fill(cell('promotions[0].quantity'), '2');
    await page.fill(cell('promotions[0].nth_percent'), '50');
    await page.selectOption(cell('promotions[0].products'), ['p-1']);

    // Link order: the cup to the top by drag and drop, then the nuts down
    // with the keyboard's button.
    const cart = page.locator('#catalog-cart-list li');
    assert.deepEqual(await cart.locator('.cart-name').allTextContents(), ['纯棉T恤', '每日坚果', '保温杯']);
    await cart.nth(2).dragTo(cart.nth(0));
    assert.deepEqual(await cart.locator('.cart-name').allTextContents(), ['保温杯', '纯棉T恤', '每日坚果']);
    await cart.nth(1).locator('[data-move="down"]').click();
    assert.deepEqual(await cart.locator('.cart-name').allTextContents(), ['保温杯', '每日坚果', '纯棉T恤']);
    assert.match(await cart.nth(0).locator('.link-no').textContent(), run.link);
    await page.locator('#catalog-status').filter({hasText: /(no problems|没有问题)$/}).waitFor();
    await shot(page, `catalog-${run.tag}-editor`);
    await saved(page);

    const stored = (await catalogOf(page, stream.id)).catalog;
    const byId = Object.fromEntries(stored.products.map((p) => [p.id, p]));
    assert.deepEqual(stored.products.map((p) => [p.name, p.link]), [['纯棉T恤', 3], ['每日坚果', 2], ['保温杯', 1]]);
    assert.equal(byId['p-3'].price, 129);
    assert.deepEqual(byId['p-1'].variants, [{axis: 'size', name: 'M', stock: 10}, {axis: 'size', name: 'L', price: 69, stock: 20}]);
    assert.deepEqual(byId['p-1'].size_chart, [{size: 'M', min_height_cm: 160, max_height_cm: 170}]);
    assert.deepEqual(byId['p-1'].specs, [{key: 'weight_g', label: 'weight', label_zh: '重量', value: 180, unit: 'g'},
      {key: 'material', value: 'cotton', value_zh: '纯棉'}, {key: 'machine_washable', value: true}]);
    assert.deepEqual(byId['p-2'].allergens, ['tree_nut']);
    assert.deepEqual(byId['p-2'].returns, {accepted: false});
    assert.equal(byId['p-2'].shelf_life_days, 180);
    assert.deepEqual(stored.coupons, [{id: 'c-1', name: '满99减10', amount: 10, min_spend: 99}]);
    assert.deepEqual(stored.promotions, [{id: 'pr-1', title: '第二件半价', kind: 'multi_buy', products: ['p-1'], quantity: 2, nth_percent: 50}]);

    // Import with errors: the table names each row and column, and
    // nothing is stored.
    const before = await catalogOf(page, stream.id);
    await page.setInputFiles('#catalog-import-file', {name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(BAD_CSV)});
    await page.click('#catalog-import-check');
    await page.locator('#catalog-import-problems').waitFor();
    assert.match(await page.locator('#catalog-import-result').textContent(), run.importProblems);
    const problems = await page.locator('#catalog-import-problems tbody tr').evaluateAll((rows) =>
      rows.map((r) => [...r.children].slice(1, 3).map((td) => td.textContent).join(' ')));
    for (const want of ['3 name', '3 price', '3 stock', '4 link']) assert.ok(problems.includes(want), `no problem at row/column ${want}: ${problems}`);
    await page.locator('#catalog-import').scrollIntoViewIfNeeded();
    await shot(page, `catalog-${run.tag}-import-errors`);
    assert.equal((await catalogOf(page, stream.id)).catalog_revision, before.catalog_revision);

    // Two pages on the same catalog: the second saves first; the first's
    // save is caught, keeps what was typed, and merges it.
    const other = watch(await page.context().newPage());
    await other.goto('/catalog?stream=' + stream.id);
    await other.locator(cell('products[0].name')).waitFor();
    await other.fill(cell('products[0].name'), '纯棉T恤（新款）');
    await saved(other);
    await page.fill(cell('products[1].price'), '89');
    await page.click('#catalog-save');
    await page.locator('#catalog-conflict').waitFor();
    assert.match(await page.locator('#catalog-conflict').textContent(), run.conflict);
    assert.equal(await page.locator(cell('products[1].price')).inputValue(), '89');
    await shot(page, `catalog-${run.tag}-conflict`);
    await page.click('#catalog-merge');
    assert.equal(await page.locator(cell('products[0].name')).inputValue(), '纯棉T恤（新款）');
    assert.equal(await page.locator(cell('products[1].price')).inputValue(), '89');
    await saved(page);
    const merged = (await catalogOf(page, stream.id)).catalog;
    assert.equal(merged.products[0].name, '纯棉T恤（新款）');
    assert.equal(merged.products[1].price, 89);

    assert.deepEqual([...page.problems, ...other.problems], []);
    // The other specs count the merchant's streams: leave only the demo's.
    await page.evaluate((sid) => LiveHAT.api('DELETE', '/api/streams/' + sid), stream.id);
    await page.context().close();
  });
}
