'use strict';
// Settings: the caller's API tokens; operators also manage accounts.
LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const tokens = el('div', {class: 'card', id: 'tokens'});
  main.append(tokens);

  async function loadTokens() {
    const list = await api('GET', '/api/tokens');
    const form = el('form', {class: 'row'}, el('input', {name: 'name', placeholder: 'Token name, e.g. ci'}), el('button', {type: 'submit'}, 'Create token'));
    const secret = el('div');
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const r = await api('POST', '/api/tokens', {name: form.name.value});
        await loadTokens();
        tokens.append(el('p', {}, 'Copy it now, it is shown once: ', el('code', {id: 'token-secret'}, r.secret)));
      } catch (err) { showError(err, form); }
    });
    tokens.replaceChildren(el('h2', {}, 'API tokens'),
      el('p', {class: 'muted'}, 'Scripts send "Authorization: Bearer <token>".'),
      el('table', {}, el('tbody', {}, list.map((t) => el('tr', {},
        el('td', {}, t.name), el('td', {}, fmt.time(t.created_at)), el('td', {}, t.last_used_at ? 'used ' + fmt.time(t.last_used_at) : 'never used'),
        el('td', {}, el('button', {class: 'secondary', onclick: async () => {
          try { await api('DELETE', '/api/tokens/' + t.id); toast('Revoked'); await loadTokens(); } catch (err) { showError(err); }
        }}, 'Revoke')))))), form, secret);
  }
  await loadTokens();

  if (me.role !== 'operator') return;
  const users = el('div', {class: 'card', id: 'users'});
  main.append(users);
  async function loadUsers() {
    const [list, merchants] = await Promise.all([api('GET', '/api/users'), api('GET', '/api/merchants')]);
    const mname = Object.fromEntries(merchants.map((m) => [m.id, m.name]));
    const form = el('form', {class: 'row'},
      el('input', {name: 'username', placeholder: 'username'}),
      el('input', {name: 'password', type: 'password', placeholder: 'password (8+ characters)'}),
      el('select', {name: 'role'}, ['merchant', 'operator', 'developer'].map((r) => el('option', {value: r}, r))),
      el('select', {name: 'merchant_id'}, el('option', {value: ''}, '(no merchant)'), merchants.map((m) => el('option', {value: m.id}, m.name))),
      el('button', {type: 'submit'}, 'Add account'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = {username: form.username.value, password: form.password.value, role: form.role.value, merchant_id: form.merchant_id.value};
      try { await api('POST', '/api/users', body); toast('Account added'); await loadUsers(); } catch (err) { showError(err, form); }
    });
    users.replaceChildren(el('h2', {}, 'Accounts'), el('table', {}, el('tbody', {}, list.map((u) => el('tr', {},
      el('td', {}, u.username), el('td', {}, u.role), el('td', {}, mname[u.merchant_id] || ''), el('td', {}, fmt.time(u.created_at)))))), form);
  }
  await loadUsers();
});
