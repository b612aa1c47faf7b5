// LiveHAT console: shared client code. Every page loads i18n.js, then this
// file, then its own script, which registers its strings with LH.i18n.add
// and itself with LiveHAT.page(init).
//
// Rule for every page: user-supplied text is inserted with textContent (el()
// does that for string children), never with innerHTML.
'use strict';

LH.i18n.add({
  en: {
    'nav.streams': 'Streams', 'nav.live': 'Live view', 'nav.plugins': 'Plugins', 'nav.harnesses': 'Harnesses',
    'nav.evolution': 'Evolution', 'nav.runs': 'Training', 'nav.evals': 'Evaluations', 'nav.experiments': 'Experiments',
    'nav.settings': 'Settings', 'nav.logout': 'Log out', 'nav.not_logged_in': 'not logged in',
    'role.operator': 'operator', 'role.merchant': 'merchant', 'role.developer': 'developer',
  },
  'zh-CN': {
    'nav.streams': '直播间', 'nav.live': '直播预览', 'nav.plugins': '插件', 'nav.harnesses': 'Harness 版本',
    'nav.evolution': '演进', 'nav.runs': '训练', 'nav.evals': '评测', 'nav.experiments': '实验',
    'nav.settings': '设置', 'nav.logout': '退出登录', 'nav.not_logged_in': '未登录',
    'role.operator': '运营', 'role.merchant': '商家', 'role.developer': '开发者',
  },
});

const LiveHAT = (() => {
  let me = null;
  let csrf = '';

  // el builds an element: el('div', {class: 'x', onclick: fn}, 'text', child).
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
      else if (k === 'class') node.className = v;
      else if (k === 'dataset') Object.assign(node.dataset, v);
      else if (k in node && typeof v !== 'string') node[k] = v;
      else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  // ApiError carries the server's JSON error: {error, code, field}; its
  // message is in the page's locale (LH.apiError), its english the server's.
  class ApiError extends Error {
    constructor(status, body) {
      super(LH.apiError(body, status));
      this.status = status;
      this.code = body && body.code;
      this.field = body && body.field;
      this.english = body && body.error ? body.error : 'HTTP ' + status;
      this.body = body;
    }
  }

  // api calls the REST API with the session cookie and the CSRF header.
  async function api(method, path, body, opts = {}) {
    const headers = {'X-CSRF-Token': csrf};
    let payload = body;
    if (body !== undefined && !(body instanceof FormData) && typeof body !== 'string') {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    } else if (typeof body === 'string' && opts.type) {
      headers['Content-Type'] = opts.type;
    }
    const res = await fetch(path, {method, headers, body: payload, credentials: 'same-origin'});
    if (res.status === 401 && !opts.noRedirect) {
      location.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
      throw new ApiError(401, {error: 'not logged in', code: 'unauthenticated'});
    }
    const text = await res.text();
    let data = null;
    if (text) { try { data = JSON.parse(text); } catch { data = text; } }
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }

  // stream opens an SSE endpoint; onEvent(type, data) gets parsed JSON.
  function stream(path, onEvent, types) {
    const es = new EventSource(path, {withCredentials: true});
    for (const t of types || ['message']) {
      es.addEventListener(t, (e) => { let d = e.data; try { d = JSON.parse(d); } catch { /* plain text event */ } onEvent(t, d); });
    }
    return es;
  }

  function toast(msg, kind) {
    const box = document.getElementById('toasts') || document.body.appendChild(el('div', {id: 'toasts'}));
    const t = el('div', {class: 'toast ' + (kind || 'info'), role: 'status'}, msg);
    box.append(t);
    setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
  }

  // showError reports an API error; a field error also marks the input
  // whose name attribute matches the field.
  function showError(err, form) {
    if (form && err.field) {
      const input = form.querySelector('[name="' + CSS.escape(err.field) + '"]');
      if (input) { input.classList.add('invalid'); input.focus(); }
    }
    toast(err.message || String(err), 'error');
  }

  const NAV = [
    {href: '/streams', label: 'nav.streams', roles: ['operator', 'merchant']},
    {href: '/live', label: 'nav.live', roles: ['operator', 'merchant']},
    {href: '/plugins', label: 'nav.plugins', roles: ['operator', 'developer']},
    {href: '/harnesses', label: 'nav.harnesses', roles: ['operator']},
    {href: '/evolution', label: 'nav.evolution', roles: ['operator']},
    {href: '/runs', label: 'nav.runs', roles: ['operator']},
    {href: '/evals', label: 'nav.evals', roles: ['operator']},
    {href: '/experiments', label: 'nav.experiments', roles: ['operator']},
    {href: '/settings', label: 'nav.settings', roles: ['operator', 'merchant', 'developer']},
  ];

  // localeSwitch is the header's language menu; a choice reloads the page
  // in that language.
  function localeSwitch() {
    const sel = el('select', {id: 'locale-switch', class: 'locale-switch', 'aria-label': LH.t('locale.switch'),
      onchange: (e) => LH.setLocale(e.target.value)},
    LH.i18n.locales().map((l) => el('option', {value: l, selected: l === LH.locale()}, LH.t('locale.' + l))));
    return sel;
  }

  function renderNav() {
    const nav = document.getElementById('nav');
    if (!nav) return;
    const links = NAV.filter((n) => n.roles.includes(me.role)).map((n) =>
      el('a', {href: n.href, class: location.pathname === n.href ? 'active' : ''}, LH.t(n.label)));
    const logout = el('button', {class: 'link', onclick: async () => { await api('POST', '/api/logout'); location.href = '/login'; }}, LH.t('nav.logout'));
    nav.replaceChildren(
      el('a', {href: '/', class: 'brand'}, 'LiveHAT'),
      el('nav', {}, links),
      el('span', {class: 'who'}, me.display_name + ' · ' + LH.t('role.' + me.role), localeSwitch(), logout));
  }

  // renderPublicHeader gives pages without a login (the login page) the
  // language switch.
  function renderPublicHeader() {
    const box = document.getElementById('locale-box');
    if (box) box.replaceChildren(localeSwitch());
  }

  let init = null;
  function page(fn) { init = fn; }

  async function boot() {
    LH.i18n.apply();
    if (document.body.dataset.public === 'true') { renderPublicHeader(); if (init) init(); return; }
    try {
      const r = await api('GET', '/api/me');
      me = r.user; csrf = r.csrf || '';
    } catch (err) { if (err.status !== 401) toast(err.message, 'error'); return; }
    renderNav();
    if (init) {
      try { await init(me); } catch (err) { showError(err); }
    }
  }
  document.addEventListener('DOMContentLoaded', boot);

  // fmt helpers shared by the pages; times in the page's locale.
  const fmt = {
    time: (t) => LH.fmt.datetime(t),
    ms: (v) => v == null ? '' : (v >= 1000 ? (v / 1000).toFixed(2) + ' s' : Math.round(v) + ' ms'),
    pct: (v) => v == null ? '' : (100 * v).toFixed(1) + '%',
    num: (v, d = 2) => v == null ? '' : Number(v).toFixed(d),
    short: (h) => (h || '').replace(/^sha256:/, '').slice(0, 12),
  };

  function setCSRF(v) { csrf = v; }
  function user() { return me; }

  return {el, api, stream, toast, showError, page, fmt, setCSRF, user, ApiError};
})();
