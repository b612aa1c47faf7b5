'use strict';
// Settings: the caller's API tokens; operators also manage accounts and the
// model server the organisation's streams (or one stream) are served from.
// An API key is write-only: the page shows whether one is set, never it.
LH.i18n.add({
  en: {
    'settings.title': 'LiveHAT · Settings', 'settings.heading': 'Settings',
    'settings.tokens': 'API tokens', 'settings.tokens_hint': 'Scripts send "Authorization: Bearer <token>".',
    'settings.token_name': 'Token name, e.g. ci', 'settings.create_token': 'Create token',
    'settings.copy_now': 'Copy it now, it is shown once: ', 'settings.used': 'used {at}', 'settings.never_used': 'never used',
    'settings.revoke': 'Revoke', 'settings.revoked': 'Revoked',
    'settings.accounts': 'Accounts', 'settings.username': 'username', 'settings.password': 'password (8+ characters)',
    'settings.no_merchant': '(no merchant)', 'settings.add_account': 'Add account', 'settings.account_added': 'Account added',
    'settings.serving': 'Serving model',
    'settings.serving_hint': 'Serve live sessions from an OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp\'s llama-server, a hosted API) instead of the console\'s own model.',
    'settings.org_default': 'The organisation\'s streams use the console\'s model ({spec}).',
    'settings.org_promoted': 'The organisation\'s streams use the promoted checkpoint of run {run} (step {step}).',
    'settings.org_server': 'The organisation\'s streams use the model server {spec}.',
    'settings.org_spec': 'The organisation\'s streams use {spec}.',
    'settings.stream': 'Stream', 'settings.stream_server': 'One stream\'s own server',
    'settings.stream_own': 'This stream uses its own model server {spec}.',
    'settings.stream_inherits': 'This stream uses the organisation\'s model ({spec}).',
    'settings.no_streams': 'No streams yet.',
    'settings.url': 'Server URL', 'settings.url_placeholder': 'http://gpu-pool:8000',
    'settings.model': 'Model name', 'settings.model_placeholder': 'the name the server serves, e.g. Qwen/Qwen3-8B',
    'settings.api_key': 'API key', 'settings.key_set': 'set', 'settings.key_not_set': 'not set',
    'settings.key_env': 'from the environment variable {name}',
    'settings.key_placeholder_set': 'leave empty to keep the stored key', 'settings.key_placeholder_unset': 'optional',
    'settings.remove_key': 'Remove the stored key',
    'settings.api_key_env': 'or: environment variable holding the key', 'settings.api_key_env_placeholder': 'e.g. VLLM_API_KEY',
    'settings.timeout': 'Timeout (s)', 'settings.idle_timeout': 'Stream idle timeout (s)',
    'settings.concurrency': 'Concurrent requests', 'settings.retries': 'Retries',
    'settings.default_hint': '0: the default', 'settings.retries_hint': '0: the default (2); -1: never',
    'settings.save': 'Save', 'settings.saved': 'Saved',
    'settings.test': 'Test connection', 'settings.testing': 'Testing…',
    'settings.test_ok': 'Connected: {model} answered in {ms}.', 'settings.test_failed': 'Failed ({kind}): {error}',
    'settings.reset_org': 'Back to the console\'s model', 'settings.reset_stream': 'Use the organisation\'s model',
    'settings.reset_done': 'Reset',
  },
  'zh-CN': {
    'settings.title': 'LiveHAT · 设置', 'settings.heading': '设置',
    'settings.tokens': 'API 令牌', 'settings.tokens_hint': '脚本请求时携带 "Authorization: Bearer <令牌>"。',
    'settings.token_name': '令牌名称，例如 ci', 'settings.create_token': '创建令牌',
    'settings.copy_now': '请立即复制，只显示这一次：', 'settings.used': '最近使用 {at}', 'settings.never_used': '从未使用',
    'settings.revoke': '吊销', 'settings.revoked': '已吊销',
    'settings.accounts': '账号', 'settings.username': '用户名', 'settings.password': '密码（至少 8 个字符）',
    'settings.no_merchant': '（不属于商家）', 'settings.add_account': '添加账号', 'settings.account_added': '账号已添加',
    'settings.serving': '推理模型',
    'settings.serving_hint': '让直播会话使用 OpenAI 兼容的推理服务（vLLM、SGLang、Ollama、llama.cpp 的 llama-server 或云端 API），而不是控制台自带的模型。',
    'settings.org_default': '本组织的直播间使用控制台自带的模型（{spec}）。',
    'settings.org_promoted': '本组织的直播间使用训练任务 {run} 发布的检查点（第 {step} 步）。',
    'settings.org_server': '本组织的直播间使用推理服务 {spec}。',
    'settings.org_spec': '本组织的直播间使用 {spec}。',
    'settings.stream': '直播间', 'settings.stream_server': '单个直播间的专用推理服务',
    'settings.stream_own': '此直播间使用专用推理服务 {spec}。',
    'settings.stream_inherits': '此直播间使用本组织的模型（{spec}）。',
    'settings.no_streams': '还没有直播间。',
    'settings.url': '服务地址', 'settings.url_placeholder': 'http://gpu-pool:8000',
    'settings.model': '模型名称', 'settings.model_placeholder': '服务端的模型名，例如 Qwen/Qwen3-8B',
    'settings.api_key': 'API 密钥', 'settings.key_set': '已设置', 'settings.key_not_set': '未设置',
    'settings.key_env': '取自环境变量 {name}',
    'settings.key_placeholder_set': '留空则保留已保存的密钥', 'settings.key_placeholder_unset': '可选',
    'settings.remove_key': '删除已保存的密钥',
    'settings.api_key_env': '或：保存密钥的环境变量', 'settings.api_key_env_placeholder': '例如 VLLM_API_KEY',
    'settings.timeout': '超时（秒）', 'settings.idle_timeout': '流式空闲超时（秒）',
    'settings.concurrency': '并发请求数', 'settings.retries': '重试次数',
    'settings.default_hint': '0 表示默认值', 'settings.retries_hint': '0 表示默认（2 次）；-1 表示不重试',
    'settings.save': '保存', 'settings.saved': '已保存',
    'settings.test': '测试连接', 'settings.testing': '测试中…',
    'settings.test_ok': '连接成功：{model} 用时 {ms} 作答。', 'settings.test_failed': '失败（{kind}）：{error}',
    'settings.reset_org': '改回控制台自带的模型', 'settings.reset_stream': '改用本组织的模型',
    'settings.reset_done': '已重置',
  },
});

LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const tokens = el('div', {class: 'card', id: 'tokens'});
  main.append(tokens);

  async function loadTokens() {
    const list = await api('GET', '/api/tokens');
    const form = el('form', {class: 'row'}, el('input', {name: 'name', placeholder: t('settings.token_name')}), el('button', {type: 'submit'}, t('settings.create_token')));
    const secret = el('div');
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const r = await api('POST', '/api/tokens', {name: form.name.value});
        await loadTokens();
        tokens.append(el('p', {}, t('settings.copy_now'), el('code', {id: 'token-secret'}, r.secret)));
      } catch (err) { showError(err, form); }
    });
    tokens.replaceChildren(el('h2', {}, t('settings.tokens')),
      el('p', {class: 'muted'}, t('settings.tokens_hint')),
      el('table', {}, el('tbody', {}, list.map((tok) => el('tr', {},
        el('td', {}, tok.name), el('td', {}, fmt.time(tok.created_at)),
        el('td', {}, tok.last_used_at ? t('settings.used', {at: fmt.time(tok.last_used_at)}) : t('settings.never_used')),
        el('td', {}, el('button', {class: 'secondary', onclick: async () => {
          try { await api('DELETE', '/api/tokens/' + tok.id); toast(t('settings.revoked')); await loadTokens(); } catch (err) { showError(err); }
        }}, t('settings.revoke'))))))), form, secret);
  }
  await loadTokens();

  if (me.role !== 'operator') return;
  const users = el('div', {class: 'card', id: 'users'});
  const serving = el('div', {class: 'card', id: 'serving'});
  main.append(serving, users);

  // serverForm edits one serving setting (the organisation's, or a
  // stream's at path): the server's fields, the key write-only, a save, a
  // connection test of what the form holds, and a reset.
  function serverForm(id, path, server, resetLabel, reload) {
    const s = server || {};
    const input = (name, attrs) => el('input', Object.assign({id: id + '-' + name, name}, attrs));
    const number = (name, value, attrs) => input(name, Object.assign({type: 'number', step: 'any', min: '0', value: value || 0}, attrs));
    const field = (label, node, hint) => el('div', {class: 'field'}, el('label', {for: node.id}, label), node,
      hint ? el('div', {class: 'muted small'}, hint) : '');
    const keyState = s.api_key_env ? t('settings.key_env', {name: s.api_key_env}) : (s.has_api_key ? t('settings.key_set') : t('settings.key_not_set'));
    const removeKey = el('input', {type: 'checkbox', id: id + '-remove_key', name: 'remove_key'});
    const form = el('form', {id: id + '-form'},
      el('div', {class: 'grid'},
        field(t('settings.url'), input('url', {value: s.url || '', placeholder: t('settings.url_placeholder'), required: true})),
        field(t('settings.model'), input('model', {value: s.model || '', placeholder: t('settings.model_placeholder'), required: true})),
        el('div', {class: 'field'},
          el('label', {for: id + '-api_key'}, t('settings.api_key'), ' ',
            el('span', {class: 'badge ' + (s.has_api_key || s.api_key_env ? 'good' : ''), id: id + '-key-state'}, keyState)),
          input('api_key', {type: 'password', autocomplete: 'new-password',
            placeholder: s.has_api_key ? t('settings.key_placeholder_set') : t('settings.key_placeholder_unset')}),
          s.has_api_key ? el('label', {class: 'check'}, removeKey, t('settings.remove_key')) : ''),
        field(t('settings.api_key_env'), input('api_key_env', {value: s.api_key_env || '', placeholder: t('settings.api_key_env_placeholder')})),
        field(t('settings.timeout'), number('timeout_s', s.timeout_s, {max: '600'}), t('settings.default_hint')),
        field(t('settings.idle_timeout'), number('idle_timeout_s', s.idle_timeout_s, {max: '600'}), t('settings.default_hint')),
        field(t('settings.concurrency'), number('concurrency', s.concurrency, {step: '1', max: '4096'}), t('settings.default_hint')),
        field(t('settings.retries'), number('retries', s.retries, {step: '1', min: '-1', max: '10'}), t('settings.retries_hint'))));
    const result = el('p', {id: id + '-test-result', role: 'status'});

    // body is the PUT body: an empty key field keeps the stored key (the
    // field is left out), the checkbox removes it.
    function body() {
      const server = {url: form.url.value.trim(), model: form.model.value.trim(), api_key_env: form.api_key_env.value.trim(),
        timeout_s: Number(form.timeout_s.value), idle_timeout_s: Number(form.idle_timeout_s.value),
        concurrency: Number(form.concurrency.value), retries: Number(form.retries.value)};
      if (form.api_key.value) server.api_key = form.api_key.value;
      else if (removeKey.checked) server.api_key = '';
      return {server};
    }
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try { await api('PUT', path, body()); toast(t('settings.saved')); await reload(); } catch (err) { showError(err, form); }
    });
    const testButton = el('button', {type: 'button', class: 'secondary', id: id + '-test', onclick: async () => {
      if (!form.reportValidity()) return;
      testButton.disabled = true;
      result.className = 'muted';
      result.textContent = t('settings.testing');
      try {
        const r = await api('POST', path + '/test', body());
        result.className = r.ok ? 'badge good' : 'badge bad';
        result.textContent = r.ok ? t('settings.test_ok', {model: r.model || r.server, ms: fmt.ms(r.took_ms)})
          : t('settings.test_failed', {kind: r.kind, error: r.error});
      } catch (err) {
        result.textContent = '';
        showError(err, form);
      } finally { testButton.disabled = false; }
    }}, t('settings.test'));
    const reset = resetLabel ? el('button', {type: 'button', class: 'secondary', id: id + '-reset', onclick: async () => {
      try { await api('DELETE', path); toast(t('settings.reset_done')); await reload(); } catch (err) { showError(err); }
    }}, resetLabel) : '';
    form.append(el('div', {class: 'row'}, el('button', {type: 'submit'}, t('settings.save')), testButton, reset), result);
    return form;
  }

  const streams = await api('GET', '/api/streams');
  let streamID = streams.length ? streams[0].id : '';

  async function loadServing() {
    const org = await api('GET', '/api/serving-model');
    const orgText = org.default ? t('settings.org_default', {spec: org.spec})
      : org.server ? t('settings.org_server', {spec: org.spec})
        : org.promotion ? t('settings.org_promoted', {run: org.promotion.run_name, step: org.promotion.step})
          : t('settings.org_spec', {spec: org.spec});
    const parts = [el('h2', {}, t('settings.serving')), el('p', {class: 'muted'}, t('settings.serving_hint')),
      el('p', {id: 'serving-org-state'}, orgText),
      serverForm('serving-org', '/api/serving-model', org.server, org.default ? '' : t('settings.reset_org'), loadServing),
      el('h3', {}, t('settings.stream_server'))];
    if (!streams.length) {
      parts.push(el('p', {class: 'muted'}, t('settings.no_streams')));
    } else {
      const own = await api('GET', '/api/serving-model/streams/' + encodeURIComponent(streamID));
      const picker = el('select', {id: 'serving-stream-picker', 'aria-label': t('settings.stream'), onchange: async () => {
        if (picker.value === streamID) return; // nothing to load; a redraw would drop what was typed
        streamID = picker.value;
        try { await loadServing(); } catch (err) { showError(err); }
      }}, streams.map((s) => el('option', {value: s.id, selected: s.id === streamID}, s.name)));
      parts.push(el('div', {class: 'row'}, el('label', {for: picker.id}, t('settings.stream')), picker),
        el('p', {id: 'serving-stream-state'}, own.own ? t('settings.stream_own', {spec: own.spec}) : t('settings.stream_inherits', {spec: own.spec})),
        serverForm('serving-stream', '/api/serving-model/streams/' + encodeURIComponent(streamID), own.server,
          own.own ? t('settings.reset_stream') : '', loadServing));
    }
    serving.replaceChildren(...parts);
    serving.dataset.stream = streamID; // the stream the forms now edit
  }
  await loadServing();

  async function loadUsers() {
    const [list, merchants] = await Promise.all([api('GET', '/api/users'), api('GET', '/api/merchants')]);
    const mname = Object.fromEntries(merchants.map((m) => [m.id, m.name]));
    const form = el('form', {class: 'row'},
      el('input', {name: 'username', placeholder: t('settings.username')}),
      el('input', {name: 'password', type: 'password', placeholder: t('settings.password')}),
      el('select', {name: 'role'}, ['merchant', 'operator', 'developer'].map((r) => el('option', {value: r}, t('role.' + r)))),
      el('select', {name: 'merchant_id'}, el('option', {value: ''}, t('settings.no_merchant')), merchants.map((m) => el('option', {value: m.id}, m.name))),
      el('button', {type: 'submit'}, t('settings.add_account')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = {username: form.username.value, password: form.password.value, role: form.role.value, merchant_id: form.merchant_id.value};
      try { await api('POST', '/api/users', body); toast(t('settings.account_added')); await loadUsers(); } catch (err) { showError(err, form); }
    });
    users.replaceChildren(el('h2', {}, t('settings.accounts')), el('table', {}, el('tbody', {}, list.map((u) => el('tr', {},
      el('td', {}, u.username), el('td', {}, t('role.' + u.role)), el('td', {}, mname[u.merchant_id] || ''), el('td', {}, fmt.time(u.created_at)))))), form);
  }
  await loadUsers();
});
