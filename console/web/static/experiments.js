'use strict';
// Experiments: online A/B tests of harness versions on commerce metrics.
// Create a draft, start it (each stream runs its arm's harness version),
// read the per-arm metrics with 95 % intervals, the sample-ratio check and
// the verdict (withheld while reading it would be peeking), watch the
// charts over time, stop, and ship the winner through the release gate.
// Every name, arm and reason is inserted as text (LiveHAT.el).
LH.i18n.add({
  en: {'experiments.title': 'LiveHAT · Experiments', 'experiments.heading': 'Experiments'},
  'zh-CN': {'experiments.title': 'LiveHAT · 实验', 'experiments.heading': '实验'},
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const METRICS = ['gmv_per_viewer', 'gmv_per_stream_hour', 'item_views_per_viewer', 'conversion_rate', 'coupon_use',
    'latency_p95_s', 'violations_per_1000_replies', 'shed_per_1000_messages'];
  const GUARDRAILS = ['latency_p95_s', 'violations_per_1000_replies', 'shed_per_1000_messages'];
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
  const stateBadge = (s) => el('span', {class: 'badge ' + ({running: 'good', stopped: ''}[s] ?? 'warn')}, s);

  // ---- list ----
  async function loadList() {
    const list = await api('GET', '/api/experiments');
    const rows = list.map((x) => el('tr', {class: 'clickable' + (x.id === selected ? ' selected' : ''), dataset: {id: x.id},
      onclick: () => select(x.id)},
      el('td', {}, x.name), el('td', {}, stateBadge(x.state)), el('td', {}, x.unit),
      el('td', {}, x.arms.map((a) => a.name).join(' vs ')), el('td', {}, x.primary_metric),
      el('td', {}, String(x.planned_units_per_arm || '–')), el('td', {}, fmt.time(x.created))));
    listBox.replaceChildren(el('h2', {}, 'Experiments'), list.length
      ? el('table', {id: 'experiments-table'},
        el('thead', {}, el('tr', {}, ['Name', 'State', 'Unit', 'Arms', 'Primary metric', 'Planned / arm', 'Created'].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))
      : el('p', {class: 'muted'}, 'No experiments yet: create one below.'));
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
    if (x.state === 'draft') buttons.append(el('button', {id: 'start-experiment', onclick: () => act(base + '/start', undefined, 'Experiment started')}, 'Start'));
    if (x.state === 'running') buttons.append(el('button', {id: 'stop-experiment', class: 'danger', onclick: () => act(base + '/stop', undefined, 'Experiment stopped')}, 'Stop'));
    const armRows = x.arms.map((a, i) => el('tr', {},
      el('td', {}, a.name, i === 0 ? el('span', {class: 'badge small'}, 'control') : ''),
      el('td', {class: 'mono'}, a.harness_version ? fmt.short(a.harness_version) : 'stream’s own'),
      el('td', {}, a.checkpoint || 'serving'), el('td', {}, String(a.weight))));
    const streamRows = x.streams.map((s) => el('tr', {},
      el('td', {}, s.name || s.stream_id), el('td', {}, s.arm || '–'), el('td', {class: 'mono'}, fmt.short(s.harness_version) || '–'),
      el('td', {class: 'mono'}, fmt.short(s.previous_version) || '–')));
    const card = el('div', {class: 'card', id: 'experiment-card'},
      el('div', {class: 'row'}, el('h2', {}, x.name), stateBadge(x.state), el('span', {class: 'spacer'}), buttons),
      el('dl', {class: 'kv'},
        el('dt', {}, 'Unit'), el('dd', {}, x.unit),
        el('dt', {}, 'Primary metric'), el('dd', {}, x.primary_metric),
        el('dt', {}, 'Guardrails'), el('dd', {}, (x.guardrails || []).join(', ') || 'none'),
        el('dt', {}, 'Analysis'), el('dd', {}, x.analysis === 'sequential' ? 'sequential (always-valid mSPRT: look any time)' : 'fixed horizon (verdict at the planned size)'),
        el('dt', {}, 'Planned units per arm'), el('dd', {}, String(x.planned_units_per_arm || 'not set')),
        el('dt', {}, 'Attribution window'), el('dd', {}, x.attribution_window_ns ? (x.attribution_window_ns / 6e10) + ' min after a reply mentions the item' : 'every event of an exposed unit'),
        el('dt', {}, 'Started'), el('dd', {}, fmt.time(x.started) || '–'),
        el('dt', {}, 'Stopped'), el('dd', {}, fmt.time(x.stopped) || '–')),
      el('h3', {}, 'Arms'),
      el('table', {}, el('thead', {}, el('tr', {}, ['Arm', 'Harness version', 'Checkpoint', 'Weight'].map((h) => el('th', {}, h)))), el('tbody', {}, armRows)),
      el('h3', {}, 'Streams'),
      el('table', {id: 'experiment-streams'}, el('thead', {}, el('tr', {}, ['Stream', 'Arm', 'Runs', 'Before'].map((h) => el('th', {}, h)))), el('tbody', {}, streamRows)),
      ...shipHistory(x),
      eventsHelp(x));
    detail.replaceChildren(card);
    if (x.state === 'draft') return;
    const reportBox = el('div', {class: 'card', id: 'experiment-report'}, el('p', {class: 'muted'}, 'Computing the report…'));
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
    const model = (spec) => spec || 'the console’s model';
    const rows = x.ships.map((sh) => el('tr', {},
      el('td', {}, fmt.time(sh.shipped_at)), el('td', {}, sh.arm), el('td', {}, sh.shipper || sh.shipped_by),
      el('td', {class: 'mono'}, sh.harness_version ? fmt.short(sh.harness_version) : '–'),
      el('td', {}, sh.checkpoint ? (sh.serving_changed ? model(sh.previous_serving) + ' → ' + model(sh.serving) : 'already serving') : '–'),
      el('td', {}, sh.override || '–')));
    return [el('h3', {}, 'Shipped'),
      el('table', {id: 'experiment-ships'}, el('thead', {}, el('tr', {}, ['When', 'Arm', 'By', 'Harness version', 'Serving model', 'Override'].map((h) => el('th', {}, h)))), el('tbody', {}, rows))];
  }

  function eventsHelp(x) {
    const id = x.streams.length ? x.streams[0].stream_id : 'STREAM_ID';
    const sample = JSON.stringify({events: [{id: 'order-1001-view', viewer_id: 'viewer-42', item_id: 'p-serum', kind: 'item_view', time: '2026-01-01T12:00:00Z'},
      {id: 'order-1001', viewer_id: 'viewer-42', item_id: 'p-serum', kind: 'purchase', amount_minor: 19900, currency: 'CNY', time: '2026-01-01T12:03:00Z'}]}, null, 1);
    return el('details', {},
      el('summary', {}, 'Commerce events API (for the shop side)'),
      el('p', {class: 'small muted'}, 'POST batches of up to 10,000 events per stream with an API token (Settings → API tokens) of an operator or of the stream’s merchant. ' +
        'Events are idempotent by id; unknown items, negative amounts and future times are rejected with a reason. Kinds: item_view, add_to_cart, purchase, coupon_claim, link_click.'),
      el('pre', {}, 'curl -X POST -H "Authorization: Bearer lh_…" -H "Content-Type: application/json" \\\n  ' + location.origin + '/api/streams/' + id + '/events -d \'' + sample + '\''));
  }

  function interval(ci) { return ci ? '[' + num(ci.lo) + ', ' + num(ci.hi) + ']' : ''; }

  function renderReport(x, rep, base) {
    const out = [el('h2', {}, 'Report'), el('p', {class: 'muted small'}, 'As of ' + fmt.time(rep.as_of) + ' · recomputed from the stored assignments, turns and events · bootstrap ' + rep.bootstrap_resamples + ' resamples, seed ' + rep.bootstrap_seed)];
    const v = rep.verdict;
    // Verdict, or why it is withheld (peeking).
    const progress = el('progress', {max: 1, value: Math.min(1, v.progress || 0)});
    if (!v.allowed) {
      out.push(el('div', {class: 'card warn-box', id: 'peeking-warning'},
        el('strong', {}, 'Verdict withheld. '), v.reason, el('div', {class: 'row small'}, 'Planned sample: ', progress, fmt.pct(v.progress || 0),
          x.analysis === 'fixed_horizon' ? ' — do not stop early on a significant result: with a fixed horizon, looking early and stopping inflates false positives.' : '')));
    } else {
      const cls = v.decision === 'ship' ? 'good' : '';
      out.push(el('div', {class: 'row', id: 'verdict'}, el('span', {class: 'badge ' + cls}, v.decision === 'ship' ? 'ship ' + v.winner : v.decision.replace('_', ' ')),
        el('span', {}, v.reason), el('span', {class: 'small muted'}, '(' + fmt.pct(v.progress || 0) + ' of the planned sample)')));
      if (v.decision === 'ship' && x.state === 'stopped') {
        const ship = el('button', {id: 'ship-winner', onclick: async () => {
          let body = {};
          for (;;) {
            try {
              const res = await api('POST', base + '/ship', body);
              const done = [];
              if (res.release) done.push('published ' + fmt.short(res.release.version) + ' to ' + res.release.streams.length + ' stream(s)');
              if (res.ship.serving_changed) done.push('now serving ' + (res.serving.default ? 'the console’s model' : res.serving.spec));
              else if (res.ship.checkpoint) done.push('the checkpoint already serves');
              toast('Shipped ' + res.ship.arm + ': ' + done.join('; '));
              await Promise.all([loadList(), loadDetail()]);
              return;
            } catch (err) {
              // A gate that found regressions needs a recorded reason.
              if (err.field === 'override' && !body.override) {
                const reason = window.prompt(err.message + '\n\nReason to ship anyway (recorded with the ship):');
                if (reason) { body = {override: reason}; continue; }
              }
              showError(err);
              return;
            }
          }
        }}, 'Ship the winner (' + v.winner + ')');
        out.push(el('div', {class: 'row'}, ship, el('span', {class: 'small muted'}, 'Publishes the winner’s harness version to the experiment’s streams through the release gate, and makes its checkpoint the serving model once its evaluations pass.')));
      } else if (v.decision === 'ship') {
        out.push(el('p', {class: 'small muted'}, 'Stop the experiment to ship the winner.'));
      }
    }
    if (rep.srm.mismatch) {
      out.push(el('div', {class: 'card bad-box', id: 'srm-warning'}, el('strong', {}, 'Sample-ratio mismatch. '),
        'Observed units ' + rep.srm.observed.join(' / ') + ' against the expected ' + rep.srm.expected.map((e) => e.toFixed(1)).join(' / ') +
        ' (p = ' + num(rep.srm.p_value) + '): assignment or logging is broken, so no metric of this experiment can be trusted until it is explained.'));
    }
    for (const g of v.guardrail_alerts || []) {
      out.push(el('div', {class: 'card bad-box guardrail-alert'}, el('strong', {}, 'Guardrail alert: '), g));
    }
    // Per-arm metrics with intervals.
    const head = ['Arm', 'Units', 'Viewers', 'Replies', 'Stream hours', 'GMV (' + x.currency + ')', ...METRICS];
    const rows = rep.arms.map((a) => el('tr', {dataset: {arm: a.arm}},
      el('td', {}, a.arm), el('td', {}, String(a.units)), el('td', {}, String(a.viewers)), el('td', {}, String(a.replies)),
      el('td', {}, num(a.stream_hours)), el('td', {}, (a.gmv_minor / 100).toFixed(2)),
      ...METRICS.map((m) => {
        const am = a.metrics.find((q) => q.metric === m);
        return el('td', {}, am ? num(am.value) : '–', am ? el('div', {class: 'small muted'}, interval(am.ci95)) : '');
      })));
    out.push(el('h3', {}, 'Per arm'), el('div', {class: 'scroll'}, el('table', {id: 'arm-table'},
      el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))), el('tbody', {}, rows))));
    // Comparisons against the control.
    const crow = rep.comparisons.map((c) => {
      const guard = GUARDRAILS.includes(c.metric);
      const good = c.better, bad = c.worse;
      const cls = good ? 'delta-up' : bad ? 'delta-down' : '';
      const ci = c.basis === 'bootstrap' && c.bootstrap_diff_ci ? c.bootstrap_diff_ci : c.basis === 'sequential' && c.sequential ? c.sequential.diff_ci : c.basis === 'cuped' && c.cuped ? c.cuped.diff_ci : c.diff_ci;
      const uci = c.basis === 'bootstrap' && c.bootstrap_uplift_ci ? c.bootstrap_uplift_ci : c.uplift_ci;
      return el('tr', {class: c.metric === x.primary_metric ? 'primary' : '', dataset: {metric: c.metric, treatment: c.treatment}},
        el('td', {}, c.metric, c.metric === x.primary_metric ? el('span', {class: 'badge small'}, 'primary') : guard ? el('span', {class: 'badge small'}, 'guardrail') : ''),
        el('td', {}, c.treatment), el('td', {}, num(c.control_value)), el('td', {}, num(c.treatment_value)),
        el('td', {class: cls}, (c.diff > 0 ? '+' : '') + num(c.diff), el('div', {class: 'small'}, interval(ci))),
        el('td', {class: cls}, c.uplift_defined ? (c.uplift > 0 ? '+' : '') + fmt.pct(c.uplift) : 'n/a',
          c.uplift_defined ? el('div', {class: 'small'}, '[' + fmt.pct(uci.lo) + ', ' + fmt.pct(uci.hi) + ']') : ''),
        el('td', {}, c.basis), el('td', {}, c.sequential ? num(c.sequential.p_value) + ' (always-valid)' : num(c.p_value)),
        el('td', {}, good ? el('span', {class: 'badge good'}, 'better') : bad ? el('span', {class: 'badge bad'}, 'worse') : el('span', {class: 'muted'}, 'no significant difference')));
    });
    out.push(el('h3', {}, 'Treatment vs control (difference and uplift, 95 % intervals)'), el('div', {class: 'scroll'}, el('table', {id: 'comparison-table'},
      el('thead', {}, el('tr', {}, ['Metric', 'Treatment', 'Control', 'Treatment value', 'Difference', 'Uplift', 'Basis', 'p', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, crow))));
    const ex = rep.excluded;
    out.push(el('p', {class: 'small muted'}, 'Sample ratio: p = ' + num(rep.srm.p_value) + (rep.srm.mismatch ? ' (mismatch)' : ' (ok)') +
      ' · events not credited: ' + ex.not_attributed + ' outside the attribution window, ' + ex.unexposed + ' from unexposed units, ' + ex.before_exposure +
      ' before exposure, ' + ex.outside_period + ' outside the period, ' + ex.other_currency + ' in another currency, ' + ex.duplicates + ' duplicates.'));
    return out;
  }

  function renderCharts(x, series) {
    const pts = series.points;
    const t0 = pts.length ? new Date(x.started).getTime() : 0;
    const minutes = (p) => (new Date(p.as_of).getTime() - t0) / 60000;
    const arms = x.arms.map((a) => a.name);
    const primary = arms.map((a) => ({name: a, points: pts.filter((p) => p.primary[a]).map((p) => [minutes(p), p.primary[a].value])}));
    const units = arms.map((a) => ({name: a, points: pts.map((p) => [minutes(p), p.units[a] || 0])}));
    const charts = [el('h2', {}, 'Over time'), el('p', {class: 'small muted'}, 'Each point is the report as it would have read then (' + pts.length + ' points; bootstrap of 400 resamples per point).')];
    const grid = el('div', {class: 'grid charts'});
    grid.append(el('div', {class: 'chart-box', id: 'chart-primary'}, el('h3', {}, x.primary_metric + ' per arm'), Charts.line(primary, {xLabel: 'minutes since start'})));
    for (const a of arms.slice(1)) {
      const cmp = pts.map((p) => [p, p.comparisons.find((c) => c.treatment === a)]).filter(([, c]) => c);
      const ci = (c) => c.basis === 'bootstrap' && c.bootstrap_diff_ci ? c.bootstrap_diff_ci : c.sequential ? c.sequential.diff_ci : c.diff_ci;
      grid.append(el('div', {class: 'chart-box'}, el('h3', {}, a + ' − ' + arms[0] + ' with its 95 % interval'),
        Charts.line([{name: 'difference', points: cmp.map(([p, c]) => [minutes(p), c.diff])},
          {name: 'low', points: cmp.map(([p, c]) => [minutes(p), ci(c).lo])},
          {name: 'high', points: cmp.map(([p, c]) => [minutes(p), ci(c).hi])}], {xLabel: 'minutes since start'})));
    }
    grid.append(el('div', {class: 'chart-box'}, el('h3', {}, 'Units per arm (planned ' + (x.planned_units_per_arm || '–') + ')'), Charts.line(units, {xLabel: 'minutes since start'})));
    charts.push(grid);
    return charts;
  }

  // ---- create form ----
  function armRow(i, name) {
    const sel = el('select', {name: `arms[${i}].harness_version`}, el('option', {value: ''}, 'stream’s own version'),
      ...versions.map((v) => el('option', {value: v.version}, fmt.short(v.version) + ' · ' + v.name + (v.streams ? ' (' + v.streams + ' streams)' : ''))));
    return el('div', {class: 'form-grid arm-row'},
      el('div', {class: 'field'}, el('label', {}, 'Arm ' + (i === 0 ? '(control)' : i)), el('input', {name: `arms[${i}].name`, value: name, required: true})),
      el('div', {class: 'field'}, el('label', {}, 'Harness version'), sel),
      el('div', {class: 'field'}, el('label', {}, 'Checkpoint (optional)'), el('input', {name: `arms[${i}].checkpoint`, placeholder: 'serving', title: 'the console model’s name, or a promoted checkpoint folder (Training page)'})),
      el('div', {class: 'field'}, el('label', {}, 'Traffic weight'), el('input', {name: `arms[${i}].weight`, type: 'number', step: 'any', min: '0', value: '1'})));
  }

  function field(label, input) { return el('div', {class: 'field'}, el('label', {}, label), input); }

  function renderForm() {
    const arms = el('div', {id: 'arms'}, armRow(0, 'control'), armRow(1, 'treatment'));
    const streamBoxes = el('div', {class: 'row', id: 'experiment-streams-field'}, ...streams.map((s) =>
      el('label', {class: 'check'}, el('input', {type: 'checkbox', name: 'streams', value: s.id, checked: true}), s.name)));
    const guards = el('div', {class: 'row'}, ...GUARDRAILS.map((g) =>
      el('label', {class: 'check'}, el('input', {type: 'checkbox', name: 'guardrails', value: g, checked: g !== 'shed_per_1000_messages'}), g)));
    const planned = el('input', {name: 'planned_units_per_arm', type: 'number', min: '0', step: '1', placeholder: 'or compute below'});
    const form = el('form', {id: 'new-experiment'},
      el('h2', {}, 'New experiment'),
      el('div', {class: 'form-grid'},
        field('Name', el('input', {name: 'name', required: true, placeholder: 'e.g. coupon skill on the beauty streams'})),
        field('Unit of assignment', el('select', {name: 'unit'}, el('option', {value: 'stream'}, 'stream (live sessions)'), el('option', {value: 'viewer'}, 'viewer (one live session per arm in each room)'))),
        field('Primary metric', el('select', {name: 'primary_metric'}, ...METRICS.slice(0, 5).map((m) => el('option', {value: m}, m)))),
        field('Analysis', el('select', {name: 'analysis'}, el('option', {value: 'fixed_horizon'}, 'fixed horizon'), el('option', {value: 'sequential'}, 'sequential (mSPRT)'))),
        field('Attribution window (minutes, 0 = all)', el('input', {name: 'attribution_window_minutes', type: 'number', min: '0', step: 'any', value: '30'})),
        field('Currency', el('input', {name: 'currency', value: 'CNY', maxlength: 3})),
        field('Significance level α', el('input', {name: 'alpha', type: 'number', step: 'any', value: '0.05'})),
        field('Minimum detectable effect (relative)', el('input', {name: 'mde', type: 'number', step: 'any', value: '0.05'})),
        field('Planned units per arm', planned)),
      el('label', {}, 'Streams'), streamBoxes,
      el('label', {}, 'Guardrails (must not get significantly worse)'), guards,
      el('h3', {}, 'Arms'), arms,
      el('button', {type: 'button', class: 'secondary', onclick: () => arms.append(armRow(arms.children.length, 'arm' + arms.children.length))}, 'Add an arm'),
      el('h3', {}, 'Sample size'),
      el('div', {class: 'form-grid'},
        field('Control mean of the primary metric', el('input', {name: 'plan.baseline_mean', type: 'number', step: 'any', placeholder: 'e.g. 60'})),
        field('Per-unit standard deviation', el('input', {name: 'plan.sd', type: 'number', step: 'any', placeholder: 'e.g. 150'})),
        field('Power', el('input', {name: 'plan.power', type: 'number', step: 'any', value: '0.8'}))),
      el('div', {class: 'row'},
        el('button', {type: 'button', class: 'secondary', id: 'plan-size', onclick: async () => {
          try {
            const r = await api('POST', '/api/experiments/plan', {baseline_mean: +form['plan.baseline_mean'].value, sd: +form['plan.sd'].value,
              power: +form['plan.power'].value, mde: +form.mde.value, alpha: +form.alpha.value});
            planned.value = r.units_per_arm;
            toast(r.units_per_arm + ' units per arm');
          } catch (err) { showError(err, form); }
        }}, 'Compute the planned size'),
        el('span', {class: 'spacer'}), el('button', {type: 'submit'}, 'Create draft')));
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
        toast('Draft created: start it when ready');
        await select(x.id);
      } catch (err) { showError(err, form); }
    });
    formBox.replaceChildren(form);
  }

  renderForm();
  await loadList();
  await loadDetail();
});
