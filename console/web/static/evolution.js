'use strict';
// Harness evolution: failed turns of the release gates grouped by cause
// (wrong tool, wrong fact, missing skill, hook rejection, …). From a group
// the operator starts a loop — a diagnosis and a draft of the version — then
// edits, gates and ships or rolls back on the Harnesses page; every step is
// kept as the loop's history. Item text (replies, deductions) is untrusted
// and goes in through textContent.
LH.i18n.add({
  en: {'evolution.title': 'LiveHAT · Harness evolution', 'evolution.heading': 'Harness evolution'},
  'zh-CN': {'evolution.title': 'LiveHAT · Harness 演进', 'evolution.heading': 'Harness 演进'},
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const params = new URLSearchParams(location.search);
  const picker = el('section', {class: 'card', id: 'evo-picker'});
  const failures = el('section', {id: 'failures'});
  const loops = el('section', {class: 'card', id: 'loops'});
  main.append(picker, failures, loops);

  const versions = await api('GET', '/api/harnesses');
  const current = versions.reduce((best, v) => (!best || v.streams > best.streams ? v : best), null);
  const sel = el('select', {id: 'evo-version', name: 'version'}, versions.map((v) =>
    el('option', {value: v.version, selected: v.version === (params.get('version') || current?.version)},
      v.short + ' · ' + v.name + (v.streams ? ' (' + v.streams + ' streams)' : ''))));
  sel.addEventListener('change', () => { history.replaceState(null, '', '?version=' + encodeURIComponent(sel.value)); loadFailures(); });
  picker.replaceChildren(el('h2', {}, 'Diagnose'),
    el('p', {class: 'muted'}, 'Failed turns of a version, grouped by cause: from its live turn log (what the trace shows: a hook that sent a reply back or denied it, a tool that failed) and from its release gates (the graders’ deductions, the replayed questions), newest result per item.'),
    el('div', {class: 'row'}, el('label', {for: 'evo-version'}, 'Version'), sel));

  async function loadFailures() {
    let r;
    try { r = await api('GET', '/api/evolution/failures?version=' + encodeURIComponent(sel.value)); } catch (err) { showError(err); return; }
    if (!r.causes.length) {
      failures.replaceChildren(el('div', {class: 'card'}, el('p', {class: 'muted', id: 'no-failures'},
        r.gates ? 'No failed turns in the gates of this version.' : 'No gate has evaluated this version yet: run one on the Harnesses page.')));
      return;
    }
    failures.replaceChildren(...r.causes.map((g) => causeCard(r.version, g)));
  }

  function causeCard(version, g) {
    const items = el('table', {class: 'failures'},
      el('thead', {}, el('tr', {}, ['', 'Item', 'Suite', 'Category', 'Score', 'Deductions', 'Reply'].map((h) => el('th', {}, h)))),
      el('tbody', {}, g.items.map((it) => el('tr', {},
        el('td', {}, el('input', {type: 'checkbox', name: 'items', value: it.item_id, checked: true, 'aria-label': 'use ' + it.item_id})),
        el('td', {class: 'mono'}, it.item_id), el('td', {}, it.suite), el('td', {}, it.category),
        el('td', {}, fmt.num(it.score * 100, 0)),
        el('td', {}, el('ul', {class: 'tight'}, it.deductions.map((d) => el('li', {}, d)))),
        el('td', {class: 'reply'}, it.reply)))));
    const form = el('form', {class: 'loop-form'},
      el('label', {}, 'Loop title', el('input', {name: 'title', class: 'wide', value: g.label.split(':')[0] + ' in ' + fmt.short(version)})),
      el('label', {}, 'Diagnosis (what in the harness causes it)', el('textarea', {name: 'diagnosis', rows: 2})),
      el('button', {type: 'submit'}, 'Start a loop: open a draft'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const picked = [...card.querySelectorAll('input[name=items]:checked')].map((i) => i.value);
      try {
        const r = await api('POST', '/api/evolution/loops', {cause: g.cause, title: form.title.value, base_version: version,
          diagnosis: form.diagnosis.value, items: picked});
        toast('Loop started; opening its draft');
        location.href = '/harnesses?draft=' + encodeURIComponent(r.draft.id) + '&loop=' + encodeURIComponent(r.loop.id);
      } catch (err) { showError(err, form); }
    });
    const card = el('div', {class: 'card cause', dataset: {cause: g.cause}},
      el('h2', {}, g.label, ' ', el('span', {class: 'badge bad'}, String(g.count))),
      items, form);
    return card;
  }

  async function loadLoops() {
    const list = await api('GET', '/api/evolution/loops');
    loops.replaceChildren(el('h2', {}, 'History'), list.length ? el('div', {id: 'loop-list'}, list.map((l) => {
      const badge = {open: 'warn', shipped: 'good', rolled_back: 'bad', abandoned: ''}[l.state] || '';
      const close = el('form', {class: 'row'}, el('input', {name: 'note', placeholder: 'why it ends without shipping'}),
        el('button', {type: 'submit', class: 'secondary'}, 'Abandon'));
      close.addEventListener('submit', async (e) => {
        e.preventDefault();
        try { await api('POST', '/api/evolution/loops/' + l.id + '/close', {note: close.note.value}); await loadLoops(); } catch (err) { showError(err, close); }
      });
      return el('div', {class: 'loop'},
        el('h3', {}, l.title, ' ', el('span', {class: 'badge ' + badge}, l.state.replace('_', ' ')), ' ',
          el('span', {class: 'muted'}, l.cause.replace('_', ' ') + ' · from ' + fmt.short(l.base_version) + ' · ' + l.created_by)),
        el('ol', {class: 'timeline'}, l.events.map((ev) => el('li', {class: 'ev-' + ev.kind},
          el('strong', {}, ev.kind), ' ', el('span', {class: 'muted'}, fmt.time(ev.at) + ' · ' + ev.actor), el('div', {}, ev.summary)))),
        l.state === 'open' ? el('div', {class: 'row'}, el('a', {href: '/harnesses?loop=' + encodeURIComponent(l.id)}, 'Continue on the Harnesses page'), close) : null);
    })) : el('p', {class: 'muted'}, 'No loops yet.'));
  }

  await Promise.all([loadFailures(), loadLoops()]);
});
