'use strict';
// The go-live checklist (GET /api/streams/{id}/golive) as a card, shared by
// the stream page and the live view: each check in the locale with its fix;
// warnings are acknowledged one by one; "Go on air" goes through the
// server's check (POST …/golive), never the operators' unchecked switch.
LH.i18n.add({
  en: {
    'golive.title': 'Go-live checklist', 'golive.ready': 'Ready: nothing blocks going on air.',
    'golive.blocked': 'Checks that block going on air: {count}.', 'golive.ack': 'I accept this risk',
    'golive.go': 'Go on air', 'golive.stop': 'Go off air', 'golive.on': 'The stream is on air.',
    'golive.done': 'On air', 'golive.off': 'Off air', 'golive.fix': 'Fix',
    'golive.open_page': 'Open the checklist on the stream page', 'golive.close': 'Close',
    'golive.level.ok': 'OK', 'golive.level.warn': 'risk', 'golive.level.block': 'blocks',
    'golive.check.harness_missing': 'No harness version is released to this stream: ask an operator for one.',
    'golive.check.harness_unusable': 'The stream\u2019s harness version cannot run: {error}',
    'golive.check.harness_released': 'Harness version {version} is released to the stream.',
    'golive.check.model_missing': 'No model serves live sessions.', 'golive.check.model_ready': 'The serving model is {model}.',
    'golive.check.catalog_empty': 'The catalog has no products.', 'golive.check.catalog_products': 'The catalog has {count} products.',
    'golive.check.stock_unstated': 'Items without a stock count or state (the host can only say it is not stated): {items}.',
    'golive.check.sold_out': 'Items sold out: {items}.',
    'golive.check.size_chart_missing': 'Clothing without a size chart (viewers ask which size): {items}.',
    'golive.check.ingredients_missing': 'Food or cosmetics without ingredients: {items}.',
    'golive.check.allergens_missing': 'Food without allergens stated: {items}.',
    'golive.check.shipping_missing': 'Items without shipping terms (dispatch time or fee): {items}.',
    'golive.check.returns_missing': 'Items without return terms: {items}.',
    'golive.check.coupon_no_min_spend': 'Coupons without a minimum spend (any order gets them): {items}.',
    'golive.check.strategy_invalid': 'The stored strategy cannot be read.',
    'golive.check.strategy_stale': 'The strategy names what the catalog no longer has: {error}',
    'golive.check.featured_missing': 'No featured item for narration: the host speaks only when asked.',
    'golive.check.featured_rule': 'The host introduces featured items on a schedule.',
    'golive.check.urgency_uncounted': 'Stock reminders on items without a stock count never fire: {items}.',
    'golive.check.rehearsal_missing': 'No rehearsal has been run.',
    'golive.check.rehearsal_stale': 'The catalog, persona, banned claims or harness changed since the last rehearsal: run it again.',
    'golive.check.rehearsal_unanswered': '{count} practice questions got no backed answer.',
    'golive.check.rehearsal_rewritten': '{count} practice answers stated what nothing backed and were rewritten by the grounding check.',
    'golive.check.rehearsal_unchecked': '{count} practice answers were not checked against the catalog.',
    'golive.check.rehearsal_passed': 'All {count} practice answers were backed by the catalog.',
    'error.golive_blocked': 'The checklist blocks going on air', 'error.golive_unacknowledged': 'Accept the checklist\u2019s warnings first',
    'error.golive_required': 'Go on air through the go-live checklist',
  },
  'zh-CN': {
    'golive.title': '开播检查', 'golive.ready': '就绪：没有阻止开播的问题。',
    'golive.blocked': '有 {count} 项阻止开播。', 'golive.ack': '我接受此风险',
    'golive.go': '开播', 'golive.stop': '下播', 'golive.on': '直播间正在直播。',
    'golive.done': '已开播', 'golive.off': '已下播', 'golive.fix': '去修复',
    'golive.open_page': '在直播间页面打开开播检查', 'golive.close': '关闭',
    'golive.level.ok': '通过', 'golive.level.warn': '风险', 'golive.level.block': '阻止',
    'golive.check.harness_missing': '此直播间还没有发布 harness 版本：请向运营申请。',
    'golive.check.harness_unusable': '此直播间的 harness 版本无法运行：{error}',
    'golive.check.harness_released': '已为直播间发布 harness 版本 {version}。',
    'golive.check.model_missing': '没有为直播提供服务的模型。', 'golive.check.model_ready': '服务模型为 {model}。',
    'golive.check.catalog_empty': '商品库里没有商品。', 'golive.check.catalog_products': '商品库有 {count} 个商品。',
    'golive.check.stock_unstated': '以下商品没有库存数量或状态（主播只能说未写明）：{items}。',
    'golive.check.sold_out': '以下商品已售罄：{items}。',
    'golive.check.size_chart_missing': '以下服装没有尺码表（观众会问穿什么码）：{items}。',
    'golive.check.ingredients_missing': '以下食品或化妆品没有成分：{items}。',
    'golive.check.allergens_missing': '以下食品没有写明过敏原：{items}。',
    'golive.check.shipping_missing': '以下商品没有发货信息（发货时效或运费）：{items}。',
    'golive.check.returns_missing': '以下商品没有退货规则：{items}。',
    'golive.check.coupon_no_min_spend': '以下优惠券没有使用门槛（任何订单都能用）：{items}。',
    'golive.check.strategy_invalid': '保存的策略无法读取。',
    'golive.check.strategy_stale': '策略中有商品库已没有的商品或优惠券：{error}',
    'golive.check.featured_missing': '没有主推商品讲解：只有观众提问时主播才会说话。',
    'golive.check.featured_rule': '主播会定时介绍主推商品。',
    'golive.check.urgency_uncounted': '以下商品没有库存数量，库存提醒永远不会触发：{items}。',
    'golive.check.rehearsal_missing': '还没有彩排。',
    'golive.check.rehearsal_stale': '上次彩排后商品库、人设、禁用说法或 harness 有改动：请重新彩排。',
    'golive.check.rehearsal_unanswered': '{count} 个练习问题没有得到有依据的回答。',
    'golive.check.rehearsal_rewritten': '{count} 个练习回答说了没有依据的内容，被事实核查改写。',
    'golive.check.rehearsal_unchecked': '{count} 个练习回答没有经过商品库核查。',
    'golive.check.rehearsal_passed': '全部 {count} 个练习回答都有商品库依据。',
    'error.golive_blocked': '开播检查有阻止项', 'error.golive_unacknowledged': '请先确认开播检查中的风险',
    'error.golive_required': '请通过开播检查开播',
  },
});

const GoLive = (() => {
  const badge = {ok: 'good', warn: 'warn', block: 'bad'};

  // text is a check's line in the locale, from its code and params; a
  // code this page does not know shows the server's English message.
  function text(c) {
    return LH.i18n.has('golive.check.' + c.code) ? LH.t('golive.check.' + c.code, c.params || {}) : c.message;
  }

  // card loads a stream's checklist and answers its card (#golive-card).
  // opts.onChange(stream) runs after the stream went on or off air;
  // opts.pageLink adds a link to the stream page's checklist; opts.onClose
  // adds a close button.
  async function card(streamId, opts = {}) {
    const {el, api, toast, showError} = LiveHAT;
    const t = LH.t;
    const base = '/api/streams/' + encodeURIComponent(streamId);
    const list = await api('GET', base + '/golive');
    const box = el('section', {class: 'card', id: 'golive-card'});
    const acks = new Map();
    const rows = list.checks.map((c) => {
      const ack = c.level === 'warn' ? el('input', {type: 'checkbox', name: 'ack-' + c.code, 'aria-label': t('golive.ack')}) : null;
      if (ack) acks.set(c.code, ack);
      return el('li', {class: 'check-' + c.level, dataset: {code: c.code, level: c.level}},
        el('span', {class: 'badge ' + badge[c.level]}, t('golive.level.' + c.level)), ' ', text(c),
        c.fix ? el('span', {}, ' ', el('a', {href: c.fix, class: 'fix'}, t('golive.fix'))) : null,
        ack ? el('label', {class: 'check'}, ack, ' ', t('golive.ack')) : null);
    });
    const go = el('button', {type: 'button', class: 'on-air', id: 'golive-go', disabled: !list.ready}, t('golive.go'));
    go.addEventListener('click', async () => {
      const acknowledge = [...acks].filter(([, b]) => b.checked).map(([code]) => code);
      go.disabled = true;
      try {
        const st = await api('POST', base + '/golive', {acknowledge});
        toast(t('golive.done'));
        if (opts.onChange) await opts.onChange(st);
      } catch (err) { showError(err, box); go.disabled = !list.ready; }
    });
    const stop = el('button', {type: 'button', class: 'danger', id: 'golive-stop', onclick: async () => {
      try {
        const st = await api('POST', base + '/live/air', {on_air: false});
        toast(t('golive.off'));
        if (opts.onChange) await opts.onChange(st);
      } catch (err) { showError(err, box); }
    }}, t('golive.stop'));
    box.append(el('h2', {}, t('golive.title')),
      el('p', {id: 'golive-state', class: list.ready ? 'good' : 'bad'},
        list.on_air ? t('golive.on') : list.ready ? t('golive.ready') : t('golive.blocked', {count: list.blocking})),
      el('ul', {class: 'tight', id: 'golive-checks'}, rows),
      el('div', {class: 'row'}, list.on_air ? stop : go,
        opts.pageLink ? el('a', {href: '/streams?focus=golive#' + encodeURIComponent(streamId), id: 'golive-page'}, t('golive.open_page')) : null,
        opts.onClose ? el('button', {type: 'button', class: 'secondary', id: 'golive-close', onclick: opts.onClose}, t('golive.close')) : null));
    return box;
  }

  return {card};
})();
