'use strict';
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
