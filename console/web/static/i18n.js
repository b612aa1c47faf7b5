// LiveHAT console: translation and locale formatting. Every page loads this
// file first, then app.js, then its own script, which registers its strings
// at its top with LH.i18n.add({en: {...}, 'zh-CN': {...}}) and looks them up
// with LH.t(key, params). There is no shared dictionary: each page owns its
// keys, prefixed with the page's name ("catalog.save"), so that engineers
// translating different pages do not collide. The contract is written down
// in console/README.md, "Translating the console".
'use strict';

const LH = (() => {
  const LOCALES = ['en', 'zh-CN'];
  const STORAGE_KEY = 'livehat.locale';
  const dicts = {en: {}, 'zh-CN': {}};
  const warned = new Set();

  // detect picks the stored choice, else the browser's first preference
  // that is Chinese or English; a browser that prefers neither gets English.
  function detect() {
    let stored = null;
    try { stored = localStorage.getItem(STORAGE_KEY); } catch { /* storage disabled: fall back to the browser */ }
    if (LOCALES.includes(stored)) return stored;
    for (const l of navigator.languages || [navigator.language || 'en']) {
      const tag = String(l).toLowerCase();
      if (tag.startsWith('zh')) return 'zh-CN';
      if (tag.startsWith('en')) return 'en';
    }
    return 'en';
  }

  const current = detect();
  document.documentElement.lang = current;

  // add merges a page's strings: {en: {key: text}, 'zh-CN': {key: text}}.
  // A later add of the same key wins, so a page may override a core string.
  function add(dict) {
    for (const [locale, entries] of Object.entries(dict || {})) {
      if (!dicts[locale]) throw new Error('i18n: unknown locale ' + locale + ' (want ' + LOCALES.join(' or ') + ')');
      Object.assign(dicts[locale], entries);
    }
  }

  function has(key) { return key in dicts[current] || key in dicts.en; }

  // t looks key up in the current locale, then in English; a key found in
  // neither is shown as itself and logged once, so a missing string is
  // visible in the page and in the console without breaking it. {name}
  // placeholders take params.name; one without a param stays as written.
  function t(key, params) {
    let text = dicts[current][key];
    if (text === undefined) text = dicts.en[key];
    if (text === undefined) {
      if (!warned.has(key)) { warned.add(key); console.warn('i18n: no text for ' + JSON.stringify(key)); }
      return key;
    }
    if (!params) return text;
    return text.replace(/\{(\w+)\}/g, (m, name) => (params[name] === undefined || params[name] === null ? m : String(params[name])));
  }

  function locale() { return current; }

  // apply translates the static text of a page's HTML: an element with
  // data-i18n="key" gets t(key) as its text, data-i18n-placeholder and
  // data-i18n-title its placeholder and title. The pages' HTML is in
  // English, so a page whose script has not loaded still reads.
  function apply(root) {
    const scope = root || document;
    for (const node of scope.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
    for (const node of scope.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
    for (const node of scope.querySelectorAll('[data-i18n-title]')) node.title = t(node.dataset.i18nTitle);
  }

  // setLocale stores the choice and reloads, so every page renders in it
  // from the start (no half-translated page).
  function setLocale(l) {
    if (!LOCALES.includes(l)) throw new Error('i18n: unknown locale ' + l + ' (want ' + LOCALES.join(' or ') + ')');
    try { localStorage.setItem(STORAGE_KEY, l); } catch { /* storage disabled: the choice lasts this page only */ }
    location.reload();
  }

  // dateFormat formats v (a Date, a time string or milliseconds) with
  // options; what is not a time is shown as given rather than throwing.
  function dateFormat(v, options) {
    if (v === null || v === undefined || v === '') return '';
    const d = v instanceof Date ? v : new Date(v);
    if (Number.isNaN(d.getTime())) return String(v);
    return new Intl.DateTimeFormat(current, options).format(d);
  }

  // fmt formats in the current locale; null and undefined are ''.
  const fmt = {
    number: (v, opts) => (v == null || v === '' ? '' : new Intl.NumberFormat(current, opts).format(Number(v))),
    money: (amount, currency) => {
      if (amount == null || amount === '') return '';
      try {
        return new Intl.NumberFormat(current, {style: 'currency', currency: currency || 'CNY'}).format(Number(amount));
      } catch {
        // An unknown currency code: the amount and the code as given.
        return new Intl.NumberFormat(current).format(Number(amount)) + ' ' + currency;
      }
    },
    date: (v) => dateFormat(v, {dateStyle: 'medium'}),
    datetime: (v) => dateFormat(v, {dateStyle: 'medium', timeStyle: 'medium'}),
  };

  // statusCodes names the error of an answer that carries no code.
  const statusCodes = {400: 'bad_request', 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found', 409: 'conflict',
    413: 'too_large', 415: 'unsupported_type', 422: 'validation', 429: 'rate_limited', 503: 'unavailable'};

  // apiError turns an API error body ({error, code, field}) into a message
  // in the current locale: the code's text, the field it names, and, in
  // English, the server's own message, which says more. A body without a
  // known code shows the server's message as it is.
  function apiError(body, status) {
    if (typeof body === 'string') body = {error: body};
    body = body || {};
    const code = body.code || statusCodes[status];
    const detail = body.error || (status ? 'HTTP ' + status : t('error.unknown'));
    if (!code || !has('error.' + code)) return detail;
    if (current === 'en') return detail;
    let msg = t('error.' + code);
    if (body.field) msg += t('error.field_suffix', {field: body.field});
    return msg + t('error.detail_suffix', {detail});
  }

  add({
    en: {
      'locale.en': 'English',
      'locale.zh-CN': '中文',
      'locale.switch': 'Language',
      'error.unknown': 'Something went wrong',
      'error.field_suffix': ' (field {field})',
      'error.detail_suffix': ': {detail}',
      'error.bad_request': 'The request is not valid',
      'error.validation': 'Please check the input',
      'error.unauthenticated': 'Please log in',
      'error.bad_credentials': 'Wrong username or password',
      'error.forbidden': 'You may not do this',
      'error.not_found': 'Not found',
      'error.conflict': 'Someone else changed this since you loaded it',
      'error.too_large': 'Too large',
      'error.unsupported_type': 'This kind of file is not accepted',
      'error.rate_limited': 'Too many attempts; wait a moment',
      'error.unavailable': 'The service is not available',
      'error.internal': 'Server error',
      'error.catalog_invalid': 'The catalog has problems; nothing was stored',
      'error.catalog_conflict': 'Someone else changed the catalog since you loaded it',
      'error.harness_invalid': 'The harness document is not valid',
      'error.harness_incompatible': 'The installed plugins cannot serve this harness',
    },
    'zh-CN': {
      'locale.switch': '语言',
      'error.unknown': '出错了',
      'error.field_suffix': '（字段 {field}）',
      'error.detail_suffix': '：{detail}',
      'error.bad_request': '请求无效',
      'error.validation': '请检查输入',
      'error.unauthenticated': '请先登录',
      'error.bad_credentials': '用户名或密码错误',
      'error.forbidden': '没有权限执行此操作',
      'error.not_found': '未找到',
      'error.conflict': '您打开之后，他人已修改了此内容',
      'error.too_large': '内容过大',
      'error.unsupported_type': '不支持此文件类型',
      'error.rate_limited': '尝试次数过多，请稍后再试',
      'error.unavailable': '服务暂不可用',
      'error.internal': '服务器错误',
      'error.catalog_invalid': '商品库有问题，未保存任何内容',
      'error.catalog_conflict': '您打开之后，他人已修改了商品库',
      'error.harness_invalid': 'Harness 文档无效',
      'error.harness_incompatible': '已安装的插件无法支持此 harness',
    },
  });

  return {i18n: {add, has, apply, locales: () => LOCALES.slice()}, t, locale, setLocale, fmt, apiError};
})();
