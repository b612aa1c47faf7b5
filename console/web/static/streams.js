'use strict';
// Streams: the merchant's streams and their path to air. A stream's page
// has its settings, its catalog (edited on the catalog page), the strategy
// builder (forms that write the runtime's strategy rules, with a preview of
// each rule's narration), the rehearsal (practice questions answered by the
// serving model through the stream's harness, each with its tool calls and
// the grounding check's verdict), the go-live checklist and its harness
// version. Every save sends the revision the form was loaded at; a
// concurrent edit is a conflict instead of being overwritten.
LH.i18n.add({
  en: {
    'streams.title': 'Streams', 'streams.name': 'Name', 'streams.state': 'State', 'streams.harness': 'Harness',
    'streams.updated': 'Updated', 'streams.on_air': 'on air', 'streams.off_air': 'off air', 'streams.live_view': 'Live view',
    'streams.none': 'No streams yet.', 'streams.new_name': 'New stream name', 'streams.create': 'Create',
    'streams.created': 'Stream created', 'streams.configure': 'Configure {name}',
    'streams.persona': 'Persona (how the avatar speaks)', 'streams.currency': 'Currency',
    'streams.revision': 'Revision {revision} · harness {harness}', 'streams.save': 'Save', 'streams.saved': 'Saved',
    'streams.delete': 'Delete', 'streams.delete_confirm': 'Delete stream {name}?',
    'streams.harness_title': 'Harness version', 'streams.harness_runs': 'This stream runs {version}. Only a release by an operator changes it.',
    'streams.harness_none': 'none', 'streams.harness_ask_for': 'Version to ask for', 'streams.harness_why': 'why (for the operator)',
    'streams.harness_ask': 'Ask for this version', 'streams.harness_asked': 'Asked; an operator publishes it through the release gate',
    'streams.req_asked': 'Asked', 'streams.req_version': 'Version', 'streams.req_by': 'By', 'streams.req_note': 'Note', 'streams.req_state': 'State',
    'streams.catalog_title': 'Catalog',
    'streams.catalog_summary': '{products} products, {coupons} coupons, {promotions} promotions.',
    'streams.catalog_edit': 'Edit products, variants, coupons, promotions and link order',
    'streams.catalog_import': 'Import a file (CSV or JSON)',
    'streams.catalog_import_help': 'A file with any bad row stores nothing and lists every problem; a CSV replaces the products and keeps coupons and promotions. The columns are in console/README.md and ',
    'streams.catalog_schema': 'the catalog schema', 'streams.catalog_check': 'Check', 'streams.catalog_submit': 'Import',
    'streams.catalog_export': 'Export CSV', 'streams.catalog_choose': 'choose a CSV or JSON file first',
    'streams.catalog_valid': 'The file is valid: {what}.', 'streams.catalog_imported': 'Imported: {what}.',
    'streams.catalog_imported_toast': 'Catalog imported', 'streams.row': 'Row', 'streams.column': 'Column', 'streams.problem': 'Problem',
    'streams.strategy_title': 'Marketing strategy',
    'streams.strategy_help': 'What the host says when nobody asks. Each rule becomes a narration turn of the runtime, checked by the same hooks as answers.',
    'streams.featured_title': 'Featured items', 'streams.featured_help': 'Introduce an item and its live price on a schedule. On air the stream features the item last introduced (the first rule\u2019s until one fires), so \u201cthis one\u201d means it; without a rule, {item} (the catalog\u2019s first item).',
    'streams.featured_add': 'Add a featured item', 'streams.every': 'every', 'streams.minutes': 'minutes',
    'streams.coupons_title': 'Coupon pushes', 'streams.coupons_help': 'Announce a coupon of the catalog: on a schedule, or when price questions pile up.',
    'streams.coupons_add': 'Add a coupon push', 'streams.coupon': 'coupon', 'streams.for_item': 'for', 'streams.item_default': '(its item)',
    'streams.when_schedule': 'on a schedule', 'streams.when_price': 'when price questions pile up',
    'streams.questions_in': 'price questions within', 'streams.at_most_once': 'at most once per',
    'streams.urgency_title': 'Urgency from stock', 'streams.urgency_help': 'Remind viewers of the stock once an item\u2019s stated count falls to a threshold (never when it is sold out).',
    'streams.urgency_add': 'Add a stock reminder', 'streams.stock_at_most': 'when stock is at most', 'streams.repeat': 'repeat every',
    'streams.no_count': 'no stock count in the catalog',
    'streams.soldout_title': 'When an item sells out', 'streams.soldout_help': 'Say the item sold out and present another instead.',
    'streams.soldout_add': 'Add a switch', 'streams.switch_to': 'switch to',
    'streams.banned_title': 'Banned claims', 'streams.banned_help': 'One per line; the host never says them and the compliance hook sends a reply that does back to the model.',
    'streams.custom_title': 'Custom rules (written by hand)', 'streams.custom_help': 'Kept as they are; edit them through the API.',
    'streams.advanced': 'Advanced: the strategy the runtime runs (read-only)',
    'streams.strategy_save': 'Save strategy', 'streams.strategy_saved': 'Strategy saved', 'streams.remove': 'Remove',
    'streams.preview': 'Preview narration',
    'streams.preview_help': 'The preview runs one narration turn with the serving model ({model}) against this stream\u2019s harness and catalog, as the live session would; nothing goes on air.',
    'streams.preview_running': 'Running one narration turn\u2026', 'streams.preview_line': 'Prompt line sent to the model',
    'streams.preview_said': 'The host said', 'streams.preview_fires': 'Fires now: {yes}', 'streams.yes': 'yes', 'streams.no': 'no',
    'streams.tools': 'Tool calls', 'streams.verdict': 'Grounding check',
    'streams.verdict.allow': 'backed', 'streams.verdict.retried': 'retried, then backed', 'streams.verdict.rewritten': 'rewritten to backed facts',
    'streams.verdict.safe_line': 'safe line (no backed answer)', 'streams.verdict.denied': 'refused', 'streams.verdict.unchecked': 'not checked',
    'streams.verdict.failed': 'did not run',
    'streams.rehearsal_title': 'Rehearsal',
    'streams.rehearsal_help': 'Practice questions for your own catalog, answered by the serving model through this stream\u2019s harness, plugins and catalog, each in a session of its own. Nothing goes on air.',
    'streams.rehearsal_lang': 'Language', 'streams.lang_zh': 'Chinese', 'streams.lang_en': 'English',
    'streams.rehearsal_generate': 'Suggest questions', 'streams.rehearsal_own': 'Your own question',
    'streams.rehearsal_add': 'Add', 'streams.rehearsal_run': 'Run rehearsal ({count} questions)',
    'streams.rehearsal_running': 'The host is answering {count} questions\u2026', 'streams.rehearsal_none': 'No rehearsal yet.',
    'streams.rehearsal_last': 'Last rehearsal {time} by {user}, model {model}: {summary}', 'streams.rehearsal_stale': 'out of date: the stream changed since',
    'streams.rehearsal_q': 'Question', 'streams.rehearsal_a': 'Answer', 'streams.not_stated': 'not in the catalog',
    'streams.rehearsal_done': 'Rehearsal finished',
    'streams.cat.price': 'price', 'streams.cat.stock': 'stock', 'streams.cat.variant': 'variant', 'streams.cat.size': 'size',
    'streams.cat.coupon': 'coupon', 'streams.cat.promotion': 'promotion', 'streams.cat.link': 'link', 'streams.cat.shipping': 'shipping',
    'streams.cat.returns': 'returns', 'streams.cat.ingredients': 'ingredients', 'streams.cat.allergens': 'allergens', 'streams.cat.spec': 'specs',
    'streams.cat.own': 'yours',
  },
  'zh-CN': {
    'streams.title': '直播间', 'streams.name': '名称', 'streams.state': '状态', 'streams.harness': 'Harness',
    'streams.updated': '更新时间', 'streams.on_air': '直播中', 'streams.off_air': '未开播', 'streams.live_view': '直播预览',
    'streams.none': '还没有直播间。', 'streams.new_name': '新直播间名称', 'streams.create': '创建',
    'streams.created': '直播间已创建', 'streams.configure': '设置 {name}',
    'streams.persona': '主播人设（数字人的说话风格）', 'streams.currency': '币种',
    'streams.revision': '版本 {revision} · harness {harness}', 'streams.save': '保存', 'streams.saved': '已保存',
    'streams.delete': '删除', 'streams.delete_confirm': '删除直播间 {name}？',
    'streams.harness_title': 'Harness 版本', 'streams.harness_runs': '此直播间运行 {version}。只有运营发布才能更改。',
    'streams.harness_none': '无', 'streams.harness_ask_for': '申请的版本', 'streams.harness_why': '原因（给运营看）',
    'streams.harness_ask': '申请此版本', 'streams.harness_asked': '已申请；运营会通过发布门禁发布',
    'streams.req_asked': '申请时间', 'streams.req_version': '版本', 'streams.req_by': '申请人', 'streams.req_note': '备注', 'streams.req_state': '状态',
    'streams.catalog_title': '商品库',
    'streams.catalog_summary': '{products} 个商品，{coupons} 张优惠券，{promotions} 个活动。',
    'streams.catalog_edit': '编辑商品、规格、优惠券、活动和链接顺序',
    'streams.catalog_import': '导入文件（CSV 或 JSON）',
    'streams.catalog_import_help': '文件中任何一行有错都不会保存，并列出每个问题；CSV 会替换商品，保留优惠券和活动。列说明见 console/README.md 和',
    'streams.catalog_schema': '商品库 Schema', 'streams.catalog_check': '检查', 'streams.catalog_submit': '导入',
    'streams.catalog_export': '导出 CSV', 'streams.catalog_choose': '请先选择 CSV 或 JSON 文件',
    'streams.catalog_valid': '文件有效：{what}。', 'streams.catalog_imported': '已导入：{what}。',
    'streams.catalog_imported_toast': '商品库已导入', 'streams.row': '行', 'streams.column': '列', 'streams.problem': '问题',
    'streams.strategy_title': '营销策略',
    'streams.strategy_help': '没人提问时主播说什么。每条规则都会成为一次讲解轮次，和回答一样经过同样的钩子检查。',
    'streams.featured_title': '主推商品', 'streams.featured_help': '按时间间隔介绍商品和直播间价格。开播后本场主推最近一次介绍的商品（第一条规则触发前为第一条规则的商品），观众说“这个”指的就是它；没有规则时主推 {item}（商品库第一个商品）。',
    'streams.featured_add': '添加主推商品', 'streams.every': '每', 'streams.minutes': '分钟',
    'streams.coupons_title': '优惠券播报', 'streams.coupons_help': '播报商品库中的优惠券：定时播报，或在问价的人多时播报。',
    'streams.coupons_add': '添加优惠券播报', 'streams.coupon': '优惠券', 'streams.for_item': '商品', 'streams.item_default': '（券对应的商品）',
    'streams.when_schedule': '定时', 'streams.when_price': '问价多时',
    'streams.questions_in': '条问价，时间窗口', 'streams.at_most_once': '最多每',
    'streams.urgency_title': '库存紧张提醒', 'streams.urgency_help': '商品库存数量降到阈值时提醒观众库存情况（售罄时不会催单）。',
    'streams.urgency_add': '添加库存提醒', 'streams.stock_at_most': '库存不超过', 'streams.repeat': '重复间隔',
    'streams.no_count': '商品库没有库存数量',
    'streams.soldout_title': '售罄换品', 'streams.soldout_help': '告诉观众商品已售罄，并改为介绍另一个商品。',
    'streams.soldout_add': '添加换品', 'streams.switch_to': '换成',
    'streams.banned_title': '禁用说法', 'streams.banned_help': '每行一条；主播不会说这些话，合规钩子会把说了的回复退回给模型。',
    'streams.custom_title': '自定义规则（手写）', 'streams.custom_help': '原样保留；通过 API 编辑。',
    'streams.advanced': '高级：运行时执行的策略（只读）',
    'streams.strategy_save': '保存策略', 'streams.strategy_saved': '策略已保存', 'streams.remove': '删除',
    'streams.preview': '预览讲解',
    'streams.preview_help': '预览会用当前服务模型（{model}）按本直播间的 harness 和商品库跑一次讲解，和直播时一样；不会上播。',
    'streams.preview_running': '正在跑一次讲解\u2026', 'streams.preview_line': '发送给模型的提示行',
    'streams.preview_said': '主播说', 'streams.preview_fires': '现在会触发：{yes}', 'streams.yes': '是', 'streams.no': '否',
    'streams.tools': '工具调用', 'streams.verdict': '事实核查',
    'streams.verdict.allow': '有依据', 'streams.verdict.retried': '重试后有依据', 'streams.verdict.rewritten': '已改写为有依据的内容',
    'streams.verdict.safe_line': '兜底话术（没有有依据的回答）', 'streams.verdict.denied': '被拒绝', 'streams.verdict.unchecked': '未核查',
    'streams.verdict.failed': '未运行',
    'streams.rehearsal_title': '彩排',
    'streams.rehearsal_help': '根据你自己的商品库生成练习问题，由服务模型通过本直播间的 harness、插件和商品库回答，每题单独会话。不会上播。',
    'streams.rehearsal_lang': '语言', 'streams.lang_zh': '中文', 'streams.lang_en': '英文',
    'streams.rehearsal_generate': '推荐问题', 'streams.rehearsal_own': '自己的问题',
    'streams.rehearsal_add': '添加', 'streams.rehearsal_run': '开始彩排（{count} 个问题）',
    'streams.rehearsal_running': '主播正在回答 {count} 个问题\u2026', 'streams.rehearsal_none': '还没有彩排。',
    'streams.rehearsal_last': '最近一次彩排 {time}，{user}，模型 {model}：{summary}', 'streams.rehearsal_stale': '已过期：之后直播间有改动',
    'streams.rehearsal_q': '问题', 'streams.rehearsal_a': '回答', 'streams.not_stated': '商品库未写明',
    'streams.rehearsal_done': '彩排完成',
    'streams.cat.price': '价格', 'streams.cat.stock': '库存', 'streams.cat.variant': '规格', 'streams.cat.size': '尺码',
    'streams.cat.coupon': '优惠券', 'streams.cat.promotion': '活动', 'streams.cat.link': '链接', 'streams.cat.shipping': '发货',
    'streams.cat.returns': '退货', 'streams.cat.ingredients': '成分', 'streams.cat.allergens': '过敏原', 'streams.cat.spec': '参数',
    'streams.cat.own': '自定义',
  },
});

LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  main.replaceChildren(el('h1', {}, t('streams.title')));
  const list = el('div', {class: 'card'});
  const editor = el('div', {id: 'stream-editor'});
  main.append(list, editor);
  const enc = encodeURIComponent;

  async function load() {
    const streams = await api('GET', '/api/streams');
    const rows = streams.map((s) => el('tr', {},
      el('td', {}, el('a', {href: '#' + s.id, onclick: () => edit(s.id)}, s.name)),
      el('td', {}, s.on_air ? el('span', {class: 'badge good'}, t('streams.on_air')) : el('span', {class: 'badge'}, t('streams.off_air'))),
      el('td', {class: 'mono'}, fmt.short(s.harness_version)),
      el('td', {}, fmt.time(s.updated_at)),
      el('td', {}, el('a', {href: '/live?stream=' + enc(s.id)}, t('streams.live_view')))));
    list.replaceChildren(el('h2', {}, t('streams.title')),
      streams.length ? el('table', {id: 'streams-table'},
        el('thead', {}, el('tr', {}, [t('streams.name'), t('streams.state'), t('streams.harness'), t('streams.updated'), ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows)) : el('p', {class: 'muted'}, t('streams.none')),
      createForm());
    if (location.hash.length > 1) await edit(decodeURIComponent(location.hash.slice(1)));
  }

  function createForm() {
    const form = el('form', {class: 'row', id: 'new-stream'},
      el('input', {name: 'name', placeholder: t('streams.new_name'), required: true}));
    if (me.role === 'operator') {
      const sel = el('select', {name: 'merchant_id'});
      api('GET', '/api/merchants').then((ms) => sel.replaceChildren(...ms.map((m) => el('option', {value: m.id}, m.name))));
      form.append(sel);
    }
    form.append(el('button', {type: 'submit'}, t('streams.create')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = {name: form.name.value};
      if (form.merchant_id) body.merchant_id = form.merchant_id.value;
      try {
        const s = await api('POST', '/api/streams', body);
        toast(t('streams.created'));
        location.hash = s.id;
        await load();
      } catch (err) { showError(err, form); }
    });
    return form;
  }

  async function edit(id) {
    let s;
    try { s = await api('GET', '/api/streams/' + enc(id)); } catch (err) { showError(err); return; }
    const form = el('form', {class: 'card', id: 'stream-form'},
      el('h2', {}, t('streams.configure', {name: s.name})),
      el('label', {for: 'f-name'}, t('streams.name')), el('input', {id: 'f-name', name: 'name', value: s.name}),
      el('label', {for: 'f-persona'}, t('streams.persona')),
      el('textarea', {id: 'f-persona', name: 'persona'}, s.persona),
      el('label', {for: 'f-currency'}, t('streams.currency')), el('input', {id: 'f-currency', name: 'currency', value: s.currency, size: 4}),
      el('p', {class: 'muted'}, t('streams.revision', {revision: s.revision, harness: fmt.short(s.harness_version)})),
      el('div', {class: 'row'}, el('button', {type: 'submit'}, t('streams.save')),
        el('button', {type: 'button', class: 'danger', onclick: async () => {
          if (!confirm(t('streams.delete_confirm', {name: s.name}))) return;
          try { await api('DELETE', '/api/streams/' + enc(s.id)); location.hash = ''; editor.replaceChildren(); await load(); } catch (err) { showError(err); }
        }}, t('streams.delete'))));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const body = {name: form.name.value, persona: form.persona.value, strategy: s.strategy, catalog: s.catalog,
        banned_claims: s.banned_claims || [], currency: form.currency.value, harness_version: s.harness_version, on_air: s.on_air, revision: s.revision};
      try {
        await api('PUT', '/api/streams/' + enc(s.id), body);
        toast(t('streams.saved'));
        await reload(s.id);
      } catch (err) { showError(err, form); }
    });
    const [harness, strategy, rehearsal, golive] = await Promise.all([
      harnessCard(s), strategyCard(s), rehearsalCard(s), goLiveCard(s)].map((p) => p.catch((err) => { showError(err); return null; })));
    editor.replaceChildren(...[golive, form, catalogCard(s), strategy, rehearsal, harness].filter(Boolean));
    const focus = new URLSearchParams(location.search).get('focus');
    const target = focus && document.getElementById(focus + '-card');
    if (target) target.scrollIntoView();
  }

  // reload redraws the list and, through the location's hash, the stream
  // after a change.
  async function reload(id) {
    if (decodeURIComponent(location.hash.slice(1)) !== id) location.hash = id;
    await load();
  }

  // itemOptions lists the catalog's items for a select, the chosen one
  // selected; blank adds an empty first choice.
  function itemOptions(items, chosen, blank) {
    const opts = items.map((it) => el('option', {value: it.id, selected: it.id === chosen}, it.name + ' (' + it.id + ')'));
    return blank === undefined ? opts : [el('option', {value: '', selected: !chosen}, blank), ...opts];
  }

  function num(name, value, attrs) {
    return el('input', Object.assign({type: 'number', name, value: value == null ? '' : String(value), min: '0', step: 'any', class: 'small'}, attrs || {}));
  }

  function verdictBadge(v) {
    const kind = {allow: 'good', retried: 'good', rewritten: 'warn', unchecked: 'warn'}[v] || 'bad';
    return el('span', {class: 'badge ' + kind, dataset: {verdict: v}}, t('streams.verdict.' + v));
  }

  // traceBlock shows a turn's tool calls and the grounding verdict.
  function traceBlock(r) {
    return el('div', {class: 'trace'},
      el('div', {}, el('strong', {}, t('streams.verdict') + ': '), verdictBadge(r.verdict)),
      (r.why || []).filter(Boolean).length ? el('ul', {class: 'tight'}, r.why.filter(Boolean).map((w) => el('li', {class: 'muted'}, w))) : null,
      (r.tools || []).length ? el('div', {}, el('strong', {}, t('streams.tools') + ': '),
        el('ul', {class: 'tight'}, r.tools.map((c) => el('li', {class: 'mono'}, c.name + ' ' + (c.arguments ? JSON.stringify(c.arguments) : '') +
          (c.error ? ' → ' + c.error : ''))))) : null);
  }

  // strategyCard is the builder: forms for each kind of rule, banned
  // claims, the custom rules and, read-only, the strategy they write.
  async function strategyCard(s) {
    const view = await api('GET', '/api/streams/' + enc(s.id) + '/strategy');
    const plan = view.plan;
    const items = view.items;
    const featuredName = (items.find((it) => it.id === view.featured) || {}).name || '—';
    const card = el('section', {class: 'card', id: 'strategy-card'});
    const previews = el('div', {id: 'strategy-preview'});
    let model = '';
    api('GET', '/api/streams/' + enc(s.id) + '/live/stats').then((st) => { model = st.model; }).catch(() => {});

    // Each section's rows read back into the plan on save and preview.
    const sections = [];
    function section(key, title, help, addLabel, rowOf, blank) {
      const rows = el('div', {class: 'rule-rows', id: 'rules-' + key});
      const entries = [];
      function add(rule) {
        const inputs = rowOf(rule, entries.length);
        const row = el('div', {class: 'row rule-row'}, inputs.nodes,
          el('button', {type: 'button', class: 'secondary preview-rule', onclick: () => preview(inputs.name())}, t('streams.preview')),
          el('button', {type: 'button', class: 'link', onclick: () => { rows.removeChild(row); entries.splice(entries.indexOf(inputs), 1); }}, t('streams.remove')));
        entries.push(inputs);
        rows.append(row);
      }
      plan[key].forEach(add);
      sections.push({key, read: () => entries.map((e) => e.read())});
      return el('div', {class: 'rule-section'}, el('h3', {}, title), el('p', {class: 'muted'}, help), rows,
        el('button', {type: 'button', class: 'secondary', id: 'add-' + key, onclick: () => add(blank())}, addLabel));
    }

    const firstItem = items.length ? items[0].id : '';
    const featured = section('featured', t('streams.featured_title'), t('streams.featured_help', {item: featuredName}), t('streams.featured_add'),
      (r) => {
        const item = el('select', {name: 'item', 'aria-label': t('streams.featured_title')}, itemOptions(items, r.item));
        const every = num('every_minutes', r.every_minutes);
        return {nodes: [item, el('span', {}, t('streams.every')), every, el('span', {}, t('streams.minutes'))],
          read: () => ({item: item.value, every_minutes: Number(every.value)}), name: () => 'featured:' + item.value};
      }, () => ({item: firstItem, every_minutes: 5}));
    const coupons = section('coupons', t('streams.coupons_title'), t('streams.coupons_help'), t('streams.coupons_add'),
      (r) => {
        const coupon = el('select', {name: 'coupon', 'aria-label': t('streams.coupon')}, view.coupons.map((c) =>
          el('option', {value: c.id, selected: c.id === r.coupon}, c.name + ' (' + c.id + ')')));
        const item = el('select', {name: 'item', 'aria-label': t('streams.for_item')}, itemOptions(items, r.item, t('streams.item_default')));
        const when = el('select', {name: 'when'},
          el('option', {value: 'schedule', selected: r.when === 'schedule'}, t('streams.when_schedule')),
          el('option', {value: 'price_questions', selected: r.when === 'price_questions'}, t('streams.when_price')));
        const every = num('every_minutes', r.every_minutes || 10);
        const questions = num('questions', r.questions || 3, {step: '1', min: '1'});
        const windowM = num('window_minutes', r.window_minutes || 1);
        const cooldown = num('cooldown_minutes', r.cooldown_minutes || '');
        const sched = el('span', {class: 'row'}, t('streams.every'), every, t('streams.minutes'));
        const price = el('span', {class: 'row'}, questions, t('streams.questions_in'), windowM, t('streams.minutes'));
        // Rows are flex boxes, which the hidden attribute does not hide.
        const showWhen = () => {
          sched.style.display = when.value === 'schedule' ? '' : 'none';
          price.style.display = when.value === 'schedule' ? 'none' : '';
        };
        when.addEventListener('change', showWhen);
        showWhen();
        const target = () => item.value || (view.coupons.find((c) => c.id === coupon.value) || {products: []}).products[0] || view.featured;
        return {nodes: [el('span', {}, t('streams.coupon')), coupon, el('span', {}, t('streams.for_item')), item, when, sched, price,
          el('span', {}, t('streams.at_most_once')), cooldown, el('span', {}, t('streams.minutes'))],
        read: () => {
          const out = {coupon: coupon.value, item: item.value, when: when.value, cooldown_minutes: Number(cooldown.value) || 0};
          if (when.value === 'schedule') out.every_minutes = Number(every.value);
          else { out.questions = Number(questions.value); out.window_minutes = Number(windowM.value); }
          return out;
        }, name: () => 'coupon:' + coupon.value + ':' + target()};
      }, () => ({coupon: view.coupons.length ? view.coupons[0].id : '', item: '', when: 'price_questions', questions: 3, window_minutes: 1}));
    const urgency = section('urgency', t('streams.urgency_title'), t('streams.urgency_help'), t('streams.urgency_add'),
      (r) => {
        const item = el('select', {name: 'item', 'aria-label': t('streams.urgency_title')}, itemOptions(items, r.item));
        const atMost = num('at_most', r.at_most, {step: '1', min: '1'});
        const repeat = num('repeat_minutes', r.repeat_minutes || 5);
        const note = el('span', {class: 'muted'});
        const showCount = () => {
          const it = items.find((x) => x.id === item.value);
          note.textContent = it && it.stock != null ? '(' + LH.fmt.number(it.stock) + ')' : t('streams.no_count');
        };
        item.addEventListener('change', showCount);
        showCount();
        return {nodes: [item, note, el('span', {}, t('streams.stock_at_most')), atMost, el('span', {}, t('streams.repeat')), repeat, el('span', {}, t('streams.minutes'))],
          read: () => ({item: item.value, at_most: Number(atMost.value), repeat_minutes: Number(repeat.value) || 0}), name: () => 'urgency:' + item.value};
      }, () => ({item: firstItem, at_most: 10, repeat_minutes: 5}));
    const soldOut = section('sold_out', t('streams.soldout_title'), t('streams.soldout_help'), t('streams.soldout_add'),
      (r) => {
        const item = el('select', {name: 'item', 'aria-label': t('streams.soldout_title')}, itemOptions(items, r.item));
        const to = el('select', {name: 'to', 'aria-label': t('streams.switch_to')}, itemOptions(items, r.to));
        const repeat = num('repeat_minutes', r.repeat_minutes || 10);
        return {nodes: [item, el('span', {}, t('streams.switch_to')), to, el('span', {}, t('streams.repeat')), repeat, el('span', {}, t('streams.minutes'))],
          read: () => ({item: item.value, to: to.value, repeat_minutes: Number(repeat.value) || 0}), name: () => 'sold_out:' + item.value + ':' + to.value};
      }, () => ({item: firstItem, to: items.length > 1 ? items[1].id : firstItem, repeat_minutes: 10}));

    const banned = el('textarea', {id: 'f-banned', name: 'banned_claims'}, (view.banned_claims || []).join('\n'));
    const readPlan = () => {
      const p = {custom: plan.custom};
      for (const sec of sections) p[sec.key] = sec.read();
      return p;
    };

    // preview runs one narration turn of a rule of the form as it stands.
    async function preview(rule) {
      previews.replaceChildren(el('p', {class: 'muted'}, t('streams.preview_running')));
      try {
        const r = await api('POST', '/api/streams/' + enc(s.id) + '/strategy/preview', {plan: readPlan(), rule});
        previews.replaceChildren(el('div', {class: 'preview-result'},
          el('h3', {}, t('streams.preview') + ' · ' + rule),
          el('p', {class: 'muted'}, t('streams.preview_help', {model: r.model || model})),
          el('div', {}, el('strong', {}, t('streams.preview_line'))), el('pre', {class: 'prompt', id: 'preview-line'}, r.prompt_line),
          el('div', {}, el('strong', {}, t('streams.preview_said'))), el('p', {class: 'answer', id: 'preview-reply'}, r.reply),
          r.fires_now === null || r.fires_now === undefined ? null
            : el('p', {}, t('streams.preview_fires', {yes: r.fires_now ? t('streams.yes') : t('streams.no')})),
          traceBlock(r)));
      } catch (err) { previews.replaceChildren(); showError(err, card); }
    }

    async function save() {
      card.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const body = {plan: readPlan(), revision: view.revision,
        banned_claims: banned.value.split('\n').map((x) => x.trim()).filter(Boolean)};
      try {
        await api('PUT', '/api/streams/' + enc(s.id) + '/strategy', body);
        toast(t('streams.strategy_saved'));
        await reload(s.id);
      } catch (err) { markPlanField(err); showError(err); }
    }

    // markPlanField marks the input a plan error names ("urgency[0].at_most").
    function markPlanField(err) {
      const m = /^(\w+)\[(\d+)\]\.(\w+)$/.exec(err.field || '');
      if (!m) return;
      const row = card.querySelectorAll('#rules-' + m[1] + ' .rule-row')[Number(m[2])];
      const input = row && row.querySelector('[name="' + m[3] + '"]');
      if (input) { input.classList.add('invalid'); input.focus(); }
    }

    card.append(...[el('h2', {}, t('streams.strategy_title')), el('p', {class: 'muted'}, t('streams.strategy_help')),
      featured, coupons, urgency, soldOut,
      el('h3', {}, t('streams.banned_title')), el('p', {class: 'muted'}, t('streams.banned_help')), banned,
      plan.custom.length ? el('div', {id: 'custom-rules'}, el('h3', {}, t('streams.custom_title')), el('p', {class: 'muted'}, t('streams.custom_help')),
        el('ul', {class: 'tight'}, plan.custom.map((r) => el('li', {}, el('span', {class: 'mono'}, r.name), ': ', r.instruction,
          el('button', {type: 'button', class: 'link', onclick: () => preview(r.name)}, t('streams.preview')))))) : null,
      el('details', {id: 'strategy-advanced'}, el('summary', {}, t('streams.advanced')),
        el('pre', {class: 'prompt'}, JSON.stringify(view.strategy, null, 2))),
      el('div', {class: 'row'}, el('button', {type: 'button', id: 'strategy-save', onclick: save}, t('streams.strategy_save'))),
      previews].filter(Boolean));
    return card;
  }

  // rehearsalCard suggests practice questions for the catalog, takes the
  // merchant's own, runs them and shows each answer with its tool calls
  // and the grounding verdict.
  async function rehearsalCard(s) {
    const base = '/api/streams/' + enc(s.id);
    const last = (await api('GET', base + '/rehearsals/latest')).rehearsal;
    const card = el('section', {class: 'card', id: 'rehearsal-card'});
    const chosen = [];
    const qlist = el('ul', {class: 'tight', id: 'rehearsal-questions'});
    const results = el('div', {id: 'rehearsal-results'});
    const lang = el('select', {name: 'lang', id: 'rehearsal-lang', 'aria-label': t('streams.rehearsal_lang')},
      el('option', {value: 'zh', selected: LH.locale() === 'zh-CN'}, t('streams.lang_zh')),
      el('option', {value: 'en', selected: LH.locale() !== 'zh-CN'}, t('streams.lang_en')));
    const own = el('input', {name: 'question', id: 'rehearsal-own', class: 'wide', placeholder: t('streams.rehearsal_own')});
    const run = el('button', {type: 'button', id: 'rehearsal-run', onclick: () => runRehearsal()});
    const category = (q) => t('streams.cat.' + (q.own ? 'own' : q.category || 'own'));
    function redraw() {
      qlist.replaceChildren(...chosen.map((q, i) => el('li', {},
        el('span', {class: 'badge'}, category(q)), ' ', q.text, q.stated === false && !q.own ? el('span', {class: 'muted'}, ' · ' + t('streams.not_stated')) : null,
        ' ', el('button', {type: 'button', class: 'link', onclick: () => { chosen.splice(i, 1); redraw(); }}, t('streams.remove')))));
      run.textContent = t('streams.rehearsal_run', {count: chosen.length});
      run.disabled = chosen.length === 0;
    }
    async function suggest() {
      try {
        const r = await api('GET', base + '/rehearsal/questions?max=8&lang=' + lang.value);
        chosen.splice(0, chosen.length, ...r.questions, ...chosen.filter((q) => q.own));
        redraw();
      } catch (err) { showError(err, card); }
    }
    function addOwn() {
      const text = own.value.trim();
      if (!text) return;
      chosen.push({text, own: true});
      own.value = '';
      redraw();
    }
    own.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); addOwn(); } });
    async function runRehearsal() {
      run.disabled = true;
      results.replaceChildren(el('p', {class: 'muted'}, t('streams.rehearsal_running', {count: chosen.length})));
      try {
        const rep = await api('POST', base + '/rehearsals', {lang: lang.value, questions: chosen});
        toast(t('streams.rehearsal_done'));
        showReport(rep);
        const fresh = await goLiveCard(s);
        document.getElementById('golive-card').replaceWith(fresh);
      } catch (err) { results.replaceChildren(); showError(err, card); }
      run.disabled = chosen.length === 0;
    }
    function showReport(rep) {
      const summary = Object.entries(rep.verdicts).map(([v, n]) => t('streams.verdict.' + v) + ' ' + n).join(', ');
      results.replaceChildren(
        el('p', {class: rep.current ? 'muted' : 'warn'}, t('streams.rehearsal_last', {time: fmt.time(rep.created_at), user: rep.created_by,
          model: rep.model, summary}), rep.current ? null : ' (' + t('streams.rehearsal_stale') + ')'),
        el('table', {id: 'rehearsal-table'},
          el('thead', {}, el('tr', {}, [t('streams.rehearsal_q'), t('streams.rehearsal_a'), t('streams.verdict')].map((h) => el('th', {}, h)))),
          el('tbody', {}, rep.answers.map((a) => el('tr', {},
            el('td', {}, el('span', {class: 'badge'}, category(a)), ' ', a.text),
            el('td', {class: 'reply'}, a.reply || a.error || ''),
            el('td', {}, traceBlock(a)))))));
    }
    card.append(el('h2', {}, t('streams.rehearsal_title')), el('p', {class: 'muted'}, t('streams.rehearsal_help')),
      el('div', {class: 'row'}, el('label', {for: 'rehearsal-lang'}, t('streams.rehearsal_lang')), lang,
        el('button', {type: 'button', class: 'secondary', id: 'rehearsal-suggest', onclick: suggest}, t('streams.rehearsal_generate'))),
      qlist,
      el('div', {class: 'row'}, own, el('button', {type: 'button', class: 'secondary', id: 'rehearsal-add', onclick: addOwn}, t('streams.rehearsal_add'))),
      el('div', {class: 'row'}, run), results);
    redraw();
    if (last) showReport(last); else results.append(el('p', {class: 'muted'}, t('streams.rehearsal_none')));
    return card;
  }

  // goLiveCard is the checklist (golive.js); going on or off air reloads
  // the stream.
  function goLiveCard(s) {
    return GoLive.card(s.id, {onChange: () => reload(s.id)});
  }

  // harnessCard shows the version the stream runs and lets its merchant
  // ask for another: a request binds nothing, an operator's release does.
  async function harnessCard(s) {
    const [versions, requests] = await Promise.all([api('GET', '/api/harnesses'),
      api('GET', '/api/streams/' + enc(s.id) + '/harness-requests')]);
    const form = el('form', {class: 'row', id: 'harness-request-form'},
      el('select', {name: 'version', 'aria-label': t('streams.harness_ask_for')}, versions.filter((v) => v.version !== s.harness_version)
        .map((v) => el('option', {value: v.version}, v.short + ' · ' + v.name + (v.notes ? ' — ' + v.notes : '')))),
      el('input', {name: 'note', class: 'wide', placeholder: t('streams.harness_why')}),
      el('button', {type: 'submit'}, t('streams.harness_ask')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      try {
        await api('POST', '/api/streams/' + enc(s.id) + '/harness-requests', {version: form.version.value, note: form.note.value});
        toast(t('streams.harness_asked'));
        await edit(s.id);
      } catch (err) { showError(err, form); }
    });
    const version = el('span', {class: 'mono', title: s.harness_version}, fmt.short(s.harness_version) || t('streams.harness_none'));
    const [before, after] = t('streams.harness_runs').split('{version}');
    return el('section', {class: 'card', id: 'harness-card'},
      el('h2', {}, t('streams.harness_title')),
      el('p', {}, before, version, after),
      versions.length > (s.harness_version ? 1 : 0) ? form : null,
      requests.length ? el('table', {id: 'harness-requests'},
        el('thead', {}, el('tr', {}, [t('streams.req_asked'), t('streams.req_version'), t('streams.req_by'), t('streams.req_note'), t('streams.req_state')]
          .map((h) => el('th', {}, h)))),
        el('tbody', {}, requests.map((r) => el('tr', {},
          el('td', {}, fmt.time(r.created_at)), el('td', {class: 'mono'}, fmt.short(r.version)), el('td', {}, r.requested_by),
          el('td', {}, r.note), el('td', {}, el('span', {class: 'badge ' + (r.state === 'granted' ? 'good' : 'warn')}, r.state))))))
        : null);
  }

  // catalogCard summarises the catalog and links to the catalog editor;
  // a file import (CSV or JSON) is checked first (dry run), then stored,
  // both reporting every bad row, based on the revision the page loaded.
  function catalogCard(s) {
    const cat = s.catalog || {};
    const count = (k) => (cat[k] ? cat[k].length : 0);
    const file = el('input', {type: 'file', id: 'catalog-file', name: 'file', accept: '.csv,.json,text/csv,application/json'});
    const problems = el('div', {id: 'catalog-problems'});
    const result = el('p', {id: 'catalog-result', class: 'muted'},
      t('streams.catalog_summary', {products: count('products'), coupons: count('coupons'), promotions: count('promotions')}));
    async function upload(dryRun) {
      problems.replaceChildren();
      file.classList.remove('invalid');
      const f = file.files[0];
      if (!f) { showError(new LiveHAT.ApiError(400, {error: t('streams.catalog_choose'), field: 'file'}), card); return; }
      const json = /\.json$/i.test(f.name) || f.type === 'application/json';
      const path = '/api/streams/' + enc(s.id) + '/catalog?revision=' + s.revision + (dryRun ? '&dry_run=true' : '');
      try {
        const r = await api('POST', path, await f.text(), {type: json ? 'application/json' : 'text/csv'});
        const what = t('streams.catalog_summary', {products: r.products, coupons: r.coupons, promotions: r.promotions});
        result.textContent = t(dryRun ? 'streams.catalog_valid' : 'streams.catalog_imported', {what});
        if (r.warnings.length) problems.append(el('ul', {class: 'tight'}, r.warnings.map((w) => el('li', {}, w))));
        if (!dryRun) { toast(t('streams.catalog_imported_toast')); await reload(s.id); }
      } catch (err) {
        showError(err, card);
        const list = (err.body && err.body.problems) || [];
        if (list.length) {
          problems.append(el('table', {id: 'catalog-problem-table'},
            el('thead', {}, el('tr', {}, [t('streams.row'), t('streams.column'), t('streams.problem')].map((h) => el('th', {}, h)))),
            el('tbody', {}, list.map((p) => el('tr', {}, el('td', {}, p.row ? String(p.row) : ''), el('td', {}, p.column || p.section),
              el('td', {}, p.message))))));
        }
      }
    }
    const card = el('section', {class: 'card', id: 'catalog-import'},
      el('h2', {}, t('streams.catalog_title')), result,
      el('p', {}, el('a', {href: '/catalog?stream=' + enc(s.id), id: 'catalog-edit-link', class: 'button'}, t('streams.catalog_edit'))),
      el('h3', {}, t('streams.catalog_import')),
      el('p', {class: 'muted'}, t('streams.catalog_import_help'), el('a', {href: '/api/catalog/schema'}, t('streams.catalog_schema')), '.'),
      el('div', {class: 'row'}, file,
        el('button', {type: 'button', class: 'secondary', id: 'catalog-check', onclick: () => upload(true)}, t('streams.catalog_check')),
        el('button', {type: 'button', id: 'catalog-submit', onclick: () => upload(false)}, t('streams.catalog_submit')),
        el('a', {href: '/api/streams/' + enc(s.id) + '/catalog?format=csv', download: 'catalog.csv'}, t('streams.catalog_export'))),
      problems);
    return card;
  }

  await load();
});
