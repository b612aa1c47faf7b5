'use strict';
// Plugins: the organisation's WebAssembly plugins (a developer sees only
// their own). Upload a packed plugin (.lhp), switch plugins on and off,
// roll back to an earlier version, and try a tool, hook or skill in the
// sandbox. Every text from a manifest or a plugin's output is untrusted
// and goes in through textContent (el()).
LH.i18n.add({
  en: {
    'plugins.title': 'LiveHAT · Plugins', 'plugins.heading': 'Plugins',
    'plugins.calls_n': '{n} calls', 'plugins.call_1': '1 call', 'plugins.instances_n': '{n} instances', 'plugins.instance_1': '1 instance',
    'plugins.signed': 'signed · {signer}', 'plugins.unsigned': 'unsigned', 'plugins.enabled': 'enabled', 'plugins.disabled': 'disabled',
    'plugins.not_loaded': 'not loaded', 'plugins.stop_hint': 'Live streams stop running it at their next turn',
    'plugins.start_hint': 'Live streams run it from their next turn', 'plugins.disable': 'Disable', 'plugins.enable': 'Enable',
    'plugins.refresh': 'Refresh', 'plugins.col.plugin': 'Plugin', 'plugins.col.version': 'Version', 'plugins.col.kinds': 'Kinds',
    'plugins.col.state': 'State', 'plugins.col.signature': 'Signature', 'plugins.col.calls': 'Calls', 'plugins.col.errors': 'Errors',
    'plugins.col.owner': 'Owner', 'plugins.none': 'No plugins yet: upload one packed with `livehat plugin pack`.',
    'plugins.counts_hint': 'Calls, errors and latency count live-session calls and trials since the console started.',
    'plugins.toggled_on': '{name} enabled from the next turn', 'plugins.toggled_off': '{name} disabled from the next turn',
    'plugins.upload': 'Upload a plugin',
    'plugins.upload_hint': 'A .lhp package from `livehat plugin pack DIR` (optionally signed with --key). The manifest, the module\'s sha256 and any signature are checked, and the module must load in the sandbox. A newer version becomes active from the next turn; an older one is kept for rollback.',
    'plugins.upload_button': 'Upload', 'plugins.choose_file': 'choose a .lhp file',
    'plugins.uploaded_active': 'Uploaded {name} {version} (active)', 'plugins.uploaded_kept': 'Uploaded {name} {version} (kept for rollback)',
    'plugins.info': 'Owner {owner} · module {sha} · {size} bytes · uploaded {at}', 'plugins.signature': 'Signature: ',
    'plugins.runs_without': 'Live sessions run without it: ', 'plugins.permissions': 'Permissions',
    'plugins.no_permissions': 'None: the plugin sees only its input.',
    'plugins.limits': 'Limits: {pages} pages of memory, {ms} ms a call, {instances} instances.',
    'plugins.sandbox': 'In the sandbox: {calls}, {failed} failed, {instances} started, {discards} discarded, peak memory {mib} MiB.',
    'plugins.not_in_sandbox': 'Not loaded in the sandbox yet: it loads at the first live turn or trial.',
    'plugins.versions': 'Versions', 'plugins.col.sha': 'Module sha256', 'plugins.col.size': 'Size', 'plugins.col.uploaded': 'Uploaded',
    'plugins.active': 'active', 'plugins.roll_back': 'Roll back to this', 'plugins.download': 'Download',
    'plugins.confirm_rollback': 'Make {name} {version} the active version? Live streams switch at their next turn.',
    'plugins.rolled_back': '{name} {version} is active from the next turn', 'plugins.active_suffix': ' (active)',
    'plugins.demo_catalog': 'Demo catalog', 'plugins.stream_catalog': 'Stream: {name}', 'plugins.paste_catalog': 'Paste a catalog…',
    'plugins.hook_on': 'Hook on {event}: the input is the event; the output is the decision.',
    'plugins.try': 'Try it in the sandbox', 'plugins.nothing_to_try': 'This version declares nothing to try.',
    'plugins.version': 'Version', 'plugins.export': 'Export', 'plugins.input': 'Input (JSON)', 'plugins.catalog_seen': 'Catalog the plugin sees',
    'plugins.run': 'Run', 'plugins.ok': 'ok',
    'plugins.keys': 'Trusted signing keys',
    'plugins.keys_hint': 'A signed package uploads only when its key is trusted here; an unsigned one uploads and is shown as unsigned.',
    'plugins.col.key_id': 'Key id', 'plugins.col.public_key': 'Public key', 'plugins.col.added_by': 'Added by',
    'plugins.confirm_untrust': 'Stop trusting {key} for new uploads?', 'plugins.remove': 'Remove', 'plugins.no_keys': 'No trusted keys.',
    'plugins.key_id_ph': 'key id (e.g. team)', 'plugins.public_key_ph': 'hex public key from team.key.pub',
    'plugins.trust': 'Trust key', 'plugins.trusted': 'Key trusted',
  },
  'zh-CN': {
    'plugins.title': 'LiveHAT · 插件', 'plugins.heading': '插件',
    'plugins.calls_n': '{n} 次调用', 'plugins.call_1': '1 次调用', 'plugins.instances_n': '{n} 个实例', 'plugins.instance_1': '1 个实例',
    'plugins.signed': '已签名 · {signer}', 'plugins.unsigned': '未签名', 'plugins.enabled': '已启用', 'plugins.disabled': '已停用',
    'plugins.not_loaded': '未加载', 'plugins.stop_hint': '直播间从下一回合起停止运行它',
    'plugins.start_hint': '直播间从下一回合起运行它', 'plugins.disable': '停用', 'plugins.enable': '启用',
    'plugins.refresh': '刷新', 'plugins.col.plugin': '插件', 'plugins.col.version': '版本', 'plugins.col.kinds': '类型',
    'plugins.col.state': '状态', 'plugins.col.signature': '签名', 'plugins.col.calls': '调用', 'plugins.col.errors': '错误',
    'plugins.col.owner': '所有者', 'plugins.none': '还没有插件：请上传用 `livehat plugin pack` 打包的插件。',
    'plugins.counts_hint': '调用、错误和延迟统计的是控制台启动以来的直播调用和试运行。',
    'plugins.toggled_on': '{name} 从下一回合起启用', 'plugins.toggled_off': '{name} 从下一回合起停用',
    'plugins.upload': '上传插件',
    'plugins.upload_hint': '由 `livehat plugin pack DIR` 生成的 .lhp 包（可用 --key 签名）。会检查清单、模块的 sha256 和签名，模块须能在沙箱中加载。较新的版本从下一回合起生效；较旧的版本保留以便回滚。',
    'plugins.upload_button': '上传', 'plugins.choose_file': '请选择 .lhp 文件',
    'plugins.uploaded_active': '已上传 {name} {version}（已生效）', 'plugins.uploaded_kept': '已上传 {name} {version}（保留以便回滚）',
    'plugins.info': '所有者 {owner} · 模块 {sha} · {size} 字节 · 上传于 {at}', 'plugins.signature': '签名：',
    'plugins.runs_without': '直播会话不带它运行：', 'plugins.permissions': '权限',
    'plugins.no_permissions': '无：插件只能看到自己的输入。',
    'plugins.limits': '限制：{pages} 页内存，每次调用 {ms} ms，{instances} 个实例。',
    'plugins.sandbox': '沙箱中：{calls}，失败 {failed} 次，启动 {instances}，丢弃 {discards} 个，内存峰值 {mib} MiB。',
    'plugins.not_in_sandbox': '尚未加载到沙箱：第一次直播回合或试运行时加载。',
    'plugins.versions': '版本', 'plugins.col.sha': '模块 sha256', 'plugins.col.size': '大小', 'plugins.col.uploaded': '上传',
    'plugins.active': '生效中', 'plugins.roll_back': '回滚到此版本', 'plugins.download': '下载',
    'plugins.confirm_rollback': '将 {name} {version} 设为生效版本？直播间在下一回合切换。',
    'plugins.rolled_back': '{name} {version} 从下一回合起生效', 'plugins.active_suffix': '（生效中）',
    'plugins.demo_catalog': '演示商品库', 'plugins.stream_catalog': '直播间：{name}', 'plugins.paste_catalog': '粘贴商品库…',
    'plugins.hook_on': '{event} 钩子：输入是事件，输出是决策。',
    'plugins.try': '在沙箱中试运行', 'plugins.nothing_to_try': '此版本没有可试运行的内容。',
    'plugins.version': '版本', 'plugins.export': '导出项', 'plugins.input': '输入（JSON）', 'plugins.catalog_seen': '插件看到的商品库',
    'plugins.run': '运行', 'plugins.ok': '成功',
    'plugins.keys': '受信任的签名密钥',
    'plugins.keys_hint': '签名的包只有在密钥受信任时才能上传；未签名的包可以上传，并显示为未签名。',
    'plugins.col.key_id': '密钥 ID', 'plugins.col.public_key': '公钥', 'plugins.col.added_by': '添加人',
    'plugins.confirm_untrust': '新上传不再信任 {key}？', 'plugins.remove': '移除', 'plugins.no_keys': '没有受信任的密钥。',
    'plugins.key_id_ph': '密钥 ID（如 team）', 'plugins.public_key_ph': 'team.key.pub 中的十六进制公钥',
    'plugins.trust': '信任密钥', 'plugins.trusted': '已信任密钥',
  },
});
LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
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
  function plural(n, key) { return n === 1 ? t('plugins.' + key + '_1') : t('plugins.' + key + 's_n', {n}); }
  function badge(text, kind) { return el('span', {class: 'badge ' + (kind || '')}, text); }
  function signatureBadge(p) {
    return p.signature === 'verified' ? badge(t('plugins.signed', {signer: p.signer}), 'good') : badge(t('plugins.unsigned'), 'warn');
  }

  async function load() {
    const plugins = await api('GET', '/api/plugins');
    const rows = plugins.map((p) => el('tr', {dataset: {plugin: p.name}},
      el('td', {}, el('a', {href: '#' + p.name}, p.name), el('div', {class: 'muted'}, p.description || '')),
      el('td', {class: 'mono'}, p.version),
      el('td', {}, (p.kinds || []).join(', ')),
      el('td', {class: 'state'}, p.enabled ? badge(t('plugins.enabled'), 'good') : badge(t('plugins.disabled')), ' ',
        p.problem ? el('span', {class: 'badge bad', title: p.problem}, t('plugins.not_loaded')) : '', ' ',
        el('button', {class: 'secondary toggle', type: 'button',
          title: t(p.enabled ? 'plugins.stop_hint' : 'plugins.start_hint'),
          onclick: () => toggle(p)}, t(p.enabled ? 'plugins.disable' : 'plugins.enable'))),
      el('td', {}, signatureBadge(p)),
      el('td', {class: 'calls'}, String(p.stats.calls)),
      el('td', {class: 'errors'}, p.stats.errors ? badge(String(p.stats.errors), 'bad') : '0'),
      el('td', {}, p.stats.calls ? latency(p.stats.p50_ms) : ''),
      el('td', {}, p.stats.calls ? latency(p.stats.p95_ms) : ''),
      el('td', {}, p.owner)));
    list.replaceChildren(
      el('div', {class: 'row'}, el('h2', {}, t('plugins.heading')), el('button', {type: 'button', class: 'secondary', onclick: () => refresh()}, t('plugins.refresh'))),
      plugins.length ? el('table', {id: 'plugins-table'},
        el('thead', {}, el('tr', {}, ['plugin', 'version', 'kinds', 'state', 'signature', 'calls', 'errors', 'P50', 'P95', 'owner']
          .map((h) => el('th', {}, h.startsWith('P') ? h : t('plugins.col.' + h))))),
        el('tbody', {}, rows))
        : el('p', {class: 'muted'}, t('plugins.none')),
      el('p', {class: 'muted'}, t('plugins.counts_hint')));
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
      toast(t(next.enabled ? 'plugins.toggled_on' : 'plugins.toggled_off', {name: next.name}));
      await refresh();
    } catch (err) { showError(err); if (err.status === 409) await refresh(); }
  }

  function uploadForm() {
    const form = el('form', {class: 'card', id: 'upload-form'},
      el('h2', {}, t('plugins.upload')),
      el('p', {class: 'muted'}, t('plugins.upload_hint')),
      el('div', {class: 'row'},
        el('input', {type: 'file', name: 'package', id: 'package-file', accept: '.lhp,application/zip', required: true}),
        el('button', {type: 'submit'}, t('plugins.upload_button'))));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const file = form.package.files[0];
      if (!file) { showError(new LiveHAT.ApiError(400, {error: t('plugins.choose_file'), field: 'package'}), form); return; }
      const body = new FormData();
      body.append('package', file);
      try {
        const r = await api('POST', '/api/plugins', body);
        toast(t(r.version.active ? 'plugins.uploaded_active' : 'plugins.uploaded_kept', {name: r.plugin.name, version: r.version.version}));
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
      el('h2', {}, p.name, ' ', el('span', {class: 'mono'}, p.version), ' ', p.enabled ? badge(t('plugins.enabled'), 'good') : badge(t('plugins.disabled'))),
      el('p', {}, p.description || ''),
      el('p', {class: 'muted'}, t('plugins.info', {owner: p.owner, sha: fmt.short(p.sha256), size: String(p.size), at: fmt.time(p.uploaded_at)})),
      el('p', {}, t('plugins.signature'), signatureBadge(p)),
      p.problem ? el('p', {class: 'badge bad', id: 'plugin-problem'}, t('plugins.runs_without'), p.problem) : '',
      el('h3', {}, t('plugins.permissions')),
      p.permissions.length ? el('ul', {}, p.permissions.map((x) => el('li', {}, el('b', {}, x.name), ': ', x.reason)))
        : el('p', {class: 'muted'}, t('plugins.no_permissions')),
      el('p', {class: 'muted'}, t('plugins.limits', {pages: p.limits.memory_pages, ms: p.limits.timeout_ms, instances: p.limits.instances})),
      d.sandbox ? el('p', {class: 'muted', id: 'sandbox-stats'}, t('plugins.sandbox', {calls: plural(d.sandbox.calls, 'call'),
        failed: d.sandbox.failures, instances: plural(d.sandbox.instantiations, 'instance'), discards: d.sandbox.discards,
        mib: (d.sandbox.peak_memory_bytes / 1048576).toFixed(1)}))
        : el('p', {class: 'muted'}, t('plugins.not_in_sandbox')));
    const versions = el('div', {class: 'card', id: 'plugin-versions'},
      el('h2', {}, t('plugins.versions')),
      el('table', {},
        el('thead', {}, el('tr', {}, ['version', 'sha', 'signature', 'size', 'uploaded'].map((h) => el('th', {}, t('plugins.col.' + h))), el('th', {}))),
        el('tbody', {}, d.versions.map((v) => el('tr', {dataset: {version: v.version}},
          el('td', {class: 'mono'}, v.version, ' ', v.active ? badge(t('plugins.active'), 'good') : ''),
          el('td', {class: 'mono', title: v.sha256}, fmt.short(v.sha256)),
          el('td', {}, v.signature === 'verified' ? badge(t('plugins.signed', {signer: v.signer}), 'good') : badge(t('plugins.unsigned'), 'warn')),
          el('td', {}, String(v.size)),
          el('td', {}, v.uploaded_by, ' · ', fmt.time(v.uploaded_at)),
          el('td', {class: 'row'},
            v.active ? '' : el('button', {type: 'button', class: 'secondary rollback', onclick: () => rollback(p, v.version)}, t('plugins.roll_back')),
            el('a', {href: '/api/plugins/' + encodeURIComponent(p.name) + '/versions/' + encodeURIComponent(v.version) + '/package'}, t('plugins.download'))))))));
    // A refresh of the same version keeps the trial panel and its result.
    if (!trial || trial.name !== p.name || trial.version !== p.version) trial = {name: p.name, version: p.version, form: tryPanel(p, d.versions)};
    detail.replaceChildren(el('div', {class: 'grid'}, info, trial.form), versions);
  }
  let trial = null;

  async function rollback(p, version) {
    if (!confirm(t('plugins.confirm_rollback', {name: p.name, version}))) return;
    try {
      await api('POST', '/api/plugins/' + encodeURIComponent(p.name) + '/rollback', {version, revision: p.revision});
      toast(t('plugins.rolled_back', {name: p.name, version}));
      await refresh();
    } catch (err) { showError(err); if (err.status === 409) await refresh(); }
  }

  function tryPanel(p, versions) {
    // Trying an inactive version (say, before a rollback) loads it aside for
    // the call; live streams keep the active one.
    const versionSel = el('select', {name: 'version', id: 'try-version'},
      versions.map((v) => el('option', {value: v.active ? '' : v.version, selected: v.active}, v.version + (v.active ? t('plugins.active_suffix') : ''))));
    const exportSel = el('select', {name: 'export', id: 'try-export'},
      p.exports.map((x, i) => el('option', {value: String(i)}, x.kind + ': ' + x.name)));
    const input = el('textarea', {name: 'input', id: 'try-input', rows: 6});
    const catalogSel = el('select', {name: 'catalog_source', id: 'try-catalog-source'},
      el('option', {value: ''}, t('plugins.demo_catalog')),
      streams.map((s) => el('option', {value: 'stream:' + s.id}, t('plugins.stream_catalog', {name: s.name}))),
      el('option', {value: 'paste'}, t('plugins.paste_catalog')));
    const catalog = el('textarea', {name: 'catalog', id: 'try-catalog', rows: 6, hidden: true,
      placeholder: '{"currency": "CNY", "products": [{"id": "p-1", "name": "…", "price": 99, "stock": 10}]}'});
    const out = el('div', {id: 'try-result'});
    const describe = el('p', {class: 'muted'});
    function pick() {
      const x = p.exports[Number(exportSel.value)];
      if (!x) return;
      input.value = JSON.stringify(x.example_input, null, 2);
      describe.textContent = x.kind === 'hook' ? t('plugins.hook_on', {event: x.event})
        : (x.description || '');
    }
    exportSel.addEventListener('change', pick);
    catalogSel.addEventListener('change', () => { catalog.hidden = catalogSel.value !== 'paste'; });
    const form = el('form', {class: 'card', id: 'try-form'},
      el('h2', {}, t('plugins.try')),
      p.exports.length ? '' : el('p', {class: 'muted'}, t('plugins.nothing_to_try')),
      el('label', {for: 'try-version'}, t('plugins.version')), versionSel,
      el('label', {for: 'try-export'}, t('plugins.export')), exportSel, describe,
      el('label', {for: 'try-input'}, t('plugins.input')), input,
      el('label', {for: 'try-catalog-source'}, t('plugins.catalog_seen')), catalogSel, catalog,
      el('div', {class: 'row'}, el('button', {type: 'submit', id: 'try-run'}, t('plugins.run'))), out);
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
          el('p', {}, r.ok ? badge(t('plugins.ok'), 'good') : badge(r.outcome, 'bad'), ' ', el('span', {id: 'try-latency'}, latency(r.latency_ms)),
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
    const children = [el('h2', {}, t('plugins.keys')),
      el('p', {class: 'muted'}, t('plugins.keys_hint')),
      ks.length ? el('table', {},
        el('thead', {}, el('tr', {}, ['key_id', 'public_key', 'added_by'].map((h) => el('th', {}, t('plugins.col.' + h))), el('th', {}))),
        el('tbody', {}, ks.map((k) => el('tr', {},
          el('td', {class: 'mono'}, k.key_id), el('td', {class: 'mono'}, k.public_key), el('td', {}, k.added_by, ' · ', fmt.time(k.created_at)),
          el('td', {}, me.role === 'operator' ? el('button', {type: 'button', class: 'danger', onclick: async () => {
            if (!confirm(t('plugins.confirm_untrust', {key: k.key_id}))) return;
            try { await api('DELETE', '/api/plugin-keys/' + encodeURIComponent(k.key_id)); await loadKeys(); } catch (err) { showError(err); }
          }}, t('plugins.remove')) : '')))))
        : el('p', {class: 'muted'}, t('plugins.no_keys'))];
    if (me.role === 'operator') {
      const form = el('form', {class: 'row', id: 'key-form'},
        el('input', {name: 'key_id', placeholder: t('plugins.key_id_ph'), required: true}),
        el('input', {name: 'public_key', placeholder: t('plugins.public_key_ph'), size: 64, required: true}),
        el('button', {type: 'submit'}, t('plugins.trust')));
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        try {
          await api('POST', '/api/plugin-keys', {key_id: form.key_id.value.trim(), public_key: form.public_key.value.trim()});
          toast(t('plugins.trusted'));
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
