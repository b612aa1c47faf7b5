'use strict';
// Evaluations: run a suite against a model in the background, the history
// as a table and a chart of scores over time per suite, and a drill-down
// to each item (question, reply, grade, deductions). Replies are model
// output and questions viewer text: both are inserted as text only.
LH.i18n.add({
  en: {'evals.title': 'LiveHAT · Evaluations', 'evals.heading': 'Evaluations'},
  'zh-CN': {'evals.title': 'LiveHAT · 评测', 'evals.heading': '评测'},
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const formCard = el('div', {class: 'card'});
  const chartCard = el('div', {class: 'card', id: 'evals-chart'});
  const listCard = el('div', {class: 'card'});
  const detail = el('div', {id: 'eval-detail-box'});
  main.append(formCard, chartCard, listCard, detail);

  const STATE_KIND = {done: 'good', failed: 'bad', running: 'warn', interrupted: 'warn', queued: '', stopped: ''};
  const badge = (state) => el('span', {class: 'badge state ' + (STATE_KIND[state] || '')}, state);
  const score = (v) => v == null ? '' : fmt.num(v, 1);
  const [suites, runs, serving] = await Promise.all([api('GET', '/api/evals/suites'), api('GET', '/api/runs'), api('GET', '/api/serving-model')]);
  let evals = [];
  let openID = null;
  let poll = null;

  // The form.
  const suite = el('select', {id: 'e-suite', name: 'suite'}, suites.map((s) => el('option', {value: s.name}, s.name + ' (' + s.items + ' items)')));
  const n = el('input', {id: 'e-n', name: 'n', type: 'number', min: '1', value: '20'});
  const model = el('select', {id: 'e-model', name: 'model'},
    el('option', {value: 'serving'}, 'Serving model' + (serving.promotion ? ' · ' + serving.promotion.run_name + ' step ' + serving.promotion.step : '')),
    el('option', {value: 'expert'}, 'Scripted expert'),
    el('option', {value: 'run'}, 'A run\'s checkpoint'),
    el('option', {value: 'checkpoint'}, 'A promoted checkpoint (as an experiment arm names it)'),
    el('option', {value: 'url'}, 'OpenAI-compatible server'));
  const run = el('select', {id: 'e-run_id', name: 'run_id'},
    runs.filter((r) => r.step > 0).map((r) => el('option', {value: r.id}, r.name + ' · ' + r.stage + ' · step ' + r.step)));
  const url = el('input', {id: 'e-url', name: 'url', placeholder: 'http://host:8000/v1'});
  const remote = el('input', {id: 'e-remote_model', name: 'remote_model', placeholder: 'model name'});
  const checkpoint = el('input', {id: 'e-checkpoint', name: 'checkpoint', placeholder: 'promoted folder, e.g. RUN-step40'});
  const wrap = (label, input) => el('div', {class: 'field'}, el('label', {for: input.id}, label), input);
  const runField = wrap('Run', run), urlField = wrap('Server URL', url), remoteField = wrap('Model name', remote);
  const checkpointField = wrap('Checkpoint', checkpoint);
  const form = el('form', {id: 'eval-form'},
    el('div', {class: 'form-grid'}, wrap('Suite', suite), wrap('Items (the first N)', n), wrap('Model', model), runField, checkpointField, urlField, remoteField),
    el('button', {type: 'submit'}, 'Run evaluation'));
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
      toast('Evaluation started: ' + ev.suite + ' × ' + ev.n);
      await load();
      openEval(ev.id);
    } catch (err) { showError(err, form); }
  });
  formCard.append(el('h2', {}, 'Run an evaluation'), form);

  function drawChart() {
    const done = evals.filter((e) => e.score != null && e.state === 'done');
    const names = [...new Set(done.map((e) => e.suite))].sort();
    chartCard.replaceChildren(el('h2', {}, 'Scores over time'));
    if (done.length < 2) { chartCard.append(el('p', {class: 'muted'}, 'The trend shows once two evaluations have finished.')); return; }
    // x is the evaluation's number in the history, so runs on one day
    // stay apart; the table below has the dates.
    const series = names.map((s) => ({name: s, points: evals.map((e, i) => [i + 1, e]).filter(([, e]) => e.suite === s && e.score != null && e.state === 'done').map(([i, e]) => [i, e.score])}));
    const chart = Charts.line(series, {xLabel: 'evaluation #'});
    chart.dataset.points = String(done.length);
    chartCard.append(chart);
  }

  function drawTable() {
    const rows = evals.slice().reverse().map((e, i) => el('tr', {class: 'clickable' + (e.id === openID ? ' selected' : ''), dataset: {id: e.id}, onclick: () => openEval(e.id)},
      el('td', {}, String(evals.length - i)), el('td', {}, fmt.time(e.created_at)), el('td', {}, e.suite), el('td', {}, e.model_name),
      el('td', {}, badge(e.state)), el('td', {class: 'mono'}, e.done + ' / ' + e.total), el('td', {class: 'score'}, score(e.score)),
      el('td', {class: 'mono'}, e.report && e.report.ci95 ? '[' + score(e.report.ci95[0]) + ', ' + score(e.report.ci95[1]) + ']' : ''),
      el('td', {}, e.creator)));
    listCard.replaceChildren(el('h2', {}, 'History'), evals.length
      ? el('table', {id: 'evals-table'}, el('thead', {}, el('tr', {}, ['#', 'When', 'Suite', 'Model', 'State', 'Items', 'Score', '95% CI', 'By'].map((h) => el('th', {}, h)))), el('tbody', {}, rows))
      : el('p', {class: 'muted'}, 'No evaluations yet.'));
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
    else if (ev) { const p = document.getElementById('eval-progress'); if (p) p.textContent = ev.done + ' / ' + ev.total + ' items'; }
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
      el('p', {class: 'muted'}, el('span', {id: 'eval-progress'}, ev.done + ' / ' + ev.total + ' items'), ' · harness ', el('span', {class: 'mono'}, fmt.short(ev.harness_version)),
        ' · started ' + fmt.time(ev.created_at) + ' by ' + ev.creator),
      ev.error ? el('p', {class: 'error'}, ev.error) : '',
      live ? el('button', {class: 'danger', id: 'eval-stop', onclick: async () => {
        try { await api('POST', '/api/evals/' + ev.id + '/stop'); toast('Stopped'); await load(); openEval(ev.id); } catch (err) { showError(err); }
      }}, 'Stop') : el('button', {class: 'link', id: 'eval-delete', onclick: async () => {
        if (!confirm('Delete this evaluation and its items?')) return;
        try { await api('DELETE', '/api/evals/' + ev.id); toast('Deleted'); openID = null; location.hash = ''; detail.replaceChildren(); await load(); } catch (err) { showError(err); }
      }}, 'Delete'));
    const box = el('div', {class: 'card', id: 'eval-detail'}, head);
    if (ev.score != null) {
      box.append(el('div', {class: 'row stats'},
        el('strong', {}, 'score ' + score(ev.score)), el('span', {}, 'accuracy ' + score(rep.accuracy)), el('span', {}, 'effectiveness ' + score(rep.effectiveness)),
        el('span', {}, 'tool rationality ' + score(rep.tool_rationality)), el('span', {}, 'skill selection ' + score(rep.skill_selection)),
        el('span', {}, 'errors ' + (rep.errors || 0))));
      const cats = Object.entries(rep.categories || {}).sort(([a], [b]) => a.localeCompare(b));
      if (cats.length) {
        box.append(el('details', {}, el('summary', {}, 'By category'), el('table', {}, el('tbody', {},
          cats.map(([c, s]) => el('tr', {}, el('td', {}, c), el('td', {}, score(s.score)), el('td', {class: 'muted'}, 'n=' + s.n)))))));
      }
    }
    const itemBox = el('div', {id: 'item-detail'});
    if (!live) {
      const items = await api('GET', '/api/evals/' + encodeURIComponent(id) + '/items');
      box.append(el('h3', {}, 'Items'), items.length ? el('table', {id: 'items-table'},
        el('thead', {}, el('tr', {}, ['Item', 'Category', 'Score', 'Outcome', 'Question'].map((h) => el('th', {}, h)))),
        el('tbody', {}, items.map((it) => el('tr', {class: 'clickable', dataset: {item: it.item_id}, onclick: () => openItem(ev.id, it.item_id, itemBox)},
          el('td', {class: 'mono'}, it.item_id), el('td', {}, it.category),
          el('td', {}, it.score >= 1 ? el('span', {class: 'badge good'}, score(100 * it.score)) : el('span', {class: 'badge bad'}, score(100 * it.score))),
          el('td', {}, it.error ? el('span', {class: 'badge bad'}, 'error') : it.outcome),
          el('td', {}, it.question.length > 90 ? it.question.slice(0, 90) + '…' : it.question))))) : el('p', {class: 'muted'}, 'No items finished.'));
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
      el('h3', {}, 'Item ', el('span', {class: 'mono'}, it.item_id)),
      el('dl', {class: 'kv'},
        kv('Category', it.category), kv('Question', el('span', {id: 'item-question'}, it.question)),
        kv('Reply', el('span', {id: 'item-reply'}, it.reply || '(silent)')), kv('Outcome', it.outcome),
        kv('Score', score(100 * it.score)),
        kv('Grade', 'accuracy ' + fmt.num(g.accuracy) + ' · effectiveness ' + fmt.num(g.effectiveness) + ' · tool rationality ' + fmt.num(g.tool_rationality) + ' · skill selection ' + fmt.num(g.skill_selection)),
        kv('Reasons', (g.deductions || []).length ? el('ul', {id: 'item-reasons'}, g.deductions.map((d) => el('li', {}, d))) : el('span', {class: 'muted'}, 'no deductions')),
        it.error ? kv('Error', it.error) : [],
        kv('Time', fmt.ms(it.took_ms)), kv('Harness', el('span', {class: 'mono'}, it.harness_version)))));
  }

  await load();
  if (location.hash.length > 1) openEval(location.hash.slice(1));
});
