'use strict';
// Evaluations: run a suite against a model in the background, the history
// as a table and a chart of scores over time per suite, and a drill-down
// to each item (question, reply, grade, deductions). Replies are model
// output and questions viewer text: both are inserted as text only.
LH.i18n.add({
  en: {
    'evals.title': 'LiveHAT · Evaluations', 'evals.heading': 'Evaluations',
    'evals.state.done': 'done', 'evals.state.failed': 'failed', 'evals.state.running': 'running', 'evals.state.interrupted': 'interrupted',
    'evals.state.queued': 'queued', 'evals.state.stopped': 'stopped',
    'evals.suite_items': '{name} ({n} items)', 'evals.model.serving': 'Serving model', 'evals.promoted_step': ' · {run} step {step}',
    'evals.model.expert': 'Scripted expert', 'evals.model.run': 'A run\'s checkpoint',
    'evals.model.checkpoint': 'A promoted checkpoint (as an experiment arm names it)', 'evals.model.url': 'OpenAI-compatible server',
    'evals.run_option': '{name} · {stage} · step {step}', 'evals.model_name_ph': 'model name', 'evals.checkpoint_ph': 'promoted folder, e.g. RUN-step40',
    'evals.run': 'Run', 'evals.server_url': 'Server URL', 'evals.model_name': 'Model name', 'evals.checkpoint': 'Checkpoint',
    'evals.suite': 'Suite', 'evals.items_n': 'Items (the first N)', 'evals.model': 'Model', 'evals.run_evaluation': 'Run evaluation',
    'evals.started': 'Evaluation started: {suite} × {n}', 'evals.run_an_evaluation': 'Run an evaluation',
    'evals.scores_over_time': 'Scores over time', 'evals.trend_hint': 'The trend shows once two evaluations have finished.',
    'evals.x_label': 'evaluation #', 'evals.history': 'History', 'evals.none': 'No evaluations yet.',
    'evals.col.when': 'When', 'evals.col.suite': 'Suite', 'evals.col.model': 'Model', 'evals.col.state': 'State', 'evals.col.items': 'Items',
    'evals.col.score': 'Score', 'evals.col.ci': '95% CI', 'evals.col.by': 'By', 'evals.col.item': 'Item', 'evals.col.category': 'Category',
    'evals.col.outcome': 'Outcome', 'evals.col.question': 'Question',
    'evals.progress': '{done} / {total} items', 'evals.harness': ' · harness ', 'evals.started_by': ' · started {at} by {by}',
    'evals.stopped': 'Stopped', 'evals.stop': 'Stop', 'evals.confirm_delete': 'Delete this evaluation and its items?',
    'evals.deleted': 'Deleted', 'evals.delete': 'Delete',
    'evals.m.score': 'score {v}', 'evals.m.accuracy': 'accuracy {v}', 'evals.m.effectiveness': 'effectiveness {v}',
    'evals.m.tool_rationality': 'tool rationality {v}', 'evals.m.skill_selection': 'skill selection {v}', 'evals.m.errors': 'errors {v}',
    'evals.by_category': 'By category', 'evals.items': 'Items', 'evals.error': 'error', 'evals.no_items': 'No items finished.',
    'evals.item': 'Item ', 'evals.reply': 'Reply', 'evals.silent': '(silent)', 'evals.grade': 'Grade',
    'evals.grade_line': 'accuracy {accuracy} · effectiveness {effectiveness} · tool rationality {tool} · skill selection {skill}',
    'evals.reasons': 'Reasons', 'evals.no_deductions': 'no deductions', 'evals.error_label': 'Error', 'evals.time': 'Time',
    'evals.harness_label': 'Harness',
  },
  'zh-CN': {
    'evals.title': 'LiveHAT · 评测', 'evals.heading': '评测',
    'evals.state.done': '完成', 'evals.state.failed': '失败', 'evals.state.running': '运行中', 'evals.state.interrupted': '已中断',
    'evals.state.queued': '排队中', 'evals.state.stopped': '已停止',
    'evals.suite_items': '{name}（{n} 条）', 'evals.model.serving': '当前服务模型', 'evals.promoted_step': ' · {run} 第 {step} 步',
    'evals.model.expert': '脚本专家', 'evals.model.run': '某次训练的检查点',
    'evals.model.checkpoint': '已推广的检查点（实验组所用的名称）', 'evals.model.url': 'OpenAI 兼容服务',
    'evals.run_option': '{name} · {stage} · 第 {step} 步', 'evals.model_name_ph': '模型名称', 'evals.checkpoint_ph': '推广目录，如 RUN-step40',
    'evals.run': '训练任务', 'evals.server_url': '服务地址', 'evals.model_name': '模型名称', 'evals.checkpoint': '检查点',
    'evals.suite': '评测集', 'evals.items_n': '条目数（前 N 条）', 'evals.model': '模型', 'evals.run_evaluation': '开始评测',
    'evals.started': '评测已开始：{suite} × {n}', 'evals.run_an_evaluation': '运行评测',
    'evals.scores_over_time': '得分趋势', 'evals.trend_hint': '完成两次评测后显示趋势。',
    'evals.x_label': '评测序号', 'evals.history': '历史', 'evals.none': '还没有评测。',
    'evals.col.when': '时间', 'evals.col.suite': '评测集', 'evals.col.model': '模型', 'evals.col.state': '状态', 'evals.col.items': '条目',
    'evals.col.score': '得分', 'evals.col.ci': '95% 置信区间', 'evals.col.by': '发起人', 'evals.col.item': '条目', 'evals.col.category': '类别',
    'evals.col.outcome': '结果', 'evals.col.question': '问题',
    'evals.progress': '{done} / {total} 条', 'evals.harness': ' · harness ', 'evals.started_by': ' · {by} 于 {at} 开始',
    'evals.stopped': '已停止', 'evals.stop': '停止', 'evals.confirm_delete': '删除此评测及其条目？',
    'evals.deleted': '已删除', 'evals.delete': '删除',
    'evals.m.score': '得分 {v}', 'evals.m.accuracy': '准确性 {v}', 'evals.m.effectiveness': '有效性 {v}',
    'evals.m.tool_rationality': '工具合理性 {v}', 'evals.m.skill_selection': '技能选择 {v}', 'evals.m.errors': '错误 {v}',
    'evals.by_category': '按类别', 'evals.items': '条目', 'evals.error': '错误', 'evals.no_items': '没有完成的条目。',
    'evals.item': '条目 ', 'evals.reply': '回复', 'evals.silent': '（无回复）', 'evals.grade': '评分',
    'evals.grade_line': '准确性 {accuracy} · 有效性 {effectiveness} · 工具合理性 {tool} · 技能选择 {skill}',
    'evals.reasons': '原因', 'evals.no_deductions': '无扣分', 'evals.error_label': '错误', 'evals.time': '耗时',
    'evals.harness_label': 'Harness',
  },
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const formCard = el('div', {class: 'card'});
  const chartCard = el('div', {class: 'card', id: 'evals-chart'});
  const listCard = el('div', {class: 'card'});
  const detail = el('div', {id: 'eval-detail-box'});
  main.append(formCard, chartCard, listCard, detail);

  const STATE_KIND = {done: 'good', failed: 'bad', running: 'warn', interrupted: 'warn', queued: '', stopped: ''};
  const badge = (state) => el('span', {class: 'badge state ' + (STATE_KIND[state] || '')},
    LH.i18n.has('evals.state.' + state) ? t('evals.state.' + state) : state);
  const score = (v) => v == null ? '' : fmt.num(v, 1);
  const [suites, runs, serving] = await Promise.all([api('GET', '/api/evals/suites'), api('GET', '/api/runs'), api('GET', '/api/serving-model')]);
  let evals = [];
  let openID = null;
  let poll = null;

  // The form.
  const suite = el('select', {id: 'e-suite', name: 'suite'}, suites.map((s) => el('option', {value: s.name}, t('evals.suite_items', {name: s.name, n: s.items}))));
  const n = el('input', {id: 'e-n', name: 'n', type: 'number', min: '1', value: '20'});
  const model = el('select', {id: 'e-model', name: 'model'},
    el('option', {value: 'serving'}, t('evals.model.serving') + (serving.promotion ? t('evals.promoted_step', {run: serving.promotion.run_name, step: serving.promotion.step}) : '')),
    el('option', {value: 'expert'}, t('evals.model.expert')),
    el('option', {value: 'run'}, t('evals.model.run')),
    el('option', {value: 'checkpoint'}, t('evals.model.checkpoint')),
    el('option', {value: 'url'}, t('evals.model.url')));
  const run = el('select', {id: 'e-run_id', name: 'run_id'},
    runs.filter((r) => r.step > 0).map((r) => el('option', {value: r.id}, t('evals.run_option', {name: r.name, stage: r.stage, step: r.step}))));
  const url = el('input', {id: 'e-url', name: 'url', placeholder: 'http://host:8000/v1'});
  const remote = el('input', {id: 'e-remote_model', name: 'remote_model', placeholder: t('evals.model_name_ph')});
  const checkpoint = el('input', {id: 'e-checkpoint', name: 'checkpoint', placeholder: t('evals.checkpoint_ph')});
  const wrap = (label, input) => el('div', {class: 'field'}, el('label', {for: input.id}, label), input);
  const runField = wrap(t('evals.run'), run), urlField = wrap(t('evals.server_url'), url), remoteField = wrap(t('evals.model_name'), remote);
  const checkpointField = wrap(t('evals.checkpoint'), checkpoint);
  const form = el('form', {id: 'eval-form'},
    el('div', {class: 'form-grid'}, wrap(t('evals.suite'), suite), wrap(t('evals.items_n'), n), wrap(t('evals.model'), model), runField, checkpointField, urlField, remoteField),
    el('button', {type: 'submit'}, t('evals.run_evaluation')));
  function showModelFields() {
    runField.hidden = model.value !== 'run';
    checkpointField.hidden = model.value !== 'checkpoint';
    urlField.hidden = remoteField.hidden = model.value !== 'url';
  }
  model.addEventListener('change', showModelFields);
  // The runs page links here to evaluate one run's checkpoint.
  const wanted = new URLSearchParams(location.search).get('run');
  if (wanted && runs.some((r) => r.id === wanted && r.step > 0)) { model.value = 'run'; run.value = wanted; }
  suite.addEventListener('change', () => { n.max = String(suites.find((s) => s.name === suite.value).items); });
  showModelFields();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    form.querySelectorAll('.invalid').forEach((x) => x.classList.remove('invalid'));
    const body = {suite: suite.value, n: Number(n.value), model: model.value};
    if (model.value === 'run') body.run_id = run.value;
    if (model.value === 'checkpoint') body.checkpoint = checkpoint.value;
    if (model.value === 'url') { body.url = url.value; body.remote_model = remote.value; }
    try {
      const ev = await api('POST', '/api/evals', body);
      toast(t('evals.started', {suite: ev.suite, n: ev.n}));
      await load();
      openEval(ev.id);
    } catch (err) { showError(err, form); }
  });
  formCard.append(el('h2', {}, t('evals.run_an_evaluation')), form);

  function drawChart() {
    const done = evals.filter((e) => e.score != null && e.state === 'done');
    const names = [...new Set(done.map((e) => e.suite))].sort();
    chartCard.replaceChildren(el('h2', {}, t('evals.scores_over_time')));
    if (done.length < 2) { chartCard.append(el('p', {class: 'muted'}, t('evals.trend_hint'))); return; }
    // x is the evaluation's number in the history, so runs on one day
    // stay apart; the table below has the dates.
    const series = names.map((s) => ({name: s, points: evals.map((e, i) => [i + 1, e]).filter(([, e]) => e.suite === s && e.score != null && e.state === 'done').map(([i, e]) => [i, e.score])}));
    const chart = Charts.line(series, {xLabel: t('evals.x_label')});
    chart.dataset.points = String(done.length);
    chartCard.append(chart);
  }

  function drawTable() {
    const rows = evals.slice().reverse().map((e, i) => el('tr', {class: 'clickable' + (e.id === openID ? ' selected' : ''), dataset: {id: e.id}, onclick: () => openEval(e.id)},
      el('td', {}, String(evals.length - i)), el('td', {}, fmt.time(e.created_at)), el('td', {}, e.suite), el('td', {}, e.model_name),
      el('td', {}, badge(e.state)), el('td', {class: 'mono'}, e.done + ' / ' + e.total), el('td', {class: 'score'}, score(e.score)),
      el('td', {class: 'mono'}, e.report && e.report.ci95 ? '[' + score(e.report.ci95[0]) + ', ' + score(e.report.ci95[1]) + ']' : ''),
      el('td', {}, e.creator)));
    listCard.replaceChildren(el('h2', {}, t('evals.history')), evals.length
      ? el('table', {id: 'evals-table'}, el('thead', {}, el('tr', {}, ['#', 'when', 'suite', 'model', 'state', 'items', 'score', 'ci', 'by'].map((h) => el('th', {}, h === '#' ? h : t('evals.col.' + h))))), el('tbody', {}, rows))
      : el('p', {class: 'muted'}, t('evals.none')));
  }

  async function load() {
    evals = await api('GET', '/api/evals');
    drawChart();
    drawTable();
    const live = evals.some((e) => e.state === 'queued' || e.state === 'running');
    if (live && !poll) poll = setInterval(async () => { await load(); if (openID) refreshOpen(); }, 1000);
    if (!live && poll) { clearInterval(poll); poll = null; if (openID) refreshOpen(); }
  }

  let shownState = null;
  async function refreshOpen() {
    const ev = evals.find((e) => e.id === openID);
    if (ev && ev.state !== shownState) openEval(openID);
    else if (ev) { const p = document.getElementById('eval-progress'); if (p) p.textContent = t('evals.progress', {done: ev.done, total: ev.total}); }
  }

  async function openEval(id) {
    openID = id;
    location.hash = id;
    let ev;
    try { ev = await api('GET', '/api/evals/' + encodeURIComponent(id)); } catch (err) { showError(err); return; }
    shownState = ev.state;
    for (const row of document.querySelectorAll('#evals-table tbody tr')) row.classList.toggle('selected', row.dataset.id === id);
    const rep = ev.report || {};
    const live = ev.state === 'queued' || ev.state === 'running';
    const head = el('div', {},
      el('h2', {}, ev.suite + ' · ' + ev.model_name + ' ', badge(ev.state)),
      el('p', {class: 'muted'}, el('span', {id: 'eval-progress'}, t('evals.progress', {done: ev.done, total: ev.total})), t('evals.harness'), el('span', {class: 'mono'}, fmt.short(ev.harness_version)),
        t('evals.started_by', {at: fmt.time(ev.created_at), by: ev.creator})),
      ev.error ? el('p', {class: 'error'}, ev.error) : '',
      live ? el('button', {class: 'danger', id: 'eval-stop', onclick: async () => {
        try { await api('POST', '/api/evals/' + ev.id + '/stop'); toast(t('evals.stopped')); await load(); openEval(ev.id); } catch (err) { showError(err); }
      }}, t('evals.stop')) : el('button', {class: 'link', id: 'eval-delete', onclick: async () => {
        if (!confirm(t('evals.confirm_delete'))) return;
        try { await api('DELETE', '/api/evals/' + ev.id); toast(t('evals.deleted')); openID = null; location.hash = ''; detail.replaceChildren(); await load(); } catch (err) { showError(err); }
      }}, t('evals.delete')));
    const box = el('div', {class: 'card', id: 'eval-detail'}, head);
    if (ev.score != null) {
      box.append(el('div', {class: 'row stats'},
        el('strong', {}, t('evals.m.score', {v: score(ev.score)})), el('span', {}, t('evals.m.accuracy', {v: score(rep.accuracy)})),
        el('span', {}, t('evals.m.effectiveness', {v: score(rep.effectiveness)})), el('span', {}, t('evals.m.tool_rationality', {v: score(rep.tool_rationality)})),
        el('span', {}, t('evals.m.skill_selection', {v: score(rep.skill_selection)})), el('span', {}, t('evals.m.errors', {v: rep.errors || 0}))));
      const cats = Object.entries(rep.categories || {}).sort(([a], [b]) => a.localeCompare(b));
      if (cats.length) {
        box.append(el('details', {}, el('summary', {}, t('evals.by_category')), el('table', {}, el('tbody', {},
          cats.map(([c, s]) => el('tr', {}, el('td', {}, c), el('td', {}, score(s.score)), el('td', {class: 'muted'}, 'n=' + s.n)))))));
      }
    }
    const itemBox = el('div', {id: 'item-detail'});
    if (!live) {
      const items = await api('GET', '/api/evals/' + encodeURIComponent(id) + '/items');
      box.append(el('h3', {}, t('evals.items')), items.length ? el('table', {id: 'items-table'},
        el('thead', {}, el('tr', {}, ['item', 'category', 'score', 'outcome', 'question'].map((h) => el('th', {}, t('evals.col.' + h))))),
        el('tbody', {}, items.map((it) => el('tr', {class: 'clickable', dataset: {item: it.item_id}, onclick: () => openItem(ev.id, it.item_id, itemBox)},
          el('td', {class: 'mono'}, it.item_id), el('td', {}, it.category),
          el('td', {}, it.score >= 1 ? el('span', {class: 'badge good'}, score(100 * it.score)) : el('span', {class: 'badge bad'}, score(100 * it.score))),
          el('td', {}, it.error ? el('span', {class: 'badge bad'}, t('evals.error')) : it.outcome),
          el('td', {}, it.question.length > 90 ? it.question.slice(0, 90) + '…' : it.question))))) : el('p', {class: 'muted'}, t('evals.no_items')));
    }
    box.append(itemBox);
    detail.replaceChildren(box);
  }

  async function openItem(evalID, itemID, box) {
    let it;
    try { it = await api('GET', '/api/evals/' + encodeURIComponent(evalID) + '/items/' + encodeURIComponent(itemID)); } catch (err) { showError(err); return; }
    for (const row of document.querySelectorAll('#items-table tbody tr')) row.classList.toggle('selected', row.dataset.item === itemID);
    const g = it.grade || {};
    const kv = (k, v) => [el('dt', {}, k), el('dd', {}, v)];
    box.replaceChildren(el('div', {class: 'card'},
      el('h3', {}, t('evals.item'), el('span', {class: 'mono'}, it.item_id)),
      el('dl', {class: 'kv'},
        kv(t('evals.col.category'), it.category), kv(t('evals.col.question'), el('span', {id: 'item-question'}, it.question)),
        kv(t('evals.reply'), el('span', {id: 'item-reply'}, it.reply || t('evals.silent'))), kv(t('evals.col.outcome'), it.outcome),
        kv(t('evals.col.score'), score(100 * it.score)),
        kv(t('evals.grade'), t('evals.grade_line', {accuracy: fmt.num(g.accuracy), effectiveness: fmt.num(g.effectiveness),
          tool: fmt.num(g.tool_rationality), skill: fmt.num(g.skill_selection)})),
        kv(t('evals.reasons'), (g.deductions || []).length ? el('ul', {id: 'item-reasons'}, g.deductions.map((d) => el('li', {}, d))) : el('span', {class: 'muted'}, t('evals.no_deductions'))),
        it.error ? kv(t('evals.error_label'), it.error) : [],
        kv(t('evals.time'), fmt.ms(it.took_ms)), kv(t('evals.harness_label'), el('span', {class: 'mono'}, it.harness_version)))));
  }

  await load();
  if (location.hash.length > 1) openEval(location.hash.slice(1));
});
