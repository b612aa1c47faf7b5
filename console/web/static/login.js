'use strict';
LiveHAT.page(() => {
  const form = document.getElementById('login-form');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {username: form.username.value, password: form.password.value};
    try {
      await LiveHAT.api('POST', '/api/login', body, {noRedirect: true});
      const next = new URLSearchParams(location.search).get('next');
      location.href = next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
    } catch (err) {
      LiveHAT.showError(err, form);
    }
  });
});
