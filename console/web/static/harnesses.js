'use strict';
// Harnesses: versions (immutable, content-hashed), drafts with an editor
// (validate, diff and HSA preview side by side), the release gate with its
// per-suite and per-category regressions, publishing to streams or as a
// canary, rollback, and the compatibility tables: models × versions, and
// versions × installed plugins with the streams on each.
// Every harness text is inserted with textContent (LiveHAT.el).
LH.i18n.add({
  en: {'harnesses.title': 'LiveHAT · Harnesses', 'harnesses.heading': 'Harnesses'},
  'zh-CN': {'harnesses.title': 'LiveHAT · Harness 版本', 'harnesses.heading': 'Harness 版本'},
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const params = new URLSearchParams(location.search);
  const sections = {
    versions: el('section', {class: 'card', id: 'versions'}),
    editor: el('section', {id: 'editor'}),
    gate: el('section', {class: 'card', id: 'gate'}),
    publish: el('section', {class: 'card', id: 'publish'}),
    releases: el('section', {class: 'card', id: 'releases'}),
    compat: el('section', {class: 'card', id: 'compat'}),
  };
  main.append(...Object.values(sections));

  let versions = [];
  let streams = [];
  let families = [];
  let lastGate = null; // the gate shown in the gate card
  let loopID = params.get('loop') || '';

  const short = fmt.short;
  const versionLabel = (v) => short(v.version) + ' · ' + v.name + (v.streams ? ' (' + v.streams + ' streams)' : '');
  const versionOptions = (selected) => versions.map((v) => el('option', {value: v.version, selected: v.version === selected}, versionLabel(v)));
  const current = () => versions.reduce((best, v) => (!best || v.streams > best.streams ? v : best), null);

  function intervalCell(ci) {
    if (!ci) return el('td', {class: 'muted'}, '');
    return el('td', {class: 'muted'}, '[' + fmt.num(ci[0], 1) + ', ' + fmt.num(ci[1], 1) + ']');
  }

  function deltaCell(d) {
    const cls = d < 0 ? 'delta-down' : d > 0 ? 'delta-up' : 'muted';
    return el('td', {class: cls}, (d > 0 ? '+' : '') + fmt.num(d, 1));
  }

  async function loadVersions() {
    [versions, streams] = await Promise.all([api('GET', '/api/harnesses'), api('GET', '/api/streams')]);
    const oldSel = el('select', {name: 'old', 'aria-label': 'Old version'}, versionOptions(versions[1]?.version));
    const newSel = el('select', {name: 'new', 'aria-label': 'New version'}, versionOptions(versions[0]?.version));
    const diffOut = el('div', {id: 'version-diff'});
    sections.versions.replaceChildren(
      el('h2', {}, 'Versions'),
      el('table', {id: 'versions-table'},
        el('thead', {}, el('tr', {}, ['Version', 'Name', 'Parent', 'Author', 'Created', 'Streams', 'Notes', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, versions.map((v) => el('tr', {dataset: {version: v.version}},
          el('td', {class: 'mono', title: v.version}, v.short),
          el('td', {}, v.name),
          el('td', {class: 'mono', title: v.parent || ''}, short(v.parent)),
          el('td', {}, v.author || 'system'),
          el('td', {}, fmt.time(v.created_at)),
          el('td', {}, String(v.streams)),
          el('td', {}, v.notes || ''),
          el('td', {class: 'row'},
            el('button', {class: 'secondary', onclick: () => newDraft(v.version)}, 'Edit as draft'),
            el('button', {class: 'secondary', onclick: () => showGateForm(v.version)}, 'Gate'),
            el('button', {class: 'secondary', onclick: () => showPublish(v.version)}, 'Publish')))))),
      el('h2', {}, 'Compare two versions'),
      el('form', {class: 'row', id: 'diff-form', onsubmit: async (e) => {
        e.preventDefault();
        try {
          const d = await api('POST', '/api/harness/diff', {old: oldSel.value, new: newSel.value});
          diffOut.replaceChildren(changeList(d.changes));
        } catch (err) { showError(err, e.target); }
      }}, oldSel, el('span', {}, '→'), newSel, el('button', {type: 'submit'}, 'Diff')),
      diffOut,
      await draftsList());
  }

  async function draftsList() {
    const drafts = await api('GET', '/api/harness-drafts');
    if (!drafts.length) return el('p', {class: 'muted'}, 'No drafts. "Edit as draft" on a version opens one.');
    return el('div', {}, el('h2', {}, 'Drafts'), el('table', {id: 'drafts-table'},
      el('thead', {}, el('tr', {}, ['Name', 'Base', 'Author', 'Saved', 'Revision', 'Committed as', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, drafts.map((d) => el('tr', {},
        el('td', {}, d.name), el('td', {class: 'mono'}, short(d.base_version)), el('td', {}, d.author),
        el('td', {}, fmt.time(d.updated_at)), el('td', {}, String(d.revision)), el('td', {class: 'mono'}, short(d.committed_version)),
        el('td', {}, el('button', {class: 'secondary', onclick: () => openDraft(d.id)}, 'Open')))))));
  }

  function changeList(changes) {
    if (!changes || !changes.length) return el('p', {class: 'muted'}, 'No changes.');
    return el('table', {class: 'changes'},
      el('thead', {}, el('tr', {}, ['', 'Path', 'Old', 'New'].map((h) => el('th', {}, h)))),
      el('tbody', {}, changes.map((c) => el('tr', {class: 'change-' + c.kind},
        el('td', {}, {added: '+', removed: '−', changed: '~', moved: '↕'}[c.kind] || c.kind),
        el('td', {class: 'mono'}, c.path),
        el('td', {class: 'mono'}, c.old === undefined ? '' : JSON.stringify(c.old)),
        el('td', {class: 'mono'}, c.new === undefined ? '' : JSON.stringify(c.new))))));
  }

  async function newDraft(version) {
    try {
      const d = await api('POST', '/api/harness-drafts', {base_version: version});
      toast('Draft opened');
      await openDraft(d.id);
      await loadVersions();
    } catch (err) { showError(err); }
  }

  // openDraft shows the editor: the document on the left, problems, diff
  // and HSA preview on the right.
  async function openDraft(id) {
    let d;
    try { d = await api('GET', '/api/harness-drafts/' + encodeURIComponent(id)); } catch (err) { showError(err); return; }
    if (d.loop_id) loopID = d.loop_id;
    history.replaceState(null, '', '?draft=' + encodeURIComponent(d.id) + (loopID ? '&loop=' + encodeURIComponent(loopID) : ''));
    const form = el('form', {id: 'draft-form'},
      el('div', {class: 'row'},
        el('label', {for: 'd-name'}, 'Name'), el('input', {id: 'd-name', name: 'name', value: d.name}),
        el('label', {for: 'd-format'}, 'Format'),
        el('select', {id: 'd-format', name: 'format'}, ['json', 'yaml'].map((f) => el('option', {value: f, selected: f === d.format}, f)))),
      el('label', {for: 'd-document'}, 'Document'),
      el('textarea', {id: 'd-document', name: 'document', class: 'editor', spellcheck: 'false'}, d.document),
      el('label', {for: 'd-notes'}, 'Notes (what changed and why)'),
      el('input', {id: 'd-notes', name: 'notes', value: d.notes, class: 'wide'}),
      el('p', {class: 'muted', id: 'draft-meta'}, 'Revision ' + d.revision + ' · base ' + short(d.base_version) +
        (d.committed_version ? ' · last committed as ' + short(d.committed_version) : '') + (d.loop_id ? ' · evolution loop' : '')),
      el('div', {class: 'row'},
        el('button', {type: 'submit', id: 'draft-save'}, 'Save'),
        el('button', {type: 'button', class: 'secondary', id: 'draft-validate', onclick: validate}, 'Validate'),
        el('button', {type: 'button', class: 'secondary', id: 'draft-diff', onclick: diff}, 'Diff against base'),
        el('button', {type: 'button', id: 'draft-commit', onclick: commit}, 'Commit version'),
        el('button', {type: 'button', class: 'danger', onclick: remove}, 'Delete draft')));
    const side = el('div', {id: 'draft-side'});
    const hsaOut = el('div', {id: 'hsa-out'});
    const famSel = el('select', {name: 'family', id: 'hsa-family'},
      el('option', {value: ''}, '— pool draw —'),
      families.map((f) => el('option', {value: f.name, title: f.description}, f.name + ' (' + f.pool + ')')));
    const hsaForm = el('form', {id: 'hsa-form', class: 'row'},
      famSel,
      el('select', {name: 'pool', 'aria-label': 'Pool'}, el('option', {value: 'train'}, 'train pool'), el('option', {value: 'heldout'}, 'held-out pool')),
      el('input', {name: 'seed', type: 'number', value: '1', size: 6, 'aria-label': 'Seed'}),
      el('input', {name: 'gold', placeholder: 'gold calls JSON, e.g. [{"name":"product_lookup","arguments":{"item_id":"A1"}}]', class: 'wide'}),
      el('button', {type: 'submit'}, 'Preview HSA variant'));
    hsaForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      hsaForm.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      let gold = [];
      if (hsaForm.gold.value.trim()) {
        try { gold = JSON.parse(hsaForm.gold.value); } catch (err) {
          showError(new LiveHAT.ApiError(400, {error: 'gold: ' + err.message, field: 'gold'}), hsaForm); return;
        }
      }
      const req = {draft_id: d.id, seed: Number(hsaForm.seed.value) || 0, gold};
      if (famSel.value) req.family = famSel.value; else { req.pool = hsaForm.pool.value; req.n = 3; }
      try { showHSA(hsaOut, await api('POST', '/api/hsa/preview', req)); } catch (err) { showError(err, hsaForm); }
    });
    let rev = d.revision;
    const meta = () => form.querySelector('#draft-meta');

    async function save() {
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const saved = await api('PUT', '/api/harness-drafts/' + d.id,
        {name: form.name.value, format: form.format.value, document: form.document.value, notes: form.notes.value, revision: rev});
      rev = saved.revision;
      meta().textContent = 'Revision ' + rev + ' · base ' + short(d.base_version) + ' · saved ' + fmt.time(saved.updated_at);
      return saved;
    }
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try { await save(); toast('Saved'); } catch (err) {
        if (err.status === 409) toast('Someone else saved this draft: your text is still in the editor; reload the draft to see theirs, then apply your edit again.', 'error');
        else showError(err, form);
      }
    });
    async function validate() {
      try {
        const type = form.format.value === 'yaml' ? 'application/yaml' : 'application/json';
        const s = await api('POST', '/api/harness/validate', form.document.value, {type});
        side.replaceChildren(el('h3', {}, 'Valid'), el('p', {}, s.name + ' · ' + s.skills + ' skills · ' + s.tools + ' tools · ' + s.hooks + ' hooks · ' + s.short),
          (s.warnings || []).map((w) => el('p', {class: 'badge warn'}, w)));
      } catch (err) { side.replaceChildren(problems(err)); }
    }
    async function diff() {
      try {
        await save();
        const r = await api('GET', '/api/harness-drafts/' + d.id + '/diff');
        side.replaceChildren(el('h3', {}, 'Changes from ' + short(r.old)), changeList(r.changes));
      } catch (err) { side.replaceChildren(problems(err)); }
    }
    async function commit() {
      try {
        await save();
        const r = await api('POST', '/api/harness-drafts/' + d.id + '/commit', {revision: rev, notes: form.notes.value});
        toast('Committed version ' + short(r.version.version));
        rev = r.draft.revision;
        await loadVersions();
        showGateForm(r.version.version);
        sections.gate.scrollIntoView();
      } catch (err) { side.replaceChildren(problems(err)); showError(err, form); }
    }
    async function remove() {
      if (!confirm('Delete draft ' + d.name + '?')) return;
      try { await api('DELETE', '/api/harness-drafts/' + d.id); sections.editor.replaceChildren(); history.replaceState(null, '', '/harnesses'); await loadVersions(); } catch (err) { showError(err); }
    }
    sections.editor.replaceChildren(el('div', {class: 'card'},
      el('h2', {}, 'Draft: ', d.name),
      el('div', {class: 'split'}, form, el('div', {}, side)),
      el('h2', {}, 'HSA preview'),
      el('p', {class: 'muted'}, 'A family and a seed give a task-preserving variant of this draft and the mapping of gold calls; the same seed always gives the same variant.'),
      hsaForm, hsaOut));
  }

  function problems(err) {
    const list = (err.body && err.body.problems) || [];
    return el('div', {id: 'problems'}, el('h3', {}, 'Problems'), el('p', {class: 'bad'}, err.message),
      el('ul', {}, list.map((p) => el('li', {}, (p.line ? 'line ' + p.line + (p.col ? ':' + p.col : '') + ' ' : '') + (p.path ? p.path + ': ' : '') + p.message))));
  }

  function showHSA(out, r) {
    const fams = (r.record.transforms || []).map((t) => t.family + ' (' + t.pool + ')').join(', ');
    out.replaceChildren(
      el('p', {}, 'Families: ', fams, ' · variant ', short(r.variant.version)),
      el('div', {class: 'split'},
        el('div', {}, el('h3', {}, 'Base prompt ' + short(r.base.version)), el('pre', {class: 'prompt', id: 'hsa-base'}, r.base.prompt)),
        el('div', {}, el('h3', {}, 'Variant prompt'), el('pre', {class: 'prompt', id: 'hsa-variant'}, r.variant.prompt))),
      el('h3', {}, 'Gold mapping'),
      r.gold.length ? el('table', {id: 'hsa-gold'}, el('thead', {}, el('tr', {}, el('th', {}, 'Base call'), el('th', {}, 'Variant call'))),
        el('tbody', {}, r.gold.map((g) => el('tr', {}, el('td', {class: 'mono'}, JSON.stringify(g.base)),
          el('td', {class: 'mono' + (g.error ? ' bad' : '')}, g.error || JSON.stringify(g.variant))))))
        : el('p', {class: 'muted'}, 'No gold calls given: the mapping steps below say how calls change.'),
      el('h3', {}, 'Mapping steps'),
      el('pre', {}, (r.mapping.steps || []).map((s) => JSON.stringify(s)).join('\n') || '(no steps)'),
      el('h3', {}, 'Harness changes'), changeList(r.changes));
  }

  // The release gate.
  function showGateForm(candidate) {
    const cur = current();
    const suites = ['lsqa', 'hvqa', 'robust', 'strategy'];
    const form = el('form', {id: 'gate-form'},
      el('div', {class: 'row'},
        el('label', {for: 'g-candidate'}, 'Candidate'), el('select', {id: 'g-candidate', name: 'candidate'}, versionOptions(candidate || versions[0]?.version)),
        el('label', {for: 'g-baseline'}, 'Baseline'), el('select', {id: 'g-baseline', name: 'baseline'}, versionOptions(cur?.version)),
        el('label', {for: 'g-n'}, 'Items per suite'), el('input', {id: 'g-n', name: 'n', type: 'number', value: '5', min: 1, max: 100, size: 4}),
        el('label', {for: 'g-tol'}, 'Tolerance (points)'), el('input', {id: 'g-tol', name: 'tolerance', type: 'number', value: '1', step: '0.5', min: 0, size: 4})),
      el('div', {class: 'row'},
        el('label', {for: 'g-model'}, 'Model'), el('select', {id: 'g-model', name: 'model'},
          el('option', {value: 'serving', selected: true}, 'the serving model'),
          el('option', {value: 'checkpoint'}, 'a checkpoint released with it'),
          el('option', {value: 'expert'}, 'the expert (harness sanity check)')),
        el('label', {for: 'g-checkpoint'}, 'Checkpoint'), el('input', {id: 'g-checkpoint', name: 'checkpoint', size: 16, placeholder: 'name'}),
        el('label', {for: 'g-replay'}, 'Replayed questions'), el('input', {id: 'g-replay', name: 'replay', type: 'number', value: '10', min: 0, max: 100, size: 4})),
      el('div', {class: 'row'}, suites.map((s) => el('label', {class: 'check'}, el('input', {type: 'checkbox', name: 'suites', value: s, checked: true}), ' ' + s)),
        el('button', {type: 'submit', id: 'gate-run'}, 'Run gate')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const req = {candidate: form.candidate.value, baseline: form.baseline.value, n: Number(form.n.value),
        tolerance: Number(form.tolerance.value), suites: [...form.querySelectorAll('input[name=suites]:checked')].map((i) => i.value),
        model: form.model.value};
      if (req.model === 'checkpoint') req.checkpoint = form.checkpoint.value;
      if (req.model !== 'expert') req.replay = Number(form.replay.value);
      if (loopID) req.loop_id = loopID;
      try { watchGate(await api('POST', '/api/harness-gates', req)); } catch (err) { showError(err, form); }
    });
    sections.gate.replaceChildren(el('h2', {}, 'Release gate'),
      el('p', {class: 'muted'}, 'Runs the live-room suites and the streams\' recent questions with the model that will serve, under the candidate and the baseline, and shows what regressed. The expert only checks that the harness itself works; no release counts it.'),
      form, el('div', {id: 'gate-status'}), el('div', {id: 'gate-report'}), gateHistory());
    loadGateHistory();
  }

  function gateHistory() { return el('div', {id: 'gate-history'}); }
  async function loadGateHistory() {
    const box = document.getElementById('gate-history');
    if (!box) return;
    const gates = await api('GET', '/api/harness-gates');
    box.replaceChildren(el('h3', {}, 'Recent gates'), gates.length ? el('table', {},
      el('thead', {}, el('tr', {}, ['Started', 'Candidate', 'Baseline', 'Model', 'n', 'State', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, gates.slice(0, 10).map((g) => el('tr', {},
        el('td', {}, fmt.time(g.created_at)), el('td', {class: 'mono'}, short(g.candidate)), el('td', {class: 'mono'}, short(g.baseline)),
        el('td', {}, g.model), el('td', {}, String(g.n)), el('td', {}, stateBadge(g.state)),
        el('td', {}, el('button', {class: 'link', onclick: () => watchGate(g)}, 'Show')))))) : el('p', {class: 'muted'}, 'No gates yet.'));
  }

  function stateBadge(state) {
    const cls = {passed: 'good', active: 'good', regressed: 'bad', failed: 'bad', cancelled: 'warn', running: 'warn', rolled_back: 'warn'}[state] || '';
    return el('span', {class: 'badge ' + cls}, state.replace('_', ' '));
  }

  function watchGate(g) {
    lastGate = g;
    const status = document.getElementById('gate-status');
    const report = document.getElementById('gate-report');
    if (g.state !== 'running') { showGateReport(g); return; }
    report.replaceChildren();
    const bar = el('progress', {id: 'gate-progress', max: g.total || 1, value: g.done || 0});
    const phase = el('span', {class: 'muted'}, 'starting…');
    status.replaceChildren(el('div', {class: 'row'}, stateBadge('running'), bar, phase,
      el('button', {class: 'secondary', onclick: () => api('POST', '/api/harness-gates/' + g.id + '/cancel').catch(showError)}, 'Cancel')));
    let finished = false;
    const done = async () => {
      if (finished) return;
      finished = true;
      es.close();
      try { showGateReport(await api('GET', '/api/harness-gates/' + g.id)); } catch (err) { showError(err); }
    };
    const es = LiveHAT.stream('/api/harness-gates/' + g.id + '/events', (type, data) => {
      if (type === 'progress') { bar.max = data.total || 1; bar.value = data.done; phase.textContent = data.done + '/' + data.total + ' · ' + data.phase; }
      if (type === 'done' || type === 'error') done();
    }, ['progress', 'done', 'error']);
    // The event stream may drop (a proxy, a long gate): poll as well.
    const poll = setInterval(async () => {
      if (finished) { clearInterval(poll); return; }
      try {
        const cur = await api('GET', '/api/harness-gates/' + g.id);
        bar.value = cur.done;
        if (cur.state !== 'running') { clearInterval(poll); done(); }
      } catch { /* the next tick retries */ }
    }, 2000);
  }

  function showGateReport(g) {
    lastGate = g;
    const status = document.getElementById('gate-status');
    const report = document.getElementById('gate-report');
    if (!status || !report) return;
    status.replaceChildren(el('div', {class: 'row', id: 'gate-state'}, stateBadge(g.state),
      el('span', {}, short(g.candidate) + ' vs ' + short(g.baseline) + ' · ' + g.model + ' · n=' + g.n),
      g.report && g.report.sanity ? el('span', {class: 'badge warn', id: 'gate-sanity'}, 'sanity check') : null,
      g.error ? el('span', {class: 'bad'}, g.error) : null));
    const r = g.report || {};
    if (!r.suites) { report.replaceChildren(); loadGateHistory(); return; }
    const rows = [];
    for (const s of r.suites) {
      rows.push(el('tr', {class: 'suite-row' + (s.regressed ? ' regressed' : '')},
        el('td', {}, el('strong', {}, s.suite)), el('td', {}, fmt.num(s.baseline.score, 1)), el('td', {}, fmt.num(s.candidate.score, 1)),
        deltaCell(s.delta), intervalCell(s.delta_ci95), el('td', {class: 'muted'}, 'n=' + s.candidate.n + (s.candidate.errors ? ' · ' + s.candidate.errors + ' errors' : ''))));
      for (const c of s.categories) {
        rows.push(el('tr', {class: 'category-row' + (c.regressed ? ' regressed' : '')},
          el('td', {class: 'indent'}, c.category), el('td', {}, fmt.num(c.baseline, 1)), el('td', {}, fmt.num(c.candidate, 1)),
          deltaCell(c.delta), intervalCell(c.delta_ci95), el('td', {class: 'muted'}, 'n=' + c.n)));
      }
    }
    const causes = Object.entries(r.causes || {});
    report.replaceChildren(
      el('table', {id: 'gate-table'},
        el('thead', {}, el('tr', {}, ['Suite / category', 'Baseline', 'Candidate', 'Δ', 'Δ 95% interval', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows),
        el('tfoot', {}, el('tr', {}, el('td', {}, el('strong', {}, 'Overall')), el('td', {}, fmt.num(r.overall.baseline, 1)),
          el('td', {}, fmt.num(r.overall.candidate, 1)), deltaCell(r.overall.delta), el('td', {}), el('td', {})))),
      (r.warnings || []).map((w) => el('p', {class: 'badge warn gate-warning'}, w)),
      r.regressions.length
        ? el('p', {class: 'bad', id: 'gate-regressions'}, r.regressions.length + ' regressions beyond ' + r.tolerance + ' points: ',
          r.regressions.map((x) => x.suite + (x.category ? '/' + x.category : '') + ' ' + fmt.num(x.delta, 1)).join(', '))
        : el('p', {class: 'good', id: 'gate-regressions'}, 'No regression beyond ' + r.tolerance + ' points.'),
      causes.length ? el('p', {}, 'Candidate failures by cause: ', causes.map(([k, n]) => k.replace('_', ' ') + ' ' + n).join(' · '), ' — ',
        el('a', {href: '/evolution?version=' + encodeURIComponent(g.candidate)}, 'open in Evolution')) : null,
      el('div', {class: 'row'}, el('button', {id: 'gate-publish', onclick: () => showPublish(g.candidate, g)}, 'Publish ' + short(g.candidate) + '…')));
    loadGateHistory().catch(showError);
    loadCompat().catch(showError);
  }

  // Publishing: chosen streams or a canary percentage.
  function showPublish(version, gate) {
    const g = gate && gate.candidate === version ? gate : (lastGate && lastGate.candidate === version && lastGate.state !== 'running' ? lastGate : null);
    const form = el('form', {id: 'publish-form'},
      el('div', {class: 'row'}, el('label', {for: 'p-version'}, 'Version'), el('select', {id: 'p-version', name: 'version'}, versionOptions(version))),
      el('div', {class: 'row'},
        el('label', {class: 'check'}, el('input', {type: 'radio', name: 'mode', value: 'streams', checked: true}), ' chosen streams'),
        el('label', {class: 'check'}, el('input', {type: 'radio', name: 'mode', value: 'canary'}), ' canary'),
        el('input', {name: 'canary_percent', type: 'number', min: 1, max: 100, value: '10', size: 4, 'aria-label': 'Canary percent'}), el('span', {}, '% of streams')),
      el('div', {id: 'p-streams'}, streams.map((s) => el('label', {class: 'check'},
        el('input', {type: 'checkbox', name: 'streams', value: s.id}), ' ' + s.name + ' ', el('span', {class: 'mono muted'}, short(s.harness_version))))),
      el('p', {class: 'muted'}, g ? 'Gate ' + g.state + ' (' + fmt.time(g.created_at) + ')' : 'The latest finished gate of this version is used; without one, give an override reason.'),
      el('label', {for: 'p-override'}, 'Override reason (recorded; needed without a gate or despite regressions)'),
      el('input', {id: 'p-override', name: 'override', class: 'wide'}),
      el('div', {class: 'row'}, el('button', {type: 'submit', id: 'publish-submit'}, 'Publish')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const req = {version: form.version.value};
      if (form.mode.value === 'canary') req.canary_percent = Number(form.canary_percent.value);
      else req.streams = [...form.querySelectorAll('input[name=streams]:checked')].map((i) => i.value);
      if (g && g.candidate === req.version) req.gate_id = g.id;
      if (form.override.value.trim()) req.override = form.override.value;
      if (loopID) req.loop_id = loopID;
      try {
        const r = await api('POST', '/api/releases', req);
        toast('Published ' + short(r.version) + ' to ' + r.streams.length + ' streams; each switches at its next turn');
        await Promise.all([loadVersions(), loadReleases()]);
      } catch (err) { showError(err, form); }
    });
    sections.publish.replaceChildren(el('h2', {}, 'Publish'), form);
    sections.publish.scrollIntoView();
  }

  async function loadReleases() {
    const rels = await api('GET', '/api/releases');
    sections.releases.replaceChildren(el('h2', {}, 'Releases'), rels.length ? el('table', {id: 'releases-table'},
      el('thead', {}, el('tr', {}, ['When', 'Version', 'Streams', 'Gate', 'By', 'State', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, rels.map((r) => el('tr', {},
        el('td', {}, fmt.time(r.created_at)),
        el('td', {class: 'mono'}, short(r.version)),
        el('td', {}, (r.canary_percent ? r.canary_percent + '% canary: ' : '') + r.streams.map((s) => s.name).join(', ')),
        el('td', {}, r.gate_id ? gateSummary(r.gate_report) : el('span', {class: 'badge warn', title: r.override}, 'override: ' + r.override)),
        el('td', {}, r.created_by),
        el('td', {}, stateBadge(r.state)),
        el('td', {}, r.state === 'active' ? el('button', {class: 'danger', onclick: () => rollback(r)}, 'Roll back') : (r.rolled_back_by ? 'by ' + r.rolled_back_by : '')))))) :
      el('p', {class: 'muted'}, 'No releases.'));
  }

  function gateSummary(rep) {
    if (!rep || !rep.overall) return 'gate';
    return el('span', {class: rep.regressions && rep.regressions.length ? 'delta-down' : 'delta-up'},
      'gate Δ ' + fmt.num(rep.overall.delta, 1) + (rep.regressions && rep.regressions.length ? ' · ' + rep.regressions.length + ' regressions' : ''));
  }

  async function rollback(r) {
    if (!confirm('Roll back ' + short(r.version) + ' on ' + r.streams.length + ' streams?')) return;
    try {
      const res = await api('POST', '/api/releases/' + r.id + '/rollback');
      toast('Rolled back: ' + res.restored.length + ' streams restored' + (res.skipped.length ? ', ' + res.skipped.length + ' skipped' : ''));
      await Promise.all([loadVersions(), loadReleases()]);
    } catch (err) { showError(err); }
  }

  // pluginMatrix is every version against the installed plugins, with the
  // streams on it and any version a stream's merchant asked for.
  function pluginMatrix(m) {
    const names = Object.fromEntries(streams.map((s) => [s.id, s.name]));
    return [el('h2', {}, 'Compatibility: harness versions × installed plugins'),
      el('p', {class: 'muted', id: 'compat-plugins'}, 'Installed: ' + (m.plugins.length ? m.plugins.map((p) => p.name + '@' + p.version).join(', ') : 'none')),
      el('table', {id: 'plugin-compat-table'},
        el('thead', {}, el('tr', {}, ['Version', 'Name', 'Streams', 'Plugins serve it', 'Problems'].map((h) => el('th', {}, h)))),
        el('tbody', {}, m.harnesses.map((h) => el('tr', {dataset: {version: h.version}, class: h.compatible ? '' : 'regressed'},
          el('td', {class: 'mono', title: h.version}, short(h.version)), el('td', {}, h.name),
          el('td', {}, h.streams.map((id) => names[id] || id).join(', ')),
          el('td', {}, el('span', {class: 'badge ' + (h.compatible ? 'good' : 'bad')}, h.compatible ? 'yes' : 'no')),
          el('td', {class: 'small'}, h.problems.slice(0, 3).map((p) => el('div', {}, p.message)),
            h.problems.length > 3 ? el('div', {class: 'muted'}, '… ' + (h.problems.length - 3) + ' more') : null))))),
      m.streams.some((s) => s.requested_version)
        ? el('p', {id: 'compat-requests'}, 'Requested by merchants: ', m.streams.filter((s) => s.requested_version)
          .map((s) => s.name + ' → ' + short(s.requested_version)).join(', '))
        : null].filter(Boolean);
  }

  async function loadCompat() {
    const c = await api('GET', '/api/harness-compat');
    const scored = c.versions.filter((v) => c.cells.some((x) => x.version === v.version));
    if (!c.cells.length) {
      sections.compat.replaceChildren(...pluginMatrix(c.plugins), el('h2', {}, 'Compatibility: models × harness versions'),
        el('p', {class: 'muted'}, 'Scores appear here once a gate has run.'));
      return;
    }
    const cell = (m, v) => c.cells.find((x) => x.model === m && x.version === v);
    sections.compat.replaceChildren(...pluginMatrix(c.plugins), el('h2', {}, 'Compatibility: models × harness versions'),
      el('table', {id: 'compat-table'},
        el('thead', {}, el('tr', {}, el('th', {}, 'Model'), scored.map((v) => el('th', {title: v.version}, short(v.version) + ' ' + v.name)))),
        el('tbody', {}, c.models.map((m) => el('tr', {}, el('td', {}, m), scored.map((v) => {
          const x = cell(m, v.version);
          if (!x) return el('td', {class: 'muted'}, '—');
          return el('td', {title: Object.entries(x.suites).map(([s, sc]) => s + ' ' + fmt.num(sc, 1) + ' (n=' + x.n[s] + ')').join('\n')},
            el('strong', {}, fmt.num(x.mean, 1)), el('div', {class: 'muted small'}, Object.entries(x.suites).map(([s, sc]) => s + ' ' + fmt.num(sc, 0)).join(' · ')));
        }))))));
  }

  families = await api('GET', '/api/hsa/families');
  await loadVersions();
  showGateForm(versions[0]?.version);
  sections.publish.replaceChildren(el('h2', {}, 'Publish'), el('p', {class: 'muted'}, 'Choose "Publish" on a version or after a gate.'));
  await Promise.all([loadReleases(), loadCompat()]);
  if (params.get('draft')) await openDraft(params.get('draft'));
  else if (loopID) {
    const d = (await api('GET', '/api/harness-drafts')).find((x) => x.loop_id === loopID);
    if (d) await openDraft(d.id);
  }
});
