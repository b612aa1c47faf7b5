'use strict';
LH.i18n.add({
  en: {
    'login.title': 'LiveHAT · Log in', 'login.heading': 'LiveHAT console', 'login.username': 'Username',
    'login.password': 'Password', 'login.submit': 'Log in',
    'login.hint': 'The first run prints the admin and demo merchant passwords on the terminal.',
  },
  'zh-CN': {
    'login.title': 'LiveHAT · 登录', 'login.heading': 'LiveHAT 控制台', 'login.username': '用户名',
    'login.password': '密码', 'login.submit': '登录',
    'login.hint': '首次运行时，终端会打印管理员和演示商家的密码。',
  },
});

LiveHAT.page(() => {
  const form = document.getElementById('login-form');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    // The server checks the page to go back to (a path of this console,
    // else the default page), so a crafted ?next= cannot leave the site.
    const next = new URLSearchParams(location.search).get('next') || '';
    const body = {username: form.username.value, password: form.password.value, next};
    try {
      const r = await LiveHAT.api('POST', '/api/login', body, {noRedirect: true});
      location.href = r.next || '/';
    } catch (err) {
      LiveHAT.showError(err, form);
    }
  });
});
