'use strict';
// Harness evolution: failed turns of the release gates grouped by cause
// (wrong tool, wrong fact, missing skill, hook rejection, …). From a group
// the operator starts a loop — a diagnosis and a draft of the version — then
// edits, gates and ships or rolls back on the Harnesses page; every step is
// kept as the loop's history. Item text (replies, deductions) is untrusted
// and goes in through textContent.
LH.i18n.add({
  en: {
    'evolution.title': 'LiveHAT · Harness evolution', 'evolution.heading': 'Harness evolution',
    'evolution.n_streams': ' ({n} streams)', 'evolution.diagnose': 'Diagnose',
    'evolution.diagnose_hint': 'Failed turns of a version, grouped by cause: from its live turn log (what the trace shows: a hook that sent a reply back or denied it, a tool that failed) and from its release gates (the graders’ deductions, the replayed questions), newest result per item.',
    'evolution.version': 'Version', 'evolution.no_failures': 'No failed turns in the gates of this version.',
    'evolution.no_gate': 'No gate has evaluated this version yet: run one on the Harnesses page.',
    'evolution.col.item': 'Item', 'evolution.col.suite': 'Suite', 'evolution.col.category': 'Category', 'evolution.col.score': 'Score',
    'evolution.col.deductions': 'Deductions', 'evolution.col.reply': 'Reply', 'evolution.use_item': 'use {id}',
    'evolution.loop_title': 'Loop title', 'evolution.diagnosis': 'Diagnosis (what in the harness causes it)',
    'evolution.start_loop': 'Start a loop: open a draft', 'evolution.loop_started': 'Loop started; opening its draft',
    'evolution.history': 'History', 'evolution.abandon_note': 'why it ends without shipping', 'evolution.abandon': 'Abandon',
    'evolution.state.open': 'open', 'evolution.state.shipped': 'shipped', 'evolution.state.rolled_back': 'rolled back',
    'evolution.state.abandoned': 'abandoned', 'evolution.loop_info': '{cause} · from {base} · {by}',
    'evolution.continue': 'Continue on the Harnesses page', 'evolution.no_loops': 'No loops yet.',
    'evolution.cause.wrong_tool': 'Wrong tool: a needed call missing, a needless or malformed one',
    'evolution.cause.wrong_fact': 'Wrong fact: a false, unsupported or banned statement, or a fact left out',
    'evolution.cause.missing_skill': 'Missing skill: the reply skill the question needs was not loaded',
    'evolution.cause.hook_rejection': 'Hook rejection: a hook denied the turn or it ended on the safe line',
    'evolution.cause.reply_form': 'Reply form: no reply, or too long for speech',
    'evolution.cause.run_error': 'Run error: the turn did not run (backend error, timeout)',
    'evolution.cause_short.wrong_tool': 'Wrong tool', 'evolution.cause_short.wrong_fact': 'Wrong fact',
    'evolution.cause_short.missing_skill': 'Missing skill', 'evolution.cause_short.hook_rejection': 'Hook rejection',
    'evolution.cause_short.reply_form': 'Reply form', 'evolution.cause_short.run_error': 'Run error',
    'evolution.default_title': '{cause} in {version}',
  },
  'zh-CN': {
    'evolution.title': 'LiveHAT · Harness 演进', 'evolution.heading': 'Harness 演进',
    'evolution.n_streams': '（{n} 个直播间）', 'evolution.diagnose': '诊断',
    'evolution.diagnose_hint': '某个版本失败的回合，按原因分组：来自它的直播回合日志（追踪显示的内容：把回复退回或拒绝的钩子、失败的工具）和它的发布闸门（评分器的扣分、重放的问题），每个条目取最新结果。',
    'evolution.version': '版本', 'evolution.no_failures': '此版本的闸门中没有失败的回合。',
    'evolution.no_gate': '还没有闸门评估过此版本：请在 Harness 页面运行一次。',
    'evolution.col.item': '条目', 'evolution.col.suite': '评测集', 'evolution.col.category': '类别', 'evolution.col.score': '得分',
    'evolution.col.deductions': '扣分项', 'evolution.col.reply': '回复', 'evolution.use_item': '使用 {id}',
    'evolution.loop_title': '循环标题', 'evolution.diagnosis': '诊断（harness 中导致问题的部分）',
    'evolution.start_loop': '开始一个循环：打开草稿', 'evolution.loop_started': '循环已开始，正在打开草稿',
    'evolution.history': '历史', 'evolution.abandon_note': '为什么不发布就结束', 'evolution.abandon': '放弃',
    'evolution.state.open': '进行中', 'evolution.state.shipped': '已发布', 'evolution.state.rolled_back': '已回滚',
    'evolution.state.abandoned': '已放弃', 'evolution.loop_info': '{cause} · 基于 {base} · {by}',
    'evolution.continue': '在 Harness 页面继续', 'evolution.no_loops': '还没有循环。',
    'evolution.cause.wrong_tool': '工具错误：缺少需要的调用，或有多余、格式错误的调用',
    'evolution.cause.wrong_fact': '事实错误：错误、无依据或违禁的说法，或漏说了事实',
    'evolution.cause.missing_skill': '缺少技能：没有加载问题需要的回复技能',
    'evolution.cause.hook_rejection': '钩子拒绝：钩子拒绝了这一回合，或回合以安全话术结束',
    'evolution.cause.reply_form': '回复形式：没有回复，或太长不适合播报',
    'evolution.cause.run_error': '运行错误：回合没有运行（后端错误、超时）',
    'evolution.cause_short.wrong_tool': '工具错误', 'evolution.cause_short.wrong_fact': '事实错误',
    'evolution.cause_short.missing_skill': '缺少技能', 'evolution.cause_short.hook_rejection': '钩子拒绝',
    'evolution.cause_short.reply_form': '回复形式', 'evolution.cause_short.run_error': '运行错误',
    'evolution.default_title': '{version} 的{cause}',
  },
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  // A cause's label in the page's language; the server's English label
  // for a cause this page does not know yet.
  const causeLabel = (cause, fallback) => (LH.i18n.has('evolution.cause.' + cause) ? t('evolution.cause.' + cause) : fallback || cause);
  const causeShort = (cause) => (LH.i18n.has('evolution.cause_short.' + cause) ? t('evolution.cause_short.' + cause) : cause.replace(/_/g, ' '));
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
      v.short + ' · ' + v.name + (v.streams ? t('evolution.n_streams', {n: v.streams}) : ''))));
  sel.addEventListener('change', () => { history.replaceState(null, '', '?version=' + encodeURIComponent(sel.value)); loadFailures(); });
  picker.replaceChildren(el('h2', {}, t('evolution.diagnose')),
    el('p', {class: 'muted'}, t('evolution.diagnose_hint')),
    el('div', {class: 'row'}, el('label', {for: 'evo-version'}, t('evolution.version')), sel));

  async function loadFailures() {
    let r;
    try { r = await api('GET', '/api/evolution/failures?version=' + encodeURIComponent(sel.value)); } catch (err) { showError(err); return; }
    if (!r.causes.length) {
      failures.replaceChildren(el('div', {class: 'card'}, el('p', {class: 'muted', id: 'no-failures'},
        t(r.gates ? 'evolution.no_failures' : 'evolution.no_gate'))));
      return;
    }
    failures.replaceChildren(...r.causes.map((g) => causeCard(r.version, g)));
  }

  function causeCard(version, g) {
    const items = el('table', {class: 'failures'},
      el('thead', {}, el('tr', {}, ['', 'item', 'suite', 'category', 'score', 'deductions', 'reply'].map((h) => el('th', {}, h && t('evolution.col.' + h))))),
      el('tbody', {}, g.items.map((it) => el('tr', {},
        el('td', {}, el('input', {type: 'checkbox', name: 'items', value: it.item_id, checked: true, 'aria-label': t('evolution.use_item', {id: it.item_id})})),
        el('td', {class: 'mono'}, it.item_id), el('td', {}, it.suite), el('td', {}, it.category),
        el('td', {}, fmt.num(it.score * 100, 0)),
        el('td', {}, el('ul', {class: 'tight'}, it.deductions.map((d) => el('li', {}, d)))),
        el('td', {class: 'reply'}, it.reply)))));
    const form = el('form', {class: 'loop-form'},
      el('label', {}, t('evolution.loop_title'), el('input', {name: 'title', class: 'wide', value: t('evolution.default_title', {cause: causeShort(g.cause), version: fmt.short(version)})})),
      el('label', {}, t('evolution.diagnosis'), el('textarea', {name: 'diagnosis', rows: 2})),
      el('button', {type: 'submit'}, t('evolution.start_loop')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const picked = [...card.querySelectorAll('input[name=items]:checked')].map((i) => i.value);
      try {
        const r = await api('POST', '/api/evolution/loops', {cause: g.cause, title: form.title.value, base_version: version,
          diagnosis: form.diagnosis.value, items: picked});
        toast(t('evolution.loop_started'));
        location.href = '/harnesses?draft=' + encodeURIComponent(r.draft.id) + '&loop=' + encodeURIComponent(r.loop.id);
      } catch (err) { showError(err, form); }
    });
    const card = el('div', {class: 'card cause', dataset: {cause: g.cause}},
      el('h2', {}, causeLabel(g.cause, g.label), ' ', el('span', {class: 'badge bad'}, String(g.count))),
      items, form);
    return card;
  }

  async function loadLoops() {
    const list = await api('GET', '/api/evolution/loops');
    loops.replaceChildren(el('h2', {}, t('evolution.history')), list.length ? el('div', {id: 'loop-list'}, list.map((l) => {
      const badge = {open: 'warn', shipped: 'good', rolled_back: 'bad', abandoned: ''}[l.state] || '';
      const close = el('form', {class: 'row'}, el('input', {name: 'note', placeholder: t('evolution.abandon_note')}),
        el('button', {type: 'submit', class: 'secondary'}, t('evolution.abandon')));
      close.addEventListener('submit', async (e) => {
        e.preventDefault();
        try { await api('POST', '/api/evolution/loops/' + l.id + '/close', {note: close.note.value}); await loadLoops(); } catch (err) { showError(err, close); }
      });
      return el('div', {class: 'loop'},
        el('h3', {}, l.title, ' ', el('span', {class: 'badge ' + badge}, t('evolution.state.' + l.state)), ' ',
          el('span', {class: 'muted'}, t('evolution.loop_info', {cause: causeShort(l.cause), base: fmt.short(l.base_version), by: l.created_by}))),
        el('ol', {class: 'timeline'}, l.events.map((ev) => el('li', {class: 'ev-' + ev.kind},
          el('strong', {}, ev.kind), ' ', el('span', {class: 'muted'}, fmt.time(ev.at) + ' · ' + ev.actor), el('div', {}, ev.summary)))),
        l.state === 'open' ? el('div', {class: 'row'}, el('a', {href: '/harnesses?loop=' + encodeURIComponent(l.id)}, t('evolution.continue')), close) : null);
    })) : el('p', {class: 'muted'}, t('evolution.no_loops')));
  }

  await Promise.all([loadFailures(), loadLoops()]);
});
