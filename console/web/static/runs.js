'use strict';
// Training runs: start a run (HSA-SFT, fixed-harness SFT, OPD, RL), follow
// its curves live over SSE, stop, resume and promote its checkpoint to
// serving. Every name and message is inserted as text (LiveHAT.el).
LH.i18n.add({
  en: {
    'runs.title': 'LiveHAT · Training runs', 'runs.heading': 'Training runs',
    'runs.state.done': 'done', 'runs.state.failed': 'failed', 'runs.state.running': 'running', 'runs.state.interrupted': 'interrupted',
    'runs.state.queued': 'queued', 'runs.state.stopped': 'stopped',
    'runs.configured_model': 'The console\'s configured model', 'runs.run_prefix': 'Run ',
    'runs.promoted': ' at step {step} ({stage}), promoted by {by} {at}.',
    'runs.serving_configured_again': 'Serving the configured model again', 'runs.serve_configured': 'Serve the configured model',
    'runs.serving_model': 'Serving model', 'runs.stage.fixed_sft': 'Fixed-harness SFT', 'runs.stage.opd': 'On-policy distillation',
    'runs.none': '(none)', 'runs.none_preset': '(none: train the preset)', 'runs.choose_run': '(choose a run)',
    'runs.name_ph': 'e.g. HSA-SFT tiny baseline',
    'runs.f.name': 'Name', 'runs.f.stage': 'Stage', 'runs.f.model': 'Model preset (from scratch)', 'runs.h.model': 'or start from a run below',
    'runs.f.init_run': 'Start from run', 'runs.f.teacher_run': 'Teacher run', 'runs.h.teacher_run': 'OPD: the model before SFT',
    'runs.f.steps': 'Steps', 'runs.f.batch': 'Batch', 'runs.h.batch': 'examples (SFT) or prompts (OPD, RL) per step',
    'runs.f.group': 'Rollouts per prompt', 'runs.h.group': 'GRPO group size', 'runs.f.lr': 'Learning rate', 'runs.f.seed': 'Seed',
    'runs.f.augment': 'Harness-state augmentation', 'runs.f.rooms': 'Rooms', 'runs.f.questions': 'Questions per room',
    'runs.f.max_items': 'Max items per room', 'runs.h.max_items': '0: the room\'s default', 'runs.f.vocab_size': 'Vocabulary',
    'runs.f.save_every': 'Checkpoint every', 'runs.h.save_every': 'empty: a quarter of the steps',
    'runs.f.eval_every': 'Evaluate every', 'runs.h.eval_every': 'empty: half the steps',
    'runs.f.eval_size': 'Held-out eval size', 'runs.h.eval_size': 'examples, prompts or tasks; empty: the stage\'s default, 0: none',
    'runs.f.threads': 'Threads', 'runs.f.lora_rank': 'LoRA rank', 'runs.h.lora_rank': '0: full fine-tuning', 'runs.f.lora_alpha': 'LoRA alpha',
    'runs.f.lora_targets': 'LoRA targets', 'runs.start_run': 'Start run', 'runs.start_a_run': 'Start a training run',
    'runs.run_option': '{name} · {stage} · step {step}', 'runs.started': 'Run started: {name}', 'runs.runs': 'Runs',
    'runs.col.name': 'Name', 'runs.col.stage': 'Stage', 'runs.col.state': 'State', 'runs.col.step': 'Step', 'runs.col.by': 'By',
    'runs.col.started': 'Started', 'runs.none_yet': 'No runs yet: start one above.',
    'runs.chart.loss': 'Loss', 'runs.chart.reward': 'Reward', 'runs.chart.eval': 'Evaluation', 'runs.chart.tps': 'Tokens per second',
    'runs.x_step': 'step', 'runs.total_steps': 'total steps',
    'runs.action.stop': 'Stop', 'runs.action.resume': 'Resume', 'runs.action.promote': 'Promote',
    'runs.action_done.stop': 'Stop: {name}', 'runs.action_done.resume': 'Resume: {name}', 'runs.action_done.promote': 'Promote: {name}',
    'runs.step_of': 'step {step} / {steps}', 'runs.checkpoint_at': ' · checkpoint at step {step}', 'runs.checkpoint_none': ' · checkpoint none yet',
    'runs.folder': ' · folder ', 'runs.evaluate': 'Evaluate this checkpoint', 'runs.confirm_delete': 'Delete run {name} and its folder?',
    'runs.deleted': 'Deleted {name}', 'runs.delete': 'Delete', 'runs.log': 'Log',
  },
  'zh-CN': {
    'runs.title': 'LiveHAT · 训练任务', 'runs.heading': '训练任务',
    'runs.state.done': '完成', 'runs.state.failed': '失败', 'runs.state.running': '运行中', 'runs.state.interrupted': '已中断',
    'runs.state.queued': '排队中', 'runs.state.stopped': '已停止',
    'runs.configured_model': '控制台配置的模型', 'runs.run_prefix': '训练任务 ',
    'runs.promoted': ' 第 {step} 步（{stage}），由 {by} 于 {at} 推广。',
    'runs.serving_configured_again': '已恢复使用配置的模型', 'runs.serve_configured': '使用配置的模型',
    'runs.serving_model': '当前服务模型', 'runs.stage.fixed_sft': '固定 harness SFT', 'runs.stage.opd': '在线策略蒸馏',
    'runs.none': '（无）', 'runs.none_preset': '（无：从预设训练）', 'runs.choose_run': '（选择训练任务）',
    'runs.name_ph': '如 HSA-SFT 小模型基线',
    'runs.f.name': '名称', 'runs.f.stage': '阶段', 'runs.f.model': '模型预设（从零开始）', 'runs.h.model': '或从下面的训练任务开始',
    'runs.f.init_run': '从训练任务开始', 'runs.f.teacher_run': '教师任务', 'runs.h.teacher_run': 'OPD：SFT 之前的模型',
    'runs.f.steps': '步数', 'runs.f.batch': '批大小', 'runs.h.batch': '每步的样本（SFT）或提示（OPD、RL）数',
    'runs.f.group': '每个提示的采样数', 'runs.h.group': 'GRPO 组大小', 'runs.f.lr': '学习率', 'runs.f.seed': '随机种子',
    'runs.f.augment': 'Harness 状态增强', 'runs.f.rooms': '直播间数', 'runs.f.questions': '每个直播间的问题数',
    'runs.f.max_items': '每个直播间的最多商品数', 'runs.h.max_items': '0：直播间默认', 'runs.f.vocab_size': '词表大小',
    'runs.f.save_every': '检查点间隔', 'runs.h.save_every': '留空：步数的四分之一',
    'runs.f.eval_every': '评测间隔', 'runs.h.eval_every': '留空：步数的一半',
    'runs.f.eval_size': '留出评测集大小', 'runs.h.eval_size': '样本、提示或任务数；留空：阶段默认，0：不评测',
    'runs.f.threads': '线程数', 'runs.f.lora_rank': 'LoRA 秩', 'runs.h.lora_rank': '0：全量微调', 'runs.f.lora_alpha': 'LoRA alpha',
    'runs.f.lora_targets': 'LoRA 目标模块', 'runs.start_run': '开始训练', 'runs.start_a_run': '开始一次训练',
    'runs.run_option': '{name} · {stage} · 第 {step} 步', 'runs.started': '训练已开始：{name}', 'runs.runs': '训练任务',
    'runs.col.name': '名称', 'runs.col.stage': '阶段', 'runs.col.state': '状态', 'runs.col.step': '步数', 'runs.col.by': '发起人',
    'runs.col.started': '开始时间', 'runs.none_yet': '还没有训练任务：请在上方开始一个。',
    'runs.chart.loss': '损失', 'runs.chart.reward': '奖励', 'runs.chart.eval': '评测', 'runs.chart.tps': '每秒 token 数',
    'runs.x_step': '步', 'runs.total_steps': '总步数',
    'runs.action.stop': '停止', 'runs.action.resume': '继续', 'runs.action.promote': '推广',
    'runs.action_done.stop': '已停止：{name}', 'runs.action_done.resume': '已继续：{name}', 'runs.action_done.promote': '已推广：{name}',
    'runs.step_of': '第 {step} / {steps} 步', 'runs.checkpoint_at': ' · 检查点在第 {step} 步', 'runs.checkpoint_none': ' · 尚无检查点',
    'runs.folder': ' · 目录 ', 'runs.evaluate': '评测此检查点', 'runs.confirm_delete': '删除训练任务 {name} 及其目录？',
    'runs.deleted': '已删除 {name}', 'runs.delete': '删除', 'runs.log': '日志',
  },
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const servingCard = el('div', {class: 'card', id: 'serving'});
  const formCard = el('div', {class: 'card'});
  const listCard = el('div', {class: 'card'});
  const detail = el('div', {id: 'run-detail-box'});
  main.append(servingCard, formCard, listCard, detail);

  const STATE_KIND = {done: 'good', failed: 'bad', running: 'warn', interrupted: 'warn', queued: '', stopped: ''};
  const badge = (state) => el('span', {class: 'badge state ' + (STATE_KIND[state] || '')},
    LH.i18n.has('runs.state.' + state) ? t('runs.state.' + state) : state);
  const opts = await api('GET', '/api/runs/options');
  let runs = [];
  let current = null; // {id, es, points: Map(step → metrics line), timer}

  async function loadServing() {
    const s = await api('GET', '/api/serving-model');
    const what = s.default
      ? el('span', {}, t('runs.configured_model'), s.spec ? ' (' + s.spec + ')' : '', '.')
      : s.promotion
        ? el('span', {}, t('runs.run_prefix'), el('strong', {}, s.promotion.run_name), t('runs.promoted', {step: s.promotion.step, stage: s.promotion.stage,
          by: s.promotion.promoted_by, at: fmt.time(s.promotion.promoted_at)}))
        : el('span', {class: 'mono'}, s.spec);
    const reset = s.default ? '' : el('button', {class: 'secondary', onclick: async () => {
      try { await api('DELETE', '/api/serving-model'); toast(t('runs.serving_configured_again')); await loadServing(); await loadRuns(); } catch (err) { showError(err); }
    }}, t('runs.serve_configured'));
    servingCard.replaceChildren(el('h2', {}, t('runs.serving_model')), el('div', {class: 'row'}, what, reset));
    return s;
  }

  // The form: one field per hyper-parameter; the stage decides which apply.
  function field(label, input, hint) {
    return el('div', {class: 'field'}, el('label', {for: input.id}, label), input, hint ? el('div', {class: 'muted small'}, hint) : '');
  }
  function numberInput(name, step) {
    return el('input', {id: 'r-' + name, name, type: 'number', step: step || '1', min: '0'});
  }
  const form = el('form', {id: 'run-form'});
  const stage = el('select', {id: 'r-stage', name: 'stage'}, opts.stages.map((s) => el('option', {value: s}, {
    'sft': 'HSA-SFT', 'fixed-sft': t('runs.stage.fixed_sft'), 'opd': t('runs.stage.opd'), 'rl': 'HSA-RL'}[s] || s)));
  const model = el('select', {id: 'r-model', name: 'model'}, opts.presets.map((p) => el('option', {value: p}, p)));
  const initRun = el('select', {id: 'r-init_run', name: 'init_run'});
  const teacherRun = el('select', {id: 'r-teacher_run', name: 'teacher_run'});
  const augment = el('input', {id: 'r-augment', name: 'augment', type: 'checkbox'});
  initRun.append(el('option', {value: ''}, t('runs.none')));
  teacherRun.append(el('option', {value: ''}, t('runs.none')));
  const inputs = {
    steps: numberInput('steps'), batch: numberInput('batch'), lr: numberInput('lr', 'any'), seed: numberInput('seed'),
    rooms: numberInput('rooms'), questions: numberInput('questions'), max_items: numberInput('max_items'),
    vocab_size: numberInput('vocab_size'), save_every: numberInput('save_every'), eval_every: numberInput('eval_every'),
    group: numberInput('group'), eval_size: numberInput('eval_size'), threads: numberInput('threads'), lora_rank: numberInput('lora_rank'), lora_alpha: numberInput('lora_alpha', 'any'),
  };
  const loraTargets = el('input', {id: 'r-lora_targets', name: 'lora_targets', placeholder: opts.lora_modules.join(',')});
  const name = el('input', {id: 'r-name', name: 'name', placeholder: t('runs.name_ph'), maxlength: 200});
  const only = {model: ['sft', 'fixed-sft'], teacher_run: ['opd'], questions: ['sft', 'fixed-sft'], vocab_size: ['sft', 'fixed-sft'],
    rooms: ['sft', 'fixed-sft', 'rl'], max_items: ['sft', 'fixed-sft', 'rl'], augment: ['sft', 'rl'], group: ['rl']};
  const fields = {
    name: field(t('runs.f.name'), name), stage: field(t('runs.f.stage'), stage),
    model: field(t('runs.f.model'), model, t('runs.h.model')),
    init_run: field(t('runs.f.init_run'), initRun), teacher_run: field(t('runs.f.teacher_run'), teacherRun, t('runs.h.teacher_run')),
    steps: field(t('runs.f.steps'), inputs.steps), batch: field(t('runs.f.batch'), inputs.batch, t('runs.h.batch')),
    group: field(t('runs.f.group'), inputs.group, t('runs.h.group')),
    lr: field(t('runs.f.lr'), inputs.lr), seed: field(t('runs.f.seed'), inputs.seed),
    augment: field(t('runs.f.augment'), augment),
    rooms: field(t('runs.f.rooms'), inputs.rooms), questions: field(t('runs.f.questions'), inputs.questions),
    max_items: field(t('runs.f.max_items'), inputs.max_items, t('runs.h.max_items')),
    vocab_size: field(t('runs.f.vocab_size'), inputs.vocab_size), save_every: field(t('runs.f.save_every'), inputs.save_every, t('runs.h.save_every')),
    eval_every: field(t('runs.f.eval_every'), inputs.eval_every, t('runs.h.eval_every')),
    eval_size: field(t('runs.f.eval_size'), inputs.eval_size, t('runs.h.eval_size')), threads: field(t('runs.f.threads'), inputs.threads),
    lora_rank: field(t('runs.f.lora_rank'), inputs.lora_rank, t('runs.h.lora_rank')), lora_alpha: field(t('runs.f.lora_alpha'), inputs.lora_alpha),
    lora_targets: field(t('runs.f.lora_targets'), loraTargets),
  };
  form.append(el('div', {class: 'form-grid'}, Object.values(fields)),
    el('div', {class: 'row'}, el('button', {type: 'submit'}, t('runs.start_run'))));
  formCard.append(el('h2', {}, t('runs.start_a_run')), form);

  function applyDefaults() {
    const d = opts.defaults[stage.value];
    for (const [k, input] of Object.entries(inputs)) input.value = d[k] ? d[k] : '';
    model.value = d.model || opts.presets[0];
    augment.checked = d.augment !== false;
    augment.disabled = stage.value === 'fixed-sft';
    loraTargets.value = '';
    for (const [k, stages] of Object.entries(only)) fields[k].hidden = !stages.includes(stage.value);
    initRun.firstChild.textContent = t(stage.value === 'sft' || stage.value === 'fixed-sft' ? 'runs.none_preset' : 'runs.choose_run');
  }
  stage.addEventListener('change', applyDefaults);

  function runOptions(select, list) {
    const keep = select.value;
    select.replaceChildren(el('option', {value: ''}, t('runs.none')),
      ...list.filter((r) => r.step > 0).map((r) => el('option', {value: r.id}, t('runs.run_option', {name: r.name, stage: r.stage, step: r.step}))));
    select.value = keep;
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
    const body = {name: name.value, stage: stage.value};
    for (const [k, input] of Object.entries(inputs)) {
      if (fields[k].hidden || input.value === '') continue;
      body[k] = Number(input.value);
    }
    if (!fields.model.hidden && !initRun.value) body.model = model.value;
    if (initRun.value) body.init_run = initRun.value;
    if (!fields.teacher_run.hidden && teacherRun.value) body.teacher_run = teacherRun.value;
    if (!fields.augment.hidden) body.augment = augment.checked;
    if (loraTargets.value.trim()) body.lora_targets = loraTargets.value.split(',').map((s) => s.trim()).filter(Boolean);
    try {
      const run = await api('POST', '/api/runs', body);
      toast(t('runs.started', {name: run.name}));
      await loadRuns();
      open(run.id);
    } catch (err) { showError(err, form); }
  });

  async function loadRuns() {
    runs = await api('GET', '/api/runs');
    runOptions(initRun, runs);
    runOptions(teacherRun, runs);
    if (stage.value === 'sft' || stage.value === 'fixed-sft') initRun.firstChild.textContent = t('runs.none_preset');
    const rows = runs.map((r) => el('tr', {dataset: {id: r.id}, class: current && current.id === r.id ? 'selected' : ''},
      el('td', {}, el('a', {href: '#' + r.id, onclick: (e) => { e.preventDefault(); open(r.id); }}, r.name)),
      el('td', {}, r.stage), el('td', {}, badge(r.state)),
      el('td', {class: 'mono'}, r.step + ' / ' + r.steps),
      el('td', {}, r.creator), el('td', {}, fmt.time(r.created_at)),
      el('td', {class: 'muted'}, r.error || '')));
    listCard.replaceChildren(el('h2', {}, t('runs.runs')), runs.length
      ? el('table', {id: 'runs-table'}, el('thead', {}, el('tr', {}, ['name', 'stage', 'state', 'step', 'by', 'started'].map((h) => el('th', {}, t('runs.col.' + h))), el('th', {}))), el('tbody', {}, rows))
      : el('p', {class: 'muted'}, t('runs.none_yet')));
  }

  // Curves: each chart plots some keys of the metrics lines against the step.
  const CHARTS = [
    {id: 'loss', title: t('runs.chart.loss'), keys: [['loss', (m) => m.loss], ['eval loss', (m) => m.eval_loss]]},
    {id: 'reward', title: t('runs.chart.reward'), keys: [['mean', (m) => m.reward_mean], ['std', (m) => m.reward_std]]},
    {id: 'kl', title: 'KL', keys: [['kl', (m) => m.kl]]},
    {id: 'eval', title: t('runs.chart.eval'), keys: null},
    {id: 'lr', title: t('runs.f.lr'), keys: [['lr', (m) => m.lr]]},
    {id: 'tps', title: t('runs.chart.tps'), keys: [['tokens/s', (m) => m.tokens_per_s]]},
  ];

  function seriesFor(spec, lines) {
    if (spec.keys) {
      return spec.keys.map(([label, get]) => ({name: label, points: lines.filter((m) => get(m) != null).map((m) => [m.step, get(m)])}))
        .filter((s) => s.points.length);
    }
    const names = [...new Set(lines.flatMap((m) => Object.keys(m.eval || {})))].sort();
    return names.map((n) => ({name: n, points: lines.filter((m) => m.eval && m.eval[n] != null).map((m) => [m.step, m.eval[n]])}));
  }

  function drawCharts() {
    if (!current) return;
    current.drawPending = false;
    const lines = [...current.points.values()].sort((a, b) => a.step - b.step);
    for (const spec of CHARTS) {
      const box = document.getElementById('chart-' + spec.id);
      if (!box) continue;
      const series = seriesFor(spec, lines);
      const n = series.reduce((a, s) => a + s.points.length, 0);
      box.dataset.points = String(n);
      box.hidden = n === 0;
      if (n) box.replaceChildren(el('h3', {}, spec.title), Charts.line(series, {xLabel: t('runs.x_step')}));
    }
    const last = lines[lines.length - 1];
    const stats = document.getElementById('run-last');
    if (stats && last) {
      stats.replaceChildren(el('span', {}, 'loss ' + fmt.num(last.loss, 4)), el('span', {}, 'lr ' + Number(last.lr).toExponential(2)),
        el('span', {}, 'grad norm ' + fmt.num(last.grad_norm, 3)), el('span', {}, fmt.num(last.tokens_per_s, 0) + ' tokens/s'),
        last.reward_mean != null ? el('span', {}, 'reward ' + fmt.num(last.reward_mean, 3)) : '',
        last.kl != null ? el('span', {}, 'KL ' + fmt.num(last.kl, 4)) : '');
    }
  }
  function scheduleDraw() {
    if (current.drawPending) return;
    current.drawPending = true;
    setTimeout(drawCharts, 200);
  }

  function close() {
    if (current && current.es) current.es.close();
    current = null;
  }

  function renderHeader(r) {
    const head = document.getElementById('run-head');
    if (!head) return;
    const resumeSteps = el('input', {type: 'number', name: 'steps', id: 'resume-steps', min: '1', value: r.steps, title: t('runs.total_steps')});
    // act is a run action's button; its id names the action in English.
    const act = (action, path, body, kind) => el('button', {class: kind || 'secondary', id: 'run-' + action, onclick: async () => {
      try {
        const res = await api('POST', '/api/runs/' + r.id + '/' + path, body ? body() : undefined);
        toast(t('runs.action_done.' + action, {name: r.name}));
        if (path === 'promote') await loadServing();
        await loadRuns();
        if (path === 'resume') open(r.id); else if (res && res.state) renderHeader(res);
      } catch (err) { showError(err, head); }
    }}, t('runs.action.' + action));
    const live = r.state === 'queued' || r.state === 'running';
    head.replaceChildren(
      el('h2', {}, r.name, ' ', badge(r.state)),
      el('p', {class: 'muted'}, r.stage + ' · ', el('span', {id: 'run-step'}, t('runs.step_of', {step: r.step, steps: r.steps})),
        r.checkpoint_step != null ? t('runs.checkpoint_at', {step: r.checkpoint_step}) : t('runs.checkpoint_none'), t('runs.folder'),
        el('span', {class: 'mono'}, r.dir)),
      r.error ? el('p', {class: 'error'}, r.error) : '',
      el('div', {class: 'row'},
        live ? act('stop', 'stop', null, 'danger') : el('span', {class: 'row'}, resumeSteps, act('resume', 'resume', () => ({steps: Number(resumeSteps.value)}))),
        r.checkpoint_step != null ? act('promote', 'promote') : '',
        r.checkpoint_step != null ? el('a', {href: '/evals?run=' + encodeURIComponent(r.id), id: 'run-evaluate'}, t('runs.evaluate')) : '',
        live ? '' : el('button', {class: 'link', id: 'run-delete', onclick: async () => {
          if (!confirm(t('runs.confirm_delete', {name: r.name}))) return;
          try {
            await api('DELETE', '/api/runs/' + r.id);
            toast(t('runs.deleted', {name: r.name}));
            close(); detail.replaceChildren(); location.hash = '';
            await loadRuns();
          } catch (err) { showError(err); }
        }}, t('runs.delete'))));
  }

  async function open(id) {
    close();
    location.hash = id;
    let r;
    try { r = await api('GET', '/api/runs/' + encodeURIComponent(id)); } catch (err) { showError(err); return; }
    current = {id, points: new Map()};
    for (const row of document.querySelectorAll('#runs-table tbody tr')) row.classList.toggle('selected', row.dataset.id === id);
    const log = el('pre', {id: 'run-log', class: 'log'});
    detail.replaceChildren(el('div', {class: 'card', id: 'run-detail'},
      el('div', {id: 'run-head'}),
      el('div', {class: 'row stats', id: 'run-last'}),
      el('div', {class: 'grid charts'}, CHARTS.map((c) => el('div', {id: 'chart-' + c.id, class: 'chart-box', hidden: true, dataset: {points: '0'}}))),
      el('details', {}, el('summary', {}, t('runs.log')), log)));
    renderHeader(r);
    const me = current;
    const refreshLog = async () => { try { log.textContent = await api('GET', '/api/runs/' + id + '/log'); } catch { /* the log is a convenience */ } };
    me.es = LiveHAT.stream('/api/runs/' + encodeURIComponent(id) + '/events', async (type, data) => {
      if (current !== me) return;
      if (type === 'metrics') { me.points.set(data.step, data); scheduleDraw(); }
      else if (type === 'reset') { me.points.clear(); scheduleDraw(); }
      else if (type === 'run') { renderHeader(data); const row = runs.find((x) => x.id === data.id); if (row && row.state !== data.state) loadRuns(); }
      else if (type === 'problem' && data) toast(data.error, 'error');
      else if (type === 'end') { me.es.close(); drawCharts(); await loadRuns(); await refreshLog(); }
    }, ['run', 'metrics', 'reset', 'problem', 'end']);
    refreshLog();
  }

  applyDefaults();
  await loadServing();
  await loadRuns();
  if (location.hash.length > 1) open(location.hash.slice(1));
});
