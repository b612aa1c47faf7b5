'use strict';
// Experiments: online A/B tests of harness versions on commerce metrics.
// Create a draft, start it (each stream runs its arm's harness version),
// read the per-arm metrics with 95 % intervals, the sample-ratio check and
// the verdict (withheld while reading it would be peeking), watch the
// charts over time, stop, and ship the winner through the release gate.
// Every name, arm and reason is inserted as text (LiveHAT.el).
LH.i18n.add({
  en: {
    'experiments.state.draft': 'draft', 'experiments.state.running': 'running', 'experiments.state.stopped': 'stopped',
    'experiments.console_model': 'the console’s model',
    'experiments.events_hint': 'POST batches of up to 10,000 events per stream with an API token (Settings → API tokens) of an operator or of the stream’s merchant. Events are idempotent by id; unknown items, negative amounts and future times are rejected with a reason. Kinds: item_view, add_to_cart, purchase, coupon_claim, link_click.',
    'experiments.as_of': 'As of {at} · recomputed from the stored assignments, turns and events · bootstrap {n} resamples, seed {seed}',
    'experiments.no_peeking': ' — do not stop early on a significant result: with a fixed horizon, looking early and stopping inflates false positives.',
    'experiments.ship_arm': 'ship {arm}', 'experiments.of_planned': '({pct} of the planned sample)',
    'experiments.ship_published': 'published {v} to {n} stream(s)', 'experiments.now_serving': 'now serving {model}',
    'experiments.already_serves': 'the checkpoint already serves', 'experiments.shipped_toast': 'Shipped {arm}: {what}',
    'experiments.ship_anyway': 'Reason to ship anyway (recorded with the ship):', 'experiments.ship_winner': 'Ship the winner ({arm})',
    'experiments.ship_hint': 'Publishes the winner’s harness version to the experiment’s streams through the release gate, and makes its checkpoint the serving model once its evaluations pass.',
    'experiments.srm_text': 'Observed units {observed} against the expected {expected} (p = {p}): assignment or logging is broken, so no metric of this experiment can be trusted until it is explained.',
    'experiments.na': 'n/a', 'experiments.always_valid': ' (always-valid)',
    'experiments.srm_ok': 'Sample ratio: p = {p} (ok)', 'experiments.srm_mismatch': 'Sample ratio: p = {p} (mismatch)',
    'experiments.not_credited': ' · events not credited: {window} outside the attribution window, {unexposed} from unexposed units, {before} before exposure, {period} outside the period, {currency} in another currency, {duplicates} duplicates.',
    'experiments.each_point': 'Each point is the report as it would have read then ({n} points; bootstrap of 400 resamples per point).',
    'experiments.metric_per_arm': '{metric} per arm', 'experiments.diff_title': '{a} − {b} with its 95 % interval',
    'experiments.units_per_arm': 'Units per arm (planned {n})', 'experiments.n_streams': ' ({n} streams)',
    'experiments.arm_control': 'Arm (control)', 'experiments.arm_n': 'Arm {n}',
    'experiments.checkpoint_title': 'the console model’s name, or a promoted checkpoint folder (Training page)',
    'experiments.title': 'LiveHAT · Experiments', 'experiments.heading': 'Experiments',
    'experiments.experiments': 'Experiments',
    'experiments.none': 'No experiments yet: create one below.',
    'experiments.name': 'Name',
    'experiments.state': 'State',
    'experiments.unit': 'Unit',
    'experiments.arms': 'Arms',
    'experiments.primary_metric': 'Primary metric',
    'experiments.planned_per_arm': 'Planned / arm',
    'experiments.created': 'Created',
    'experiments.started': 'Experiment started',
    'experiments.start': 'Start',
    'experiments.stopped': 'Experiment stopped',
    'experiments.stop': 'Stop',
    'experiments.control_badge': 'control',
    'experiments.streams_own': 'stream’s own',
    'experiments.serving': 'serving',
    'experiments.guardrails': 'Guardrails',
    'experiments.none_word': 'none',
    'experiments.analysis': 'Analysis',
    'experiments.analysis_sequential': 'sequential (always-valid mSPRT: look any time)',
    'experiments.analysis_fixed': 'fixed horizon (verdict at the planned size)',
    'experiments.planned_units': 'Planned units per arm',
    'experiments.not_set': 'not set',
    'experiments.attribution': 'Attribution window',
    'experiments.attribution_min': ' min after a reply mentions the item',
    'experiments.attribution_all': 'every event of an exposed unit',
    'experiments.started_at': 'Started',
    'experiments.stopped_at': 'Stopped',
    'experiments.arm': 'Arm',
    'experiments.harness_version': 'Harness version',
    'experiments.checkpoint': 'Checkpoint',
    'experiments.weight': 'Weight',
    'experiments.streams': 'Streams',
    'experiments.stream': 'Stream',
    'experiments.runs_col': 'Runs',
    'experiments.before': 'Before',
    'experiments.computing': 'Computing the report…',
    'experiments.shipped': 'Shipped',
    'experiments.when': 'When',
    'experiments.by': 'By',
    'experiments.serving_model': 'Serving model',
    'experiments.override': 'Override',
    'experiments.already_serving': 'already serving',
    'experiments.events_api': 'Commerce events API (for the shop side)',
    'experiments.report': 'Report',
    'experiments.withheld': 'Verdict withheld. ',
    'experiments.planned_sample': 'Planned sample: ',
    'experiments.stop_to_ship': 'Stop the experiment to ship the winner.',
    'experiments.srm': 'Sample-ratio mismatch. ',
    'experiments.guardrail_alert': 'Guardrail alert: ',
    'experiments.units': 'Units',
    'experiments.viewers': 'Viewers',
    'experiments.replies': 'Replies',
    'experiments.stream_hours': 'Stream hours',
    'experiments.per_arm': 'Per arm',
    'experiments.primary_badge': 'primary',
    'experiments.guardrail_badge': 'guardrail',
    'experiments.better': 'better',
    'experiments.worse': 'worse',
    'experiments.no_difference': 'no significant difference',
    'experiments.comparison': 'Treatment vs control (difference and uplift, 95 % intervals)',
    'experiments.metric': 'Metric',
    'experiments.treatment': 'Treatment',
    'experiments.control': 'Control',
    'experiments.treatment_value': 'Treatment value',
    'experiments.difference': 'Difference',
    'experiments.uplift': 'Uplift',
    'experiments.basis': 'Basis',
    'experiments.over_time': 'Over time',
    'experiments.minutes': 'minutes since start',
    'experiments.streams_own_version': 'stream’s own version',
    'experiments.checkpoint_optional': 'Checkpoint (optional)',
    'experiments.traffic_weight': 'Traffic weight',
    'experiments.new_experiment': 'New experiment',
    'experiments.name_ph': 'e.g. coupon skill on the beauty streams',
    'experiments.unit_of_assignment': 'Unit of assignment',
    'experiments.unit_stream': 'stream (live sessions)',
    'experiments.unit_viewer': 'viewer (one live session per arm in each room)',
    'experiments.fixed_horizon': 'fixed horizon',
    'experiments.sequential': 'sequential (mSPRT)',
    'experiments.attribution_minutes': 'Attribution window (minutes, 0 = all)',
    'experiments.currency': 'Currency',
    'experiments.alpha': 'Significance level α',
    'experiments.mde': 'Minimum detectable effect (relative)',
    'experiments.planned_ph': 'or compute below',
    'experiments.guardrails_hint': 'Guardrails (must not get significantly worse)',
    'experiments.add_arm': 'Add an arm',
    'experiments.sample_size': 'Sample size',
    'experiments.baseline_mean': 'Control mean of the primary metric',
    'experiments.sd': 'Per-unit standard deviation',
    'experiments.power': 'Power',
    'experiments.plan': 'Compute the planned size',
    'experiments.create': 'Create draft',
    'experiments.created_toast': 'Draft created: start it when ready',
    'experiments.metric_name.gmv_per_viewer': 'GMV per viewer',
    'experiments.metric_name.gmv_per_stream_hour': 'GMV per stream hour',
    'experiments.metric_name.item_views_per_viewer': 'Item views per viewer',
    'experiments.metric_name.conversion_rate': 'Conversion rate',
    'experiments.metric_name.coupon_use': 'Coupon use',
    'experiments.metric_name.latency_p95_s': 'Reply latency P95 (s)',
    'experiments.metric_name.violations_per_1000_replies': 'Violations per 1,000 replies',
    'experiments.metric_name.shed_per_1000_messages': 'Messages shed per 1,000',
  },
  'zh-CN': {
    'experiments.state.draft': '草稿', 'experiments.state.running': '运行中', 'experiments.state.stopped': '已停止',
    'experiments.console_model': '控制台的模型',
    'experiments.events_hint': '用运营或该直播间商家的 API 令牌（设置 → API 令牌）按直播间批量 POST，每批最多 10,000 个事件。事件按 id 幂等；未知商品、负金额和未来时间会被拒绝并说明原因。类型：item_view、add_to_cart、purchase、coupon_claim、link_click。',
    'experiments.as_of': '截至 {at} · 由已存储的分配、回合和事件重新计算 · bootstrap {n} 次重采样，种子 {seed}',
    'experiments.no_peeking': ' — 不要因为结果显著就提前停止：固定样本量下，提前查看并停止会增加假阳性。',
    'experiments.ship_arm': '发布 {arm}', 'experiments.of_planned': '（计划样本的 {pct}）',
    'experiments.ship_published': '已发布 {v} 到 {n} 个直播间', 'experiments.now_serving': '现在服务的是 {model}',
    'experiments.already_serves': '该检查点已在服务', 'experiments.shipped_toast': '已发布 {arm}：{what}',
    'experiments.ship_anyway': '仍要发布的理由（随发布记录）：', 'experiments.ship_winner': '发布胜出组（{arm}）',
    'experiments.ship_hint': '通过发布闸门把胜出组的 harness 版本发布到实验的直播间，并在其评测通过后把它的检查点设为服务模型。',
    'experiments.srm_text': '观察到的单位数 {observed}，预期为 {expected}（p = {p}）：分配或日志有问题，在查明之前本实验的任何指标都不可信。',
    'experiments.na': '不适用', 'experiments.always_valid': '（始终有效）',
    'experiments.srm_ok': '样本比例：p = {p}（正常）', 'experiments.srm_mismatch': '样本比例：p = {p}（不匹配）',
    'experiments.not_credited': ' · 未计入的事件：归因窗口外 {window} 个，未曝光单位 {unexposed} 个，曝光前 {before} 个，实验期外 {period} 个，其他币种 {currency} 个，重复 {duplicates} 个。',
    'experiments.each_point': '每个点是当时报告的样子（{n} 个点；每点 400 次 bootstrap 重采样）。',
    'experiments.metric_per_arm': '各组的 {metric}', 'experiments.diff_title': '{a} − {b} 及其 95% 区间',
    'experiments.units_per_arm': '各组单位数（计划 {n}）', 'experiments.n_streams': '（{n} 个直播间）',
    'experiments.arm_control': '组（对照组）', 'experiments.arm_n': '组 {n}',
    'experiments.checkpoint_title': '控制台模型的名称，或已推广的检查点目录（训练页面）',
    'experiments.title': 'LiveHAT · 实验', 'experiments.heading': '实验',
    'experiments.experiments': '实验',
    'experiments.none': '还没有实验：请在下方创建。',
    'experiments.name': '名称',
    'experiments.state': '状态',
    'experiments.unit': '分配单位',
    'experiments.arms': '实验组',
    'experiments.primary_metric': '主要指标',
    'experiments.planned_per_arm': '计划 / 组',
    'experiments.created': '创建时间',
    'experiments.started': '实验已开始',
    'experiments.start': '开始',
    'experiments.stopped': '实验已停止',
    'experiments.stop': '停止',
    'experiments.control_badge': '对照组',
    'experiments.streams_own': '直播间自己的版本',
    'experiments.serving': '当前服务模型',
    'experiments.guardrails': '护栏指标',
    'experiments.none_word': '无',
    'experiments.analysis': '分析方法',
    'experiments.analysis_sequential': '序贯（始终有效的 mSPRT：随时可看）',
    'experiments.analysis_fixed': '固定样本量（达到计划样本后给出结论）',
    'experiments.planned_units': '每组计划单位数',
    'experiments.not_set': '未设置',
    'experiments.attribution': '归因窗口',
    'experiments.attribution_min': ' 分钟（回复提到商品之后）',
    'experiments.attribution_all': '曝光单位的所有事件',
    'experiments.started_at': '开始',
    'experiments.stopped_at': '停止',
    'experiments.arm': '组',
    'experiments.harness_version': 'Harness 版本',
    'experiments.checkpoint': '检查点',
    'experiments.weight': '权重',
    'experiments.streams': '直播间',
    'experiments.stream': '直播间',
    'experiments.runs_col': '运行版本',
    'experiments.before': '之前',
    'experiments.computing': '正在计算报告…',
    'experiments.shipped': '已发布',
    'experiments.when': '时间',
    'experiments.by': '发布人',
    'experiments.serving_model': '服务模型',
    'experiments.override': '强制理由',
    'experiments.already_serving': '已在服务',
    'experiments.events_api': '电商事件 API（供店铺端使用）',
    'experiments.report': '报告',
    'experiments.withheld': '暂不给出结论。',
    'experiments.planned_sample': '计划样本：',
    'experiments.stop_to_ship': '停止实验后才能发布胜出组。',
    'experiments.srm': '样本比例不匹配。',
    'experiments.guardrail_alert': '护栏告警：',
    'experiments.units': '单位数',
    'experiments.viewers': '观众',
    'experiments.replies': '回复',
    'experiments.stream_hours': '直播时长（小时）',
    'experiments.per_arm': '各组',
    'experiments.primary_badge': '主要',
    'experiments.guardrail_badge': '护栏',
    'experiments.better': '更好',
    'experiments.worse': '更差',
    'experiments.no_difference': '无显著差异',
    'experiments.comparison': '实验组对比对照组（差值和提升，95% 区间）',
    'experiments.metric': '指标',
    'experiments.treatment': '实验组',
    'experiments.control': '对照组',
    'experiments.treatment_value': '实验组数值',
    'experiments.difference': '差值',
    'experiments.uplift': '提升',
    'experiments.basis': '依据',
    'experiments.over_time': '随时间变化',
    'experiments.minutes': '开始后的分钟数',
    'experiments.streams_own_version': '直播间自己的版本',
    'experiments.checkpoint_optional': '检查点（可选）',
    'experiments.traffic_weight': '流量权重',
    'experiments.new_experiment': '新建实验',
    'experiments.name_ph': '如：美妆直播间的优惠券技能',
    'experiments.unit_of_assignment': '分配单位',
    'experiments.unit_stream': '直播间（直播会话）',
    'experiments.unit_viewer': '观众（每个直播间每组一个直播会话）',
    'experiments.fixed_horizon': '固定样本量',
    'experiments.sequential': '序贯（mSPRT）',
    'experiments.attribution_minutes': '归因窗口（分钟，0 = 全部）',
    'experiments.currency': '币种',
    'experiments.alpha': '显著性水平 α',
    'experiments.mde': '最小可检测效应（相对）',
    'experiments.planned_ph': '或在下方计算',
    'experiments.guardrails_hint': '护栏指标（不得显著变差）',
    'experiments.add_arm': '添加一组',
    'experiments.sample_size': '样本量',
    'experiments.baseline_mean': '对照组主要指标均值',
    'experiments.sd': '单位标准差',
    'experiments.power': '检验功效',
    'experiments.plan': '计算计划样本量',
    'experiments.create': '创建草稿',
    'experiments.created_toast': '草稿已创建：准备好后开始',
    'experiments.metric_name.gmv_per_viewer': '人均成交额',
    'experiments.metric_name.gmv_per_stream_hour': '每直播小时成交额',
    'experiments.metric_name.item_views_per_viewer': '人均商品浏览',
    'experiments.metric_name.conversion_rate': '转化率',
    'experiments.metric_name.coupon_use': '优惠券使用',
    'experiments.metric_name.latency_p95_s': '回复延迟 P95（秒）',
    'experiments.metric_name.violations_per_1000_replies': '每千条回复违规数',
    'experiments.metric_name.shed_per_1000_messages': '每千条消息丢弃数',
  },
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const METRICS = ['gmv_per_viewer', 'gmv_per_stream_hour', 'item_views_per_viewer', 'conversion_rate', 'coupon_use',
    'latency_p95_s', 'violations_per_1000_replies', 'shed_per_1000_messages'];
  const GUARDRAILS = ['latency_p95_s', 'violations_per_1000_replies', 'shed_per_1000_messages'];
  // metricName is a metric's name in the page's language; the id itself
  // for a metric this page does not know.
  const metricName = (m) => (LH.i18n.has('experiments.metric_name.' + m) ? t('experiments.metric_name.' + m) : m);
  const listBox = el('div', {class: 'card', id: 'experiments'});
  const detail = el('div', {id: 'experiment-detail'});
  const formBox = el('div', {class: 'card'});
  main.append(listBox, detail, formBox);

  const [streams, versions] = await Promise.all([api('GET', '/api/streams'), api('GET', '/api/harnesses')]);
  let selected = new URLSearchParams(location.search).get('id') || '';

  const num = (v) => {
    if (v == null || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (a !== 0 && (a < 0.01 || a >= 1e5)) return Number(v).toExponential(2);
    return Number(v.toPrecision(4)).toString();
  };
  const stateBadge = (s) => el('span', {class: 'badge ' + ({running: 'good', stopped: ''}[s] ?? 'warn')},
    LH.i18n.has('experiments.state.' + s) ? t('experiments.state.' + s) : s);

  // ---- list ----
  async function loadList() {
    const list = await api('GET', '/api/experiments');
    const rows = list.map((x) => el('tr', {class: 'clickable' + (x.id === selected ? ' selected' : ''), dataset: {id: x.id},
      onclick: () => select(x.id)},
      el('td', {}, x.name), el('td', {}, stateBadge(x.state)), el('td', {}, x.unit),
      el('td', {}, x.arms.map((a) => a.name).join(' vs ')), el('td', {}, metricName(x.primary_metric)),
      el('td', {}, String(x.planned_units_per_arm || '–')), el('td', {}, fmt.time(x.created))));
    listBox.replaceChildren(el('h2', {}, t('experiments.experiments')), list.length
      ? el('table', {id: 'experiments-table'},
        el('thead', {}, el('tr', {}, [t('experiments.name'), t('experiments.state'), t('experiments.unit'), t('experiments.arms'), t('experiments.primary_metric'), t('experiments.planned_per_arm'), t('experiments.created')].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))
      : el('p', {class: 'muted'}, t('experiments.none')));
  }

  async function select(id) {
    selected = id;
    history.replaceState(null, '', '?id=' + encodeURIComponent(id));
    await Promise.all([loadList(), loadDetail()]);
  }

  // ---- detail ----
  async function act(path, body, what) {
    try {
      const res = await api('POST', path, body);
      toast(what);
      await Promise.all([loadList(), loadDetail()]);
      return res;
    } catch (err) {
      showError(err);
      return null;
    }
  }

  async function loadDetail() {
    if (!selected) { detail.replaceChildren(); return; }
    let x;
    try {
      x = await api('GET', '/api/experiments/' + encodeURIComponent(selected));
    } catch (err) {
      detail.replaceChildren(el('p', {class: 'error'}, err.message));
      return;
    }
    const base = '/api/experiments/' + encodeURIComponent(x.id);
    const buttons = el('div', {class: 'row'});
    if (x.state === 'draft') buttons.append(el('button', {id: 'start-experiment', onclick: () => act(base + '/start', undefined, t('experiments.started'))}, t('experiments.start')));
    if (x.state === 'running') buttons.append(el('button', {id: 'stop-experiment', class: 'danger', onclick: () => act(base + '/stop', undefined, t('experiments.stopped'))}, t('experiments.stop')));
    const armRows = x.arms.map((a, i) => el('tr', {},
      el('td', {}, a.name, i === 0 ? el('span', {class: 'badge small'}, t('experiments.control_badge')) : ''),
      el('td', {class: 'mono'}, a.harness_version ? fmt.short(a.harness_version) : t('experiments.streams_own')),
      el('td', {}, a.checkpoint || t('experiments.serving')), el('td', {}, String(a.weight))));
    const streamRows = x.streams.map((s) => el('tr', {},
      el('td', {}, s.name || s.stream_id), el('td', {}, s.arm || '–'), el('td', {class: 'mono'}, fmt.short(s.harness_version) || '–'),
      el('td', {class: 'mono'}, fmt.short(s.previous_version) || '–')));
    const card = el('div', {class: 'card', id: 'experiment-card'},
      el('div', {class: 'row'}, el('h2', {}, x.name), stateBadge(x.state), el('span', {class: 'spacer'}), buttons),
      el('dl', {class: 'kv'},
        el('dt', {}, t('experiments.unit')), el('dd', {}, x.unit),
        el('dt', {}, t('experiments.primary_metric')), el('dd', {}, metricName(x.primary_metric)),
        el('dt', {}, t('experiments.guardrails')), el('dd', {}, (x.guardrails || []).join(', ') || t('experiments.none_word')),
        el('dt', {}, t('experiments.analysis')), el('dd', {}, x.analysis === 'sequential' ? t('experiments.analysis_sequential') : t('experiments.analysis_fixed')),
        el('dt', {}, t('experiments.planned_units')), el('dd', {}, String(x.planned_units_per_arm || t('experiments.not_set'))),
        el('dt', {}, t('experiments.attribution')), el('dd', {}, x.attribution_window_ns ? (x.attribution_window_ns / 6e10) + t('experiments.attribution_min') : t('experiments.attribution_all')),
        el('dt', {}, t('experiments.started_at')), el('dd', {}, fmt.time(x.started) || '–'),
        el('dt', {}, t('experiments.stopped_at')), el('dd', {}, fmt.time(x.stopped) || '–')),
      el('h3', {}, t('experiments.arms')),
      el('table', {}, el('thead', {}, el('tr', {}, [t('experiments.arm'), t('experiments.harness_version'), t('experiments.checkpoint'), t('experiments.weight')].map((h) => el('th', {}, h)))), el('tbody', {}, armRows)),
      el('h3', {}, t('experiments.streams')),
      el('table', {id: 'experiment-streams'}, el('thead', {}, el('tr', {}, [t('experiments.stream'), t('experiments.arm'), t('experiments.runs_col'), t('experiments.before')].map((h) => el('th', {}, h)))), el('tbody', {}, streamRows)),
      ...shipHistory(x),
      eventsHelp(x));
    detail.replaceChildren(card);
    if (x.state === 'draft') return;
    const reportBox = el('div', {class: 'card', id: 'experiment-report'}, el('p', {class: 'muted'}, t('experiments.computing')));
    const chartBox = el('div', {class: 'card', id: 'experiment-charts'});
    detail.append(reportBox, chartBox);
    try {
      const rep = await api('GET', base + '/report');
      reportBox.replaceChildren(...renderReport(x, rep, base));
    } catch (err) {
      reportBox.replaceChildren(el('p', {class: 'error'}, err.message));
    }
    try {
      const series = await api('GET', base + '/series?points=12');
      chartBox.replaceChildren(...renderCharts(x, series));
    } catch (err) {
      chartBox.replaceChildren(el('p', {class: 'error'}, err.message));
    }
  }

  // The winners shipped, with what each changed, who shipped and any
  // override reason.
  function shipHistory(x) {
    if (!(x.ships || []).length) return [];
    const model = (spec) => spec || t('experiments.console_model');
    const rows = x.ships.map((sh) => el('tr', {},
      el('td', {}, fmt.time(sh.shipped_at)), el('td', {}, sh.arm), el('td', {}, sh.shipper || sh.shipped_by),
      el('td', {class: 'mono'}, sh.harness_version ? fmt.short(sh.harness_version) : '–'),
      el('td', {}, sh.checkpoint ? (sh.serving_changed ? model(sh.previous_serving) + ' → ' + model(sh.serving) : t('experiments.already_serving')) : '–'),
      el('td', {}, sh.override || '–')));
    return [el('h3', {}, t('experiments.shipped')),
      el('table', {id: 'experiment-ships'}, el('thead', {}, el('tr', {}, [t('experiments.when'), t('experiments.arm'), t('experiments.by'), t('experiments.harness_version'), t('experiments.serving_model'), t('experiments.override')].map((h) => el('th', {}, h)))), el('tbody', {}, rows))];
  }

  function eventsHelp(x) {
    const id = x.streams.length ? x.streams[0].stream_id : 'STREAM_ID';
    const sample = JSON.stringify({events: [{id: 'order-1001-view', viewer_id: 'viewer-42', item_id: 'p-serum', kind: 'item_view', time: '2026-01-01T12:00:00Z'},
      {id: 'order-1001', viewer_id: 'viewer-42', item_id: 'p-serum', kind: 'purchase', amount_minor: 19900, currency: 'CNY', time: '2026-01-01T12:03:00Z'}]}, null, 1);
    return el('details', {},
      el('summary', {}, t('experiments.events_api')),
      el('p', {class: 'small muted'}, t('experiments.events_hint')),
      el('pre', {}, 'curl -X POST -H "Authorization: Bearer lh_…" -H "Content-Type: application/json" \\\n  ' + location.origin + '/api/streams/' + id + '/events -d \'' + sample + '\''));
  }

  function interval(ci) { return ci ? '[' + num(ci.lo) + ', ' + num(ci.hi) + ']' : ''; }

  function renderReport(x, rep, base) {
    const out = [el('h2', {}, t('experiments.report')), el('p', {class: 'muted small'}, t('experiments.as_of', {at: fmt.time(rep.as_of), n: rep.bootstrap_resamples, seed: rep.bootstrap_seed}))];
    const v = rep.verdict;
    // Verdict, or why it is withheld (peeking).
    const progress = el('progress', {max: 1, value: Math.min(1, v.progress || 0)});
    if (!v.allowed) {
      out.push(el('div', {class: 'card warn-box', id: 'peeking-warning'},
        el('strong', {}, t('experiments.withheld')), v.reason, el('div', {class: 'row small'}, t('experiments.planned_sample'), progress, fmt.pct(v.progress || 0),
          x.analysis === 'fixed_horizon' ? t('experiments.no_peeking') : '')));
    } else {
      const cls = v.decision === 'ship' ? 'good' : '';
      out.push(el('div', {class: 'row', id: 'verdict'}, el('span', {class: 'badge ' + cls}, v.decision === 'ship' ? t('experiments.ship_arm', {arm: v.winner}) : v.decision.replace('_', ' ')),
        el('span', {}, v.reason), el('span', {class: 'small muted'}, t('experiments.of_planned', {pct: fmt.pct(v.progress || 0)}))));
      if (v.decision === 'ship' && x.state === 'stopped') {
        const ship = el('button', {id: 'ship-winner', onclick: async () => {
          let body = {};
          for (;;) {
            try {
              const res = await api('POST', base + '/ship', body);
              const done = [];
              if (res.release) done.push(t('experiments.ship_published', {v: fmt.short(res.release.version), n: res.release.streams.length}));
              if (res.ship.serving_changed) done.push(t('experiments.now_serving', {model: res.serving.default ? t('experiments.console_model') : res.serving.spec}));
              else if (res.ship.checkpoint) done.push(t('experiments.already_serves'));
              toast(t('experiments.shipped_toast', {arm: res.ship.arm, what: done.join('; ')}));
              await Promise.all([loadList(), loadDetail()]);
              return;
            } catch (err) {
              // A gate that found regressions needs a recorded reason.
              if (err.field === 'override' && !body.override) {
                const reason = window.prompt(err.message + '\n\n' + t('experiments.ship_anyway'));
                if (reason) { body = {override: reason}; continue; }
              }
              showError(err);
              return;
            }
          }
        }}, t('experiments.ship_winner', {arm: v.winner}));
        out.push(el('div', {class: 'row'}, ship, el('span', {class: 'small muted'}, t('experiments.ship_hint'))));
      } else if (v.decision === 'ship') {
        out.push(el('p', {class: 'small muted'}, t('experiments.stop_to_ship')));
      }
    }
    if (rep.srm.mismatch) {
      out.push(el('div', {class: 'card bad-box', id: 'srm-warning'}, el('strong', {}, t('experiments.srm')),
        t('experiments.srm_text', {observed: rep.srm.observed.join(' / '), expected: rep.srm.expected.map((e) => e.toFixed(1)).join(' / '),
          p: num(rep.srm.p_value)})));
    }
    for (const g of v.guardrail_alerts || []) {
      out.push(el('div', {class: 'card bad-box guardrail-alert'}, el('strong', {}, t('experiments.guardrail_alert')), g));
    }
    // Per-arm metrics with intervals.
    const head = [t('experiments.arm'), t('experiments.units'), t('experiments.viewers'), t('experiments.replies'), t('experiments.stream_hours'), 'GMV (' + x.currency + ')', ...METRICS.map(metricName)];
    const rows = rep.arms.map((a) => el('tr', {dataset: {arm: a.arm}},
      el('td', {}, a.arm), el('td', {}, String(a.units)), el('td', {}, String(a.viewers)), el('td', {}, String(a.replies)),
      el('td', {}, num(a.stream_hours)), el('td', {}, (a.gmv_minor / 100).toFixed(2)),
      ...METRICS.map((m) => {
        const am = a.metrics.find((q) => q.metric === m);
        return el('td', {}, am ? num(am.value) : '–', am ? el('div', {class: 'small muted'}, interval(am.ci95)) : '');
      })));
    out.push(el('h3', {}, t('experiments.per_arm')), el('div', {class: 'scroll'}, el('table', {id: 'arm-table'},
      el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))), el('tbody', {}, rows))));
    // Comparisons against the control.
    const crow = rep.comparisons.map((c) => {
      const guard = GUARDRAILS.includes(c.metric);
      const good = c.better, bad = c.worse;
      const cls = good ? 'delta-up' : bad ? 'delta-down' : '';
      const ci = c.basis === 'bootstrap' && c.bootstrap_diff_ci ? c.bootstrap_diff_ci : c.basis === 'sequential' && c.sequential ? c.sequential.diff_ci : c.basis === 'cuped' && c.cuped ? c.cuped.diff_ci : c.diff_ci;
      const uci = c.basis === 'bootstrap' && c.bootstrap_uplift_ci ? c.bootstrap_uplift_ci : c.uplift_ci;
      return el('tr', {class: c.metric === x.primary_metric ? 'primary' : '', dataset: {metric: c.metric, treatment: c.treatment}},
        el('td', {title: c.metric}, metricName(c.metric), c.metric === x.primary_metric ? el('span', {class: 'badge small'}, t('experiments.primary_badge')) : guard ? el('span', {class: 'badge small'}, t('experiments.guardrail_badge')) : ''),
        el('td', {}, c.treatment), el('td', {}, num(c.control_value)), el('td', {}, num(c.treatment_value)),
        el('td', {class: cls}, (c.diff > 0 ? '+' : '') + num(c.diff), el('div', {class: 'small'}, interval(ci))),
        el('td', {class: cls}, c.uplift_defined ? (c.uplift > 0 ? '+' : '') + fmt.pct(c.uplift) : t('experiments.na'),
          c.uplift_defined ? el('div', {class: 'small'}, '[' + fmt.pct(uci.lo) + ', ' + fmt.pct(uci.hi) + ']') : ''),
        el('td', {}, c.basis), el('td', {}, c.sequential ? num(c.sequential.p_value) + t('experiments.always_valid') : num(c.p_value)),
        el('td', {}, good ? el('span', {class: 'badge good'}, t('experiments.better')) : bad ? el('span', {class: 'badge bad'}, t('experiments.worse')) : el('span', {class: 'muted'}, t('experiments.no_difference'))));
    });
    out.push(el('h3', {}, t('experiments.comparison')), el('div', {class: 'scroll'}, el('table', {id: 'comparison-table'},
      el('thead', {}, el('tr', {}, [t('experiments.metric'), t('experiments.treatment'), t('experiments.control'), t('experiments.treatment_value'), t('experiments.difference'), t('experiments.uplift'), t('experiments.basis'), 'p', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, crow))));
    const ex = rep.excluded;
    out.push(el('p', {class: 'small muted'}, t(rep.srm.mismatch ? 'experiments.srm_mismatch' : 'experiments.srm_ok', {p: num(rep.srm.p_value)}) +
      t('experiments.not_credited', {window: ex.not_attributed, unexposed: ex.unexposed, before: ex.before_exposure, period: ex.outside_period,
        currency: ex.other_currency, duplicates: ex.duplicates})));
    return out;
  }

  function renderCharts(x, series) {
    const pts = series.points;
    const t0 = pts.length ? new Date(x.started).getTime() : 0;
    const minutes = (p) => (new Date(p.as_of).getTime() - t0) / 60000;
    const arms = x.arms.map((a) => a.name);
    const primary = arms.map((a) => ({name: a, points: pts.filter((p) => p.primary[a]).map((p) => [minutes(p), p.primary[a].value])}));
    const units = arms.map((a) => ({name: a, points: pts.map((p) => [minutes(p), p.units[a] || 0])}));
    const charts = [el('h2', {}, t('experiments.over_time')), el('p', {class: 'small muted'}, t('experiments.each_point', {n: pts.length}))];
    const grid = el('div', {class: 'grid charts'});
    grid.append(el('div', {class: 'chart-box', id: 'chart-primary'}, el('h3', {}, t('experiments.metric_per_arm', {metric: metricName(x.primary_metric)})), Charts.line(primary, {xLabel: t('experiments.minutes')})));
    for (const a of arms.slice(1)) {
      const cmp = pts.map((p) => [p, p.comparisons.find((c) => c.treatment === a)]).filter(([, c]) => c);
      const ci = (c) => c.basis === 'bootstrap' && c.bootstrap_diff_ci ? c.bootstrap_diff_ci : c.sequential ? c.sequential.diff_ci : c.diff_ci;
      grid.append(el('div', {class: 'chart-box'}, el('h3', {}, t('experiments.diff_title', {a, b: arms[0]})),
        Charts.line([{name: 'difference', points: cmp.map(([p, c]) => [minutes(p), c.diff])},
          {name: 'low', points: cmp.map(([p, c]) => [minutes(p), ci(c).lo])},
          {name: 'high', points: cmp.map(([p, c]) => [minutes(p), ci(c).hi])}], {xLabel: t('experiments.minutes')})));
    }
    grid.append(el('div', {class: 'chart-box'}, el('h3', {}, t('experiments.units_per_arm', {n: x.planned_units_per_arm || '–'})), Charts.line(units, {xLabel: t('experiments.minutes')})));
    charts.push(grid);
    return charts;
  }

  // ---- create form ----
  function armRow(i, name) {
    const sel = el('select', {name: `arms[${i}].harness_version`}, el('option', {value: ''}, t('experiments.streams_own_version')),
      ...versions.map((v) => el('option', {value: v.version}, fmt.short(v.version) + ' · ' + v.name + (v.streams ? t('experiments.n_streams', {n: v.streams}) : ''))));
    return el('div', {class: 'form-grid arm-row'},
      el('div', {class: 'field'}, el('label', {}, i === 0 ? t('experiments.arm_control') : t('experiments.arm_n', {n: i})), el('input', {name: `arms[${i}].name`, value: name, required: true})),
      el('div', {class: 'field'}, el('label', {}, t('experiments.harness_version')), sel),
      el('div', {class: 'field'}, el('label', {}, t('experiments.checkpoint_optional')), el('input', {name: `arms[${i}].checkpoint`, placeholder: t('experiments.serving'), title: t('experiments.checkpoint_title')})),
      el('div', {class: 'field'}, el('label', {}, t('experiments.traffic_weight')), el('input', {name: `arms[${i}].weight`, type: 'number', step: 'any', min: '0', value: '1'})));
  }

  function field(label, input) { return el('div', {class: 'field'}, el('label', {}, label), input); }

  function renderForm() {
    const arms = el('div', {id: 'arms'}, armRow(0, 'control'), armRow(1, 'treatment'));
    const streamBoxes = el('div', {class: 'row', id: 'experiment-streams-field'}, ...streams.map((s) =>
      el('label', {class: 'check'}, el('input', {type: 'checkbox', name: 'streams', value: s.id, checked: true}), s.name)));
    const guards = el('div', {class: 'row'}, ...GUARDRAILS.map((g) =>
      el('label', {class: 'check'}, el('input', {type: 'checkbox', name: 'guardrails', value: g, checked: g !== 'shed_per_1000_messages'}), g)));
    const planned = el('input', {name: 'planned_units_per_arm', type: 'number', min: '0', step: '1', placeholder: t('experiments.planned_ph')});
    const form = el('form', {id: 'new-experiment'},
      el('h2', {}, t('experiments.new_experiment')),
      el('div', {class: 'form-grid'},
        field(t('experiments.name'), el('input', {name: 'name', required: true, placeholder: t('experiments.name_ph')})),
        field(t('experiments.unit_of_assignment'), el('select', {name: 'unit'}, el('option', {value: 'stream'}, t('experiments.unit_stream')), el('option', {value: 'viewer'}, t('experiments.unit_viewer')))),
        field(t('experiments.primary_metric'), el('select', {name: 'primary_metric'}, ...METRICS.slice(0, 5).map((m) => el('option', {value: m}, metricName(m))))),
        field(t('experiments.analysis'), el('select', {name: 'analysis'}, el('option', {value: 'fixed_horizon'}, t('experiments.fixed_horizon')), el('option', {value: 'sequential'}, t('experiments.sequential')))),
        field(t('experiments.attribution_minutes'), el('input', {name: 'attribution_window_minutes', type: 'number', min: '0', step: 'any', value: '30'})),
        field(t('experiments.currency'), el('input', {name: 'currency', value: 'CNY', maxlength: 3})),
        field(t('experiments.alpha'), el('input', {name: 'alpha', type: 'number', step: 'any', value: '0.05'})),
        field(t('experiments.mde'), el('input', {name: 'mde', type: 'number', step: 'any', value: '0.05'})),
        field(t('experiments.planned_units'), planned)),
      el('label', {}, t('experiments.streams')), streamBoxes,
      el('label', {}, t('experiments.guardrails_hint')), guards,
      el('h3', {}, t('experiments.arms')), arms,
      el('button', {type: 'button', class: 'secondary', onclick: () => arms.append(armRow(arms.children.length, 'arm' + arms.children.length))}, t('experiments.add_arm')),
      el('h3', {}, t('experiments.sample_size')),
      el('div', {class: 'form-grid'},
        field(t('experiments.baseline_mean'), el('input', {name: 'plan.baseline_mean', type: 'number', step: 'any', placeholder: 'e.g. 60'})),
        field(t('experiments.sd'), el('input', {name: 'plan.sd', type: 'number', step: 'any', placeholder: 'e.g. 150'})),
        field(t('experiments.power'), el('input', {name: 'plan.power', type: 'number', step: 'any', value: '0.8'}))),
      el('div', {class: 'row'},
        el('button', {type: 'button', class: 'secondary', id: 'plan-size', onclick: async () => {
          try {
            const r = await api('POST', '/api/experiments/plan', {baseline_mean: +form['plan.baseline_mean'].value, sd: +form['plan.sd'].value,
              power: +form['plan.power'].value, mde: +form.mde.value, alpha: +form.alpha.value});
            planned.value = r.units_per_arm;
            toast(r.units_per_arm + ' units per arm');
          } catch (err) { showError(err, form); }
        }}, t('experiments.plan')),
        el('span', {class: 'spacer'}), el('button', {type: 'submit'}, t('experiments.create'))));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const armsBody = [...arms.children].map((_, i) => ({name: form[`arms[${i}].name`].value, harness_version: form[`arms[${i}].harness_version`].value,
        checkpoint: form[`arms[${i}].checkpoint`].value, weight: +form[`arms[${i}].weight`].value}));
      const body = {name: form.name.value, unit: form.unit.value, primary_metric: form.primary_metric.value, analysis: form.analysis.value,
        attribution_window_minutes: +form.attribution_window_minutes.value, currency: form.currency.value,
        alpha: +form.alpha.value, mde: +form.mde.value, planned_units_per_arm: +planned.value || 0,
        streams: [...form.querySelectorAll('input[name=streams]:checked')].map((n) => n.value),
        guardrails: [...form.querySelectorAll('input[name=guardrails]:checked')].map((n) => n.value), arms: armsBody};
      try {
        const x = await api('POST', '/api/experiments', body);
        toast(t('experiments.created_toast'));
        await select(x.id);
      } catch (err) { showError(err, form); }
    });
    formBox.replaceChildren(form);
  }

  renderForm();
  await loadList();
  await loadDetail();
});
