// LiveHAT console: shared client code. Every page loads this file, then its
// own script, which registers itself with LiveHAT.page(init).
//
// Rule for every page: user-supplied text is inserted with textContent (el()
// does that for string children), never with innerHTML.
'use strict';

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

  // ApiError carries the server's JSON error: {error, field}.
  class ApiError extends Error {
    constructor(status, body) {
      super(body && body.error ? body.error : 'HTTP ' + status);
      this.status = status;
      this.field = body && body.field;
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
      throw new ApiError(401, {error: 'not logged in'});
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
    {href: '/streams', label: 'Streams', roles: ['operator', 'merchant']},
    {href: '/live', label: 'Live view', roles: ['operator', 'merchant']},
    {href: '/plugins', label: 'Plugins', roles: ['operator', 'developer']},
    {href: '/harnesses', label: 'Harnesses', roles: ['operator']},
    {href: '/evolution', label: 'Evolution', roles: ['operator']},
    {href: '/runs', label: 'Training', roles: ['operator']},
    {href: '/evals', label: 'Evaluations', roles: ['operator']},
    {href: '/experiments', label: 'Experiments', roles: ['operator']},
    {href: '/settings', label: 'Settings', roles: ['operator', 'merchant', 'developer']},
  ];

  function renderNav() {
    const nav = document.getElementById('nav');
    if (!nav) return;
    const links = NAV.filter((n) => n.roles.includes(me.role)).map((n) =>
      el('a', {href: n.href, class: location.pathname === n.href ? 'active' : ''}, n.label));
    const logout = el('button', {class: 'link', onclick: async () => { await api('POST', '/api/logout'); location.href = '/login'; }}, 'Log out');
    nav.replaceChildren(
      el('a', {href: '/', class: 'brand'}, 'LiveHAT'),
      el('nav', {}, links),
      el('span', {class: 'who'}, me.display_name + ' · ' + me.role, logout));
  }

  let init = null;
  function page(fn) { init = fn; }

  async function boot() {
    if (document.body.dataset.public === 'true') { if (init) init(); return; }
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

  // fmt helpers shared by the pages.
  const fmt = {
    time: (t) => t ? new Date(t).toLocaleString() : '',
    ms: (v) => v == null ? '' : (v >= 1000 ? (v / 1000).toFixed(2) + ' s' : Math.round(v) + ' ms'),
    pct: (v) => v == null ? '' : (100 * v).toFixed(1) + '%',
    num: (v, d = 2) => v == null ? '' : Number(v).toFixed(d),
    short: (h) => (h || '').replace(/^sha256:/, '').slice(0, 12),
  };

  function setCSRF(v) { csrf = v; }
  function user() { return me; }

  return {el, api, stream, toast, showError, page, fmt, setCSRF, user, ApiError};
})();
