'use strict';
// Plugins: the organisation's WebAssembly plugins (a developer sees only
// their own). Upload a packed plugin (.lhp), switch plugins on and off,
// roll back to an earlier version, and try a tool, hook or skill in the
// sandbox. Every text from a manifest or a plugin's output is untrusted
// and goes in through textContent (el()).
LH.i18n.add({
  en: {'plugins.title': 'LiveHAT · Plugins', 'plugins.heading': 'Plugins'},
  'zh-CN': {'plugins.title': 'LiveHAT · 插件', 'plugins.heading': '插件'},
});
LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const list = el('div', {class: 'card', id: 'plugins-card'});
  const detail = el('div', {id: 'plugin-detail'});
  const keys = el('div', {class: 'card', id: 'plugin-keys'});
  main.append(list, uploadForm(), detail, keys);

  let streams = [];
  if (me.role === 'operator') {
    try { streams = await api('GET', '/api/streams'); } catch (err) { showError(err); }
  }

  // latency keeps sub-millisecond plugin calls readable.
  function latency(v) { return v < 10 ? v.toFixed(2) + ' ms' : fmt.ms(v); }
  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }
  function badge(text, kind) { return el('span', {class: 'badge ' + (kind || '')}, text); }
  function signatureBadge(p) {
    return p.signature === 'verified' ? badge('signed · ' + p.signer, 'good') : badge('unsigned', 'warn');
  }

  async function load() {
    const plugins = await api('GET', '/api/plugins');
    const rows = plugins.map((p) => el('tr', {dataset: {plugin: p.name}},
      el('td', {}, el('a', {href: '#' + p.name}, p.name), el('div', {class: 'muted'}, p.description || '')),
      el('td', {class: 'mono'}, p.version),
      el('td', {}, (p.kinds || []).join(', ')),
      el('td', {class: 'state'}, p.enabled ? badge('enabled', 'good') : badge('disabled'), ' ',
        p.problem ? el('span', {class: 'badge bad', title: p.problem}, 'not loaded') : '', ' ',
        el('button', {class: 'secondary toggle', type: 'button',
          title: p.enabled ? 'Live streams stop running it at their next turn' : 'Live streams run it from their next turn',
          onclick: () => toggle(p)}, p.enabled ? 'Disable' : 'Enable')),
      el('td', {}, signatureBadge(p)),
      el('td', {class: 'calls'}, String(p.stats.calls)),
      el('td', {class: 'errors'}, p.stats.errors ? badge(String(p.stats.errors), 'bad') : '0'),
      el('td', {}, p.stats.calls ? latency(p.stats.p50_ms) : ''),
      el('td', {}, p.stats.calls ? latency(p.stats.p95_ms) : ''),
      el('td', {}, p.owner)));
    list.replaceChildren(
      el('div', {class: 'row'}, el('h2', {}, 'Plugins'), el('button', {type: 'button', class: 'secondary', onclick: () => refresh()}, 'Refresh')),
      plugins.length ? el('table', {id: 'plugins-table'},
        el('thead', {}, el('tr', {}, ['Plugin', 'Version', 'Kinds', 'State', 'Signature', 'Calls', 'Errors', 'P50', 'P95', 'Owner']
          .map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))
        : el('p', {class: 'muted'}, 'No plugins yet: upload one packed with `livehat plugin pack`.'),
      el('p', {class: 'muted'}, 'Calls, errors and latency count live-session calls and trials since the console started.'));
    return plugins;
  }

  async function refresh() {
    try {
      await load();
      if (location.hash.length > 1) await show(decodeURIComponent(location.hash.slice(1)));
    } catch (err) { showError(err); }
  }

  async function toggle(p) {
    try {
      const next = await api('POST', '/api/plugins/' + encodeURIComponent(p.name) + (p.enabled ? '/disable' : '/enable'), {revision: p.revision});
      toast(next.name + (next.enabled ? ' enabled' : ' disabled') + ' from the next turn');
      await refresh();
    } catch (err) { showError(err); if (err.status === 409) await refresh(); }
  }

  function uploadForm() {
    const form = el('form', {class: 'card', id: 'upload-form'},
      el('h2', {}, 'Upload a plugin'),
      el('p', {class: 'muted'}, 'A .lhp package from `livehat plugin pack DIR` (optionally signed with --key). ' +
        'The manifest, the module\'s sha256 and any signature are checked, and the module must load in the sandbox. ' +
        'A newer version becomes active from the next turn; an older one is kept for rollback.'),
      el('div', {class: 'row'},
        el('input', {type: 'file', name: 'package', id: 'package-file', accept: '.lhp,application/zip', required: true}),
        el('button', {type: 'submit'}, 'Upload')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const file = form.package.files[0];
      if (!file) { showError(new LiveHAT.ApiError(400, {error: 'choose a .lhp file', field: 'package'}), form); return; }
      const body = new FormData();
      body.append('package', file);
      try {
        const r = await api('POST', '/api/plugins', body);
        toast('Uploaded ' + r.plugin.name + ' ' + r.version.version + (r.version.active ? ' (active)' : ' (kept for rollback)'));
        form.reset();
        location.hash = r.plugin.name;
        await refresh();
      } catch (err) {
        // The server names manifest, sha256, signature or wasm; all of them are about the file.
        showError(err, form);
        form.package.classList.add('invalid');
      }
    });
    return form;
  }

  async function show(name) {
    let d;
    try { d = await api('GET', '/api/plugins/' + encodeURIComponent(name)); } catch (err) { showError(err); return; }
    const p = d.plugin;
    const info = el('div', {class: 'card', id: 'plugin-info'},
      el('h2', {}, p.name, ' ', el('span', {class: 'mono'}, p.version), ' ', p.enabled ? badge('enabled', 'good') : badge('disabled')),
      el('p', {}, p.description || ''),
      el('p', {class: 'muted'}, 'Owner ', p.owner, ' · module ', fmt.short(p.sha256), ' · ', String(p.size), ' bytes · uploaded ', fmt.time(p.uploaded_at)),
      el('p', {}, 'Signature: ', signatureBadge(p)),
      p.problem ? el('p', {class: 'badge bad', id: 'plugin-problem'}, 'Live sessions run without it: ', p.problem) : '',
      el('h3', {}, 'Permissions'),
      p.permissions.length ? el('ul', {}, p.permissions.map((x) => el('li', {}, el('b', {}, x.name), ': ', x.reason)))
        : el('p', {class: 'muted'}, 'None: the plugin sees only its input.'),
      el('p', {class: 'muted'}, 'Limits: ', String(p.limits.memory_pages), ' pages of memory, ', String(p.limits.timeout_ms),
        ' ms a call, ', String(p.limits.instances), ' instances.'),
      d.sandbox ? el('p', {class: 'muted', id: 'sandbox-stats'}, 'In the sandbox: ', plural(d.sandbox.calls, 'call'), ', ',
        String(d.sandbox.failures), ' failed, ', plural(d.sandbox.instantiations, 'instance'), ' started, ',
        String(d.sandbox.discards), ' discarded, peak memory ', (d.sandbox.peak_memory_bytes / 1048576).toFixed(1), ' MiB.')
        : el('p', {class: 'muted'}, 'Not loaded in the sandbox yet: it loads at the first live turn or trial.'));
    const versions = el('div', {class: 'card', id: 'plugin-versions'},
      el('h2', {}, 'Versions'),
      el('table', {},
        el('thead', {}, el('tr', {}, ['Version', 'Module sha256', 'Signature', 'Size', 'Uploaded', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, d.versions.map((v) => el('tr', {dataset: {version: v.version}},
          el('td', {class: 'mono'}, v.version, ' ', v.active ? badge('active', 'good') : ''),
          el('td', {class: 'mono', title: v.sha256}, fmt.short(v.sha256)),
          el('td', {}, v.signature === 'verified' ? badge('signed · ' + v.signer, 'good') : badge('unsigned', 'warn')),
          el('td', {}, String(v.size)),
          el('td', {}, v.uploaded_by, ' · ', fmt.time(v.uploaded_at)),
          el('td', {class: 'row'},
            v.active ? '' : el('button', {type: 'button', class: 'secondary rollback', onclick: () => rollback(p, v.version)}, 'Roll back to this'),
            el('a', {href: '/api/plugins/' + encodeURIComponent(p.name) + '/versions/' + encodeURIComponent(v.version) + '/package'}, 'Download')))))));
    // A refresh of the same version keeps the trial panel and its result.
    if (!trial || trial.name !== p.name || trial.version !== p.version) trial = {name: p.name, version: p.version, form: tryPanel(p, d.versions)};
    detail.replaceChildren(el('div', {class: 'grid'}, info, trial.form), versions);
  }
  let trial = null;

  async function rollback(p, version) {
    if (!confirm('Make ' + p.name + ' ' + version + ' the active version? Live streams switch at their next turn.')) return;
    try {
      await api('POST', '/api/plugins/' + encodeURIComponent(p.name) + '/rollback', {version, revision: p.revision});
      toast(p.name + ' ' + version + ' is active from the next turn');
      await refresh();
    } catch (err) { showError(err); if (err.status === 409) await refresh(); }
  }

  function tryPanel(p, versions) {
    // Trying an inactive version (say, before a rollback) loads it aside for
    // the call; live streams keep the active one.
    const versionSel = el('select', {name: 'version', id: 'try-version'},
      versions.map((v) => el('option', {value: v.active ? '' : v.version, selected: v.active}, v.version + (v.active ? ' (active)' : ''))));
    const exportSel = el('select', {name: 'export', id: 'try-export'},
      p.exports.map((x, i) => el('option', {value: String(i)}, x.kind + ': ' + x.name)));
    const input = el('textarea', {name: 'input', id: 'try-input', rows: 6});
    const catalogSel = el('select', {name: 'catalog_source', id: 'try-catalog-source'},
      el('option', {value: ''}, 'Demo catalog'),
      streams.map((s) => el('option', {value: 'stream:' + s.id}, 'Stream: ' + s.name)),
      el('option', {value: 'paste'}, 'Paste a catalog…'));
    const catalog = el('textarea', {name: 'catalog', id: 'try-catalog', rows: 6, hidden: true,
      placeholder: '{"currency": "CNY", "products": [{"id": "p-1", "name": "…", "price": 99, "stock": 10}]}'});
    const out = el('div', {id: 'try-result'});
    const describe = el('p', {class: 'muted'});
    function pick() {
      const x = p.exports[Number(exportSel.value)];
      if (!x) return;
      input.value = JSON.stringify(x.example_input, null, 2);
      describe.textContent = x.kind === 'hook' ? 'Hook on ' + x.event + ': the input is the event; the output is the decision.'
        : (x.description || '');
    }
    exportSel.addEventListener('change', pick);
    catalogSel.addEventListener('change', () => { catalog.hidden = catalogSel.value !== 'paste'; });
    const form = el('form', {class: 'card', id: 'try-form'},
      el('h2', {}, 'Try it in the sandbox'),
      p.exports.length ? '' : el('p', {class: 'muted'}, 'This version declares nothing to try.'),
      el('label', {for: 'try-version'}, 'Version'), versionSel,
      el('label', {for: 'try-export'}, 'Export'), exportSel, describe,
      el('label', {for: 'try-input'}, 'Input (JSON)'), input,
      el('label', {for: 'try-catalog-source'}, 'Catalog the plugin sees'), catalogSel, catalog,
      el('div', {class: 'row'}, el('button', {type: 'submit', id: 'try-run'}, 'Run')), out);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const x = p.exports[Number(exportSel.value)];
      if (!x) return;
      const body = {kind: x.kind, name: x.name};
      try { body.input = JSON.parse(input.value || '{}'); } catch (err) {
        showError(new LiveHAT.ApiError(400, {error: 'input: ' + err.message, field: 'input'}), form); return;
      }
      if (versionSel.value) body.version = versionSel.value;
      if (catalogSel.value.startsWith('stream:')) body.stream_id = catalogSel.value.slice('stream:'.length);
      if (catalogSel.value === 'paste') {
        try { body.catalog = JSON.parse(catalog.value || '{}'); } catch (err) {
          showError(new LiveHAT.ApiError(400, {error: 'catalog: ' + err.message, field: 'catalog'}), form); return;
        }
      }
      try {
        const r = await api('POST', '/api/plugins/' + encodeURIComponent(p.name) + '/try', body);
        out.replaceChildren(
          el('p', {}, r.ok ? badge('ok', 'good') : badge(r.outcome, 'bad'), ' ', el('span', {id: 'try-latency'}, latency(r.latency_ms)),
            el('span', {class: 'muted'}, ' · ', r.plugin, ' ', r.version, ' · ', r.catalog)),
          r.ok ? el('pre', {id: 'try-output'}, JSON.stringify(r.output, null, 2)) : el('pre', {id: 'try-error'}, r.error));
        load().catch(showError);
      } catch (err) { showError(err, form); }
    });
    pick();
    return form;
  }

  async function loadKeys() {
    const ks = await api('GET', '/api/plugin-keys');
    const children = [el('h2', {}, 'Trusted signing keys'),
      el('p', {class: 'muted'}, 'A signed package uploads only when its key is trusted here; an unsigned one uploads and is shown as unsigned.'),
      ks.length ? el('table', {},
        el('thead', {}, el('tr', {}, ['Key id', 'Public key', 'Added by', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, ks.map((k) => el('tr', {},
          el('td', {class: 'mono'}, k.key_id), el('td', {class: 'mono'}, k.public_key), el('td', {}, k.added_by, ' · ', fmt.time(k.created_at)),
          el('td', {}, me.role === 'operator' ? el('button', {type: 'button', class: 'danger', onclick: async () => {
            if (!confirm('Stop trusting ' + k.key_id + ' for new uploads?')) return;
            try { await api('DELETE', '/api/plugin-keys/' + encodeURIComponent(k.key_id)); await loadKeys(); } catch (err) { showError(err); }
          }}, 'Remove') : '')))))
        : el('p', {class: 'muted'}, 'No trusted keys.')];
    if (me.role === 'operator') {
      const form = el('form', {class: 'row', id: 'key-form'},
        el('input', {name: 'key_id', placeholder: 'key id (e.g. team)', required: true}),
        el('input', {name: 'public_key', placeholder: 'hex public key from team.key.pub', size: 64, required: true}),
        el('button', {type: 'submit'}, 'Trust key'));
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        try {
          await api('POST', '/api/plugin-keys', {key_id: form.key_id.value.trim(), public_key: form.public_key.value.trim()});
          toast('Key trusted');
          await loadKeys();
        } catch (err) { showError(err, form); }
      });
      children.push(form);
    }
    keys.replaceChildren(...children);
  }

  window.addEventListener('hashchange', () => { if (location.hash.length > 1) show(decodeURIComponent(location.hash.slice(1))); });
  await load();
  await loadKeys();
  if (location.hash.length > 1) await show(decodeURIComponent(location.hash.slice(1)));
});
