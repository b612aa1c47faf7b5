'use strict';
// Training runs: start a run (HSA-SFT, fixed-harness SFT, OPD, RL), follow
// its curves live over SSE, stop, resume and promote its checkpoint to
// serving. Every name and message is inserted as text (LiveHAT.el).
LH.i18n.add({
  en: {'runs.title': 'LiveHAT · Training runs', 'runs.heading': 'Training runs'},
  'zh-CN': {'runs.title': 'LiveHAT · 训练任务', 'runs.heading': '训练任务'},
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const servingCard = el('div', {class: 'card', id: 'serving'});
  const formCard = el('div', {class: 'card'});
  const listCard = el('div', {class: 'card'});
  const detail = el('div', {id: 'run-detail-box'});
  main.append(servingCard, formCard, listCard, detail);

  const STATE_KIND = {done: 'good', failed: 'bad', running: 'warn', interrupted: 'warn', queued: '', stopped: ''};
  const badge = (state) => el('span', {class: 'badge state ' + (STATE_KIND[state] || '')}, state);
  const opts = await api('GET', '/api/runs/options');
  let runs = [];
  let current = null; // {id, es, points: Map(step → metrics line), timer}

  async function loadServing() {
    const s = await api('GET', '/api/serving-model');
    const what = s.default
      ? el('span', {}, 'The console\'s configured model', s.spec ? ' (' + s.spec + ')' : '', '.')
      : s.promotion
        ? el('span', {}, 'Run ', el('strong', {}, s.promotion.run_name), ' at step ' + s.promotion.step + ' (' + s.promotion.stage + '), promoted by ' + s.promotion.promoted_by + ' ' + fmt.time(s.promotion.promoted_at) + '.')
        : el('span', {class: 'mono'}, s.spec);
    const reset = s.default ? '' : el('button', {class: 'secondary', onclick: async () => {
      try { await api('DELETE', '/api/serving-model'); toast('Serving the configured model again'); await loadServing(); await loadRuns(); } catch (err) { showError(err); }
    }}, 'Serve the configured model');
    servingCard.replaceChildren(el('h2', {}, 'Serving model'), el('div', {class: 'row'}, what, reset));
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
    'sft': 'HSA-SFT', 'fixed-sft': 'Fixed-harness SFT', 'opd': 'On-policy distillation', 'rl': 'HSA-RL'}[s] || s)));
  const model = el('select', {id: 'r-model', name: 'model'}, opts.presets.map((p) => el('option', {value: p}, p)));
  const initRun = el('select', {id: 'r-init_run', name: 'init_run'});
  const teacherRun = el('select', {id: 'r-teacher_run', name: 'teacher_run'});
  const augment = el('input', {id: 'r-augment', name: 'augment', type: 'checkbox'});
  initRun.append(el('option', {value: ''}, '(none)'));
  teacherRun.append(el('option', {value: ''}, '(none)'));
  const inputs = {
    steps: numberInput('steps'), batch: numberInput('batch'), lr: numberInput('lr', 'any'), seed: numberInput('seed'),
    rooms: numberInput('rooms'), questions: numberInput('questions'), max_items: numberInput('max_items'),
    vocab_size: numberInput('vocab_size'), save_every: numberInput('save_every'), eval_every: numberInput('eval_every'),
    group: numberInput('group'), eval_size: numberInput('eval_size'), threads: numberInput('threads'), lora_rank: numberInput('lora_rank'), lora_alpha: numberInput('lora_alpha', 'any'),
  };
  const loraTargets = el('input', {id: 'r-lora_targets', name: 'lora_targets', placeholder: opts.lora_modules.join(',')});
  const name = el('input', {id: 'r-name', name: 'name', placeholder: 'e.g. HSA-SFT tiny baseline', maxlength: 200});
  const only = {model: ['sft', 'fixed-sft'], teacher_run: ['opd'], questions: ['sft', 'fixed-sft'], vocab_size: ['sft', 'fixed-sft'],
    rooms: ['sft', 'fixed-sft', 'rl'], max_items: ['sft', 'fixed-sft', 'rl'], augment: ['sft', 'rl'], group: ['rl']};
  const fields = {
    name: field('Name', name), stage: field('Stage', stage),
    model: field('Model preset (from scratch)', model, 'or start from a run below'),
    init_run: field('Start from run', initRun), teacher_run: field('Teacher run', teacherRun, 'OPD: the model before SFT'),
    steps: field('Steps', inputs.steps), batch: field('Batch', inputs.batch, 'examples (SFT) or prompts (OPD, RL) per step'),
    group: field('Rollouts per prompt', inputs.group, 'GRPO group size'),
    lr: field('Learning rate', inputs.lr), seed: field('Seed', inputs.seed),
    augment: field('Harness-state augmentation', augment),
    rooms: field('Rooms', inputs.rooms), questions: field('Questions per room', inputs.questions),
    max_items: field('Max items per room', inputs.max_items, '0: the room\'s default'),
    vocab_size: field('Vocabulary', inputs.vocab_size), save_every: field('Checkpoint every', inputs.save_every, 'empty: a quarter of the steps'),
    eval_every: field('Evaluate every', inputs.eval_every, 'empty: half the steps'),
    eval_size: field('Held-out eval size', inputs.eval_size, 'examples, prompts or tasks; empty: the stage\'s default, 0: none'), threads: field('Threads', inputs.threads),
    lora_rank: field('LoRA rank', inputs.lora_rank, '0: full fine-tuning'), lora_alpha: field('LoRA alpha', inputs.lora_alpha),
    lora_targets: field('LoRA targets', loraTargets),
  };
  form.append(el('div', {class: 'form-grid'}, Object.values(fields)),
    el('div', {class: 'row'}, el('button', {type: 'submit'}, 'Start run')));
  formCard.append(el('h2', {}, 'Start a training run'), form);

  function applyDefaults() {
    const d = opts.defaults[stage.value];
    for (const [k, input] of Object.entries(inputs)) input.value = d[k] ? d[k] : '';
    model.value = d.model || opts.presets[0];
    augment.checked = d.augment !== false;
    augment.disabled = stage.value === 'fixed-sft';
    loraTargets.value = '';
    for (const [k, stages] of Object.entries(only)) fields[k].hidden = !stages.includes(stage.value);
    initRun.firstChild.textContent = stage.value === 'sft' || stage.value === 'fixed-sft' ? '(none: train the preset)' : '(choose a run)';
  }
  stage.addEventListener('change', applyDefaults);

  function runOptions(select, list) {
    const keep = select.value;
    select.replaceChildren(el('option', {value: ''}, '(none)'),
      ...list.filter((r) => r.step > 0).map((r) => el('option', {value: r.id}, r.name + ' · ' + r.stage + ' · step ' + r.step)));
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
      toast('Run started: ' + run.name);
      await loadRuns();
      open(run.id);
    } catch (err) { showError(err, form); }
  });

  async function loadRuns() {
    runs = await api('GET', '/api/runs');
    runOptions(initRun, runs);
    runOptions(teacherRun, runs);
    if (stage.value === 'sft' || stage.value === 'fixed-sft') initRun.firstChild.textContent = '(none: train the preset)';
    const rows = runs.map((r) => el('tr', {dataset: {id: r.id}, class: current && current.id === r.id ? 'selected' : ''},
      el('td', {}, el('a', {href: '#' + r.id, onclick: (e) => { e.preventDefault(); open(r.id); }}, r.name)),
      el('td', {}, r.stage), el('td', {}, badge(r.state)),
      el('td', {class: 'mono'}, r.step + ' / ' + r.steps),
      el('td', {}, r.creator), el('td', {}, fmt.time(r.created_at)),
      el('td', {class: 'muted'}, r.error || '')));
    listCard.replaceChildren(el('h2', {}, 'Runs'), runs.length
      ? el('table', {id: 'runs-table'}, el('thead', {}, el('tr', {}, ['Name', 'Stage', 'State', 'Step', 'By', 'Started', ''].map((h) => el('th', {}, h)))), el('tbody', {}, rows))
      : el('p', {class: 'muted'}, 'No runs yet: start one above.'));
  }

  // Curves: each chart plots some keys of the metrics lines against the step.
  const CHARTS = [
    {id: 'loss', title: 'Loss', keys: [['loss', (m) => m.loss], ['eval loss', (m) => m.eval_loss]]},
    {id: 'reward', title: 'Reward', keys: [['mean', (m) => m.reward_mean], ['std', (m) => m.reward_std]]},
    {id: 'kl', title: 'KL', keys: [['kl', (m) => m.kl]]},
    {id: 'eval', title: 'Evaluation', keys: null},
    {id: 'lr', title: 'Learning rate', keys: [['lr', (m) => m.lr]]},
    {id: 'tps', title: 'Tokens per second', keys: [['tokens/s', (m) => m.tokens_per_s]]},
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
      if (n) box.replaceChildren(el('h3', {}, spec.title), Charts.line(series, {xLabel: 'step'}));
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
    const resumeSteps = el('input', {type: 'number', name: 'steps', id: 'resume-steps', min: '1', value: r.steps, title: 'total steps'});
    const act = (label, path, body, kind) => el('button', {class: kind || 'secondary', id: 'run-' + label.toLowerCase(), onclick: async () => {
      try {
        const res = await api('POST', '/api/runs/' + r.id + '/' + path, body ? body() : undefined);
        toast(label + ': ' + r.name);
        if (path === 'promote') await loadServing();
        await loadRuns();
        if (path === 'resume') open(r.id); else if (res && res.state) renderHeader(res);
      } catch (err) { showError(err, head); }
    }}, label);
    const live = r.state === 'queued' || r.state === 'running';
    head.replaceChildren(
      el('h2', {}, r.name, ' ', badge(r.state)),
      el('p', {class: 'muted'}, r.stage + ' · ', el('span', {id: 'run-step'}, 'step ' + r.step + ' / ' + r.steps),
        ' · checkpoint ' + (r.checkpoint_step != null ? 'at step ' + r.checkpoint_step : 'none yet') + ' · folder ', el('span', {class: 'mono'}, r.dir)),
      r.error ? el('p', {class: 'error'}, r.error) : '',
      el('div', {class: 'row'},
        live ? act('Stop', 'stop', null, 'danger') : el('span', {class: 'row'}, resumeSteps, act('Resume', 'resume', () => ({steps: Number(resumeSteps.value)}))),
        r.checkpoint_step != null ? act('Promote', 'promote') : '',
        r.checkpoint_step != null ? el('a', {href: '/evals?run=' + encodeURIComponent(r.id), id: 'run-evaluate'}, 'Evaluate this checkpoint') : '',
        live ? '' : el('button', {class: 'link', id: 'run-delete', onclick: async () => {
          if (!confirm('Delete run ' + r.name + ' and its folder?')) return;
          try {
            await api('DELETE', '/api/runs/' + r.id);
            toast('Deleted ' + r.name);
            close(); detail.replaceChildren(); location.hash = '';
            await loadRuns();
          } catch (err) { showError(err); }
        }}, 'Delete')));
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
      el('details', {}, el('summary', {}, 'Log'), log)));
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
