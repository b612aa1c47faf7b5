'use strict';
// Streams: the merchant's streams and their configuration (persona,
// strategy, banned claims). Saving sends the revision the form was loaded
// at; a concurrent edit gets a conflict instead of being overwritten.
LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const list = el('div', {class: 'card'});
  const editor = el('div', {id: 'stream-editor'});
  main.append(list, editor);

  async function load() {
    const streams = await api('GET', '/api/streams');
    const rows = streams.map((s) => el('tr', {},
      el('td', {}, el('a', {href: '#' + s.id, onclick: () => edit(s.id)}, s.name)),
      el('td', {}, s.on_air ? el('span', {class: 'badge good'}, 'on air') : el('span', {class: 'badge'}, 'off air')),
      el('td', {class: 'mono'}, fmt.short(s.harness_version)),
      el('td', {}, fmt.time(s.updated_at)),
      el('td', {}, el('a', {href: '/live?stream=' + encodeURIComponent(s.id)}, 'Live view'))));
    list.replaceChildren(el('h2', {}, 'Streams'),
      streams.length ? el('table', {id: 'streams-table'},
        el('thead', {}, el('tr', {}, ['Name', 'State', 'Harness', 'Updated', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows)) : el('p', {class: 'muted'}, 'No streams yet.'),
      createForm());
    if (location.hash.length > 1) edit(location.hash.slice(1));
  }

  function createForm() {
    const form = el('form', {class: 'row', id: 'new-stream'},
      el('input', {name: 'name', placeholder: 'New stream name', required: true}));
    if (me.role === 'operator') {
      const sel = el('select', {name: 'merchant_id'});
      api('GET', '/api/merchants').then((ms) => sel.replaceChildren(...ms.map((m) => el('option', {value: m.id}, m.name))));
      form.append(sel);
    }
    form.append(el('button', {type: 'submit'}, 'Create'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = {name: form.name.value};
      if (form.merchant_id) body.merchant_id = form.merchant_id.value;
      try {
        const s = await api('POST', '/api/streams', body);
        toast('Stream created');
        location.hash = s.id;
        await load();
      } catch (err) { showError(err, form); }
    });
    return form;
  }

  async function edit(id) {
    let s;
    try { s = await api('GET', '/api/streams/' + encodeURIComponent(id)); } catch (err) { showError(err); return; }
    const form = el('form', {class: 'card', id: 'stream-form'},
      el('h2', {}, 'Configure ', s.name),
      el('label', {for: 'f-name'}, 'Name'), el('input', {id: 'f-name', name: 'name', value: s.name}),
      el('label', {for: 'f-persona'}, 'Persona (how the avatar speaks)'),
      el('textarea', {id: 'f-persona', name: 'persona'}, s.persona),
      el('label', {for: 'f-banned'}, 'Banned claims (one per line)'),
      el('textarea', {id: 'f-banned', name: 'banned_claims'}, (s.banned_claims || []).join('\n')),
      el('label', {for: 'f-strategy'}, 'Marketing strategy (rules: name, every, signal, threshold, instruction)'),
      el('textarea', {id: 'f-strategy', name: 'strategy'}, JSON.stringify(s.strategy || {}, null, 2)),
      el('label', {for: 'f-currency'}, 'Currency'), el('input', {id: 'f-currency', name: 'currency', value: s.currency, size: 4}),
      el('p', {class: 'muted'}, 'Revision ' + s.revision + ' · harness ' + fmt.short(s.harness_version)),
      el('div', {class: 'row'}, el('button', {type: 'submit'}, 'Save'),
        el('button', {type: 'button', class: 'danger', onclick: async () => {
          if (!confirm('Delete stream ' + s.name + '?')) return;
          try { await api('DELETE', '/api/streams/' + s.id); location.hash = ''; editor.replaceChildren(); await load(); } catch (err) { showError(err); }
        }}, 'Delete')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      let strategy;
      try { strategy = JSON.parse(form.strategy.value || '{}'); } catch (err) {
        showError(new LiveHAT.ApiError(400, {error: 'strategy: ' + err.message, field: 'strategy'}), form); return;
      }
      const body = {name: form.name.value, persona: form.persona.value, strategy, catalog: s.catalog,
        banned_claims: form.banned_claims.value.split('\n').map((x) => x.trim()).filter(Boolean),
        currency: form.currency.value, harness_version: s.harness_version, on_air: s.on_air, revision: s.revision};
      try {
        await api('PUT', '/api/streams/' + s.id, body);
        toast('Saved');
        await load(); await edit(s.id);
      } catch (err) { showError(err, form); }
    });
    const harness = await harnessCard(s).catch((err) => { showError(err); return null; });
    editor.replaceChildren(...[form, catalogCard(s), harness].filter(Boolean));
  }

  // harnessCard shows the version the stream runs and lets its merchant
  // ask for another: a request binds nothing, an operator's release does.
  async function harnessCard(s) {
    const [versions, requests] = await Promise.all([api('GET', '/api/harnesses'),
      api('GET', '/api/streams/' + encodeURIComponent(s.id) + '/harness-requests')]);
    const form = el('form', {class: 'row', id: 'harness-request-form'},
      el('select', {name: 'version', 'aria-label': 'Version to ask for'}, versions.filter((v) => v.version !== s.harness_version)
        .map((v) => el('option', {value: v.version}, v.short + ' · ' + v.name + (v.notes ? ' — ' + v.notes : '')))),
      el('input', {name: 'note', class: 'wide', placeholder: 'why (for the operator)'}),
      el('button', {type: 'submit'}, 'Ask for this version'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      try {
        await api('POST', '/api/streams/' + encodeURIComponent(s.id) + '/harness-requests', {version: form.version.value, note: form.note.value});
        toast('Asked; an operator publishes it through the release gate');
        await edit(s.id);
      } catch (err) { showError(err, form); }
    });
    return el('section', {class: 'card', id: 'harness-card'},
      el('h2', {}, 'Harness version'),
      el('p', {}, 'This stream runs ', el('span', {class: 'mono', title: s.harness_version}, fmt.short(s.harness_version) || 'none'),
        '. Only a release by an operator changes it.'),
      versions.length > 1 ? form : null,
      requests.length ? el('table', {id: 'harness-requests'},
        el('thead', {}, el('tr', {}, ['Asked', 'Version', 'By', 'Note', 'State'].map((h) => el('th', {}, h)))),
        el('tbody', {}, requests.map((r) => el('tr', {},
          el('td', {}, fmt.time(r.created_at)), el('td', {class: 'mono'}, fmt.short(r.version)), el('td', {}, r.requested_by),
          el('td', {}, r.note), el('td', {}, el('span', {class: 'badge ' + (r.state === 'granted' ? 'good' : 'warn')}, r.state))))))
        : null);
  }

  // catalogCard imports a catalog file (CSV or JSON) into the stream: a
  // check first (dry run), then the import, both reporting every bad row.
  // The import is based on the revision the page loaded, so a concurrent
  // edit of the stream is a conflict, not a silent overwrite.
  function catalogCard(s) {
    const count = (s.catalog && s.catalog.products) ? s.catalog.products.length : 0;
    const file = el('input', {type: 'file', id: 'catalog-file', name: 'file', accept: '.csv,.json,text/csv,application/json'});
    const problems = el('div', {id: 'catalog-problems'});
    const result = el('p', {id: 'catalog-result', class: 'muted'}, count + ' products now.');
    async function upload(dryRun) {
      problems.replaceChildren();
      file.classList.remove('invalid');
      const f = file.files[0];
      if (!f) { showError(new LiveHAT.ApiError(400, {error: 'choose a CSV or JSON file first', field: 'file'}), card); return; }
      const json = /\.json$/i.test(f.name) || f.type === 'application/json';
      const path = '/api/streams/' + encodeURIComponent(s.id) + '/catalog?revision=' + s.revision + (dryRun ? '&dry_run=true' : '');
      try {
        const r = await api('POST', path, await f.text(), {type: json ? 'application/json' : 'text/csv'});
        const what = r.products + ' products, ' + r.coupons + ' coupons, ' + r.promotions + ' promotions';
        result.textContent = (dryRun ? 'The file is valid: ' : 'Imported: ') + what + '.';
        if (r.warnings.length) problems.append(el('ul', {class: 'tight'}, r.warnings.map((w) => el('li', {}, w))));
        if (!dryRun) { toast('Catalog imported'); await load(); await edit(s.id); }
      } catch (err) {
        showError(err, card);
        const list = (err.body && err.body.problems) || [];
        if (list.length) {
          problems.append(el('table', {id: 'catalog-problem-table'},
            el('thead', {}, el('tr', {}, ['Row', 'Column', 'Problem'].map((h) => el('th', {}, h)))),
            el('tbody', {}, list.map((p) => el('tr', {}, el('td', {}, p.row ? String(p.row) : ''), el('td', {}, p.column || p.section),
              el('td', {}, p.message))))));
        }
      }
    }
    const card = el('div', {class: 'card', id: 'catalog-import'},
      el('h2', {}, 'Catalog'),
      el('p', {class: 'muted'}, 'Import a CSV of products (id, link, name, price, list_price, stock, stock_state, restock_date, variants, ',
        'specs, allergens, shipping and returns columns: see ', el('a', {href: '/api/catalog/schema'}, 'the catalog schema'),
        ' and the column table in console/README.md; a blank cell is \u201cnot stated\u201d) or a JSON catalog (version 2; version 1 files are upgraded). ',
        'A file with any bad row stores nothing and lists every problem; a CSV replaces the products and keeps coupons and promotions.'),
      el('div', {class: 'row'}, file,
        el('button', {type: 'button', class: 'secondary', id: 'catalog-check', onclick: () => upload(true)}, 'Check'),
        el('button', {type: 'button', id: 'catalog-submit', onclick: () => upload(false)}, 'Import'),
        el('a', {href: '/api/streams/' + encodeURIComponent(s.id) + '/catalog?format=csv', download: 'catalog.csv'}, 'Export CSV')),
      result, problems);
    return card;
  }

  await load();
});
