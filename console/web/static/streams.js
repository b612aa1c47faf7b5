'use strict';
// Streams: the merchant's streams and their configuration (persona,
// strategy, banned claims). Saving sends the revision the form was loaded
// at; a concurrent edit gets a conflict instead of being overwritten.
LiveHAT.page(async (me) => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const list = el('div', {class: 'card'});
  const editor = el('div', {id: 'stream-editor'});
  main.append(list, editor);

  async function load() {
    const streams = await api('GET', '/api/streams');
    const rows = streams.map((s) => el('tr', {},
      el('td', {}, el('a', {href: '#' + s.id, onclick: () => edit(s.id)}, s.name)),
      el('td', {}, s.on_air ? el('span', {class: 'badge good'}, 'on air') : el('span', {class: 'badge'}, 'off air')),
      el('td', {class: 'mono'}, fmt.short(s.harness_version)),
      el('td', {}, fmt.time(s.updated_at)),
      el('td', {}, el('a', {href: '/live?stream=' + encodeURIComponent(s.id)}, 'Live view'))));
    list.replaceChildren(el('h2', {}, 'Streams'),
      streams.length ? el('table', {id: 'streams-table'},
        el('thead', {}, el('tr', {}, ['Name', 'State', 'Harness', 'Updated', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows)) : el('p', {class: 'muted'}, 'No streams yet.'),
      createForm());
    if (location.hash.length > 1) edit(location.hash.slice(1));
  }

  function createForm() {
    const form = el('form', {class: 'row', id: 'new-stream'},
      el('input', {name: 'name', placeholder: 'New stream name', required: true}));
    if (me.role === 'operator') {
      const sel = el('select', {name: 'merchant_id'});
      api('GET', '/api/merchants').then((ms) => sel.replaceChildren(...ms.map((m) => el('option', {value: m.id}, m.name))));
      form.append(sel);
    }
    form.append(el('button', {type: 'submit'}, 'Create'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = {name: form.name.value};
      if (form.merchant_id) body.merchant_id = form.merchant_id.value;
      try {
        const s = await api('POST', '/api/streams', body);
        toast('Stream created');
        location.hash = s.id;
        await load();
      } catch (err) { showError(err, form); }
    });
    return form;
  }

  async function edit(id) {
    let s;
    try { s = await api('GET', '/api/streams/' + encodeURIComponent(id)); } catch (err) { showError(err); return; }
    const form = el('form', {class: 'card', id: 'stream-form'},
      el('h2', {}, 'Configure ', s.name),
      el('label', {for: 'f-name'}, 'Name'), el('input', {id: 'f-name', name: 'name', value: s.name}),
      el('label', {for: 'f-persona'}, 'Persona (how the avatar speaks)'),
      el('textarea', {id: 'f-persona', name: 'persona'}, s.persona),
      el('label', {for: 'f-banned'}, 'Banned claims (one per line)'),
      el('textarea', {id: 'f-banned', name: 'banned_claims'}, (s.banned_claims || []).join('\n')),
      el('label', {for: 'f-strategy'}, 'Marketing strategy (rules: name, every, signal, threshold, instruction)'),
      el('textarea', {id: 'f-strategy', name: 'strategy'}, JSON.stringify(s.strategy || {}, null, 2)),
      el('label', {for: 'f-currency'}, 'Currency'), el('input', {id: 'f-currency', name: 'currency', value: s.currency, size: 4}),
      el('p', {class: 'muted'}, 'Revision ' + s.revision + ' · harness ' + fmt.short(s.harness_version)),
      el('div', {class: 'row'}, el('button', {type: 'submit'}, 'Save'),
        el('button', {type: 'button', class: 'danger', onclick: async () => {
          if (!confirm('Delete stream ' + s.name + '?')) return;
          try { await api('DELETE', '/api/streams/' + s.id); location.hash = ''; editor.replaceChildren(); await load(); } catch (err) { showError(err); }
        }}, 'Delete')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      let strategy;
      try { strategy = JSON.parse(form.strategy.value || '{}'); } catch (err) {
        showError(new LiveHAT.ApiError(400, {error: 'strategy: ' + err.message, field: 'strategy'}), form); return;
      }
      const body = {name: form.name.value, persona: form.persona.value, strategy, catalog: s.catalog,
        banned_claims: form.banned_claims.value.split('\n').map((x) => x.trim()).filter(Boolean),
        currency: form.currency.value, harness_version: s.harness_version, on_air: s.on_air, revision: s.revision};
      try {
        await api('PUT', '/api/streams/' + s.id, body);
        toast('Saved');
        await load(); await edit(s.id);
      } catch (err) { showError(err, form); }
    });
    editor.replaceChildren(form);
  }

  await load();
});
