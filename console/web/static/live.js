'use strict';
// Live view: one stream's live room. A viewer-chat simulator feeds the
// stream's session; the avatar's answers stream in chunk by chunk (and are
// read aloud by the browser's speech synthesis); every turn shows its hook
// decisions, tool calls and timing; latency P50/P95 and a histogram
// summarise the recent turns. Viewer and model text is untrusted: it is
// inserted with textContent only (LiveHAT.el).
LiveHAT.page(async (me) => {
  const {el, api, stream, toast, showError, fmt} = LiveHAT;
  const main = document.getElementById('main');
  const streams = await api('GET', '/api/streams');
  if (!streams.length) {
    main.append(el('p', {class: 'muted'}, 'No stream yet: create one on the Streams page.'));
    return;
  }
  const params = new URLSearchParams(location.search);
  let current = streams.find((s) => s.id === params.get('stream')) || streams[0];
  if (params.get('stream') !== current.id) history.replaceState(null, '', '/live?stream=' + encodeURIComponent(current.id));

  // --- header: stream picker, on-air switch, status, mute ---
  const picker = el('select', {id: 'stream-picker', 'aria-label': 'Stream',
    onchange: () => { location.href = '/live?stream=' + encodeURIComponent(picker.value); }},
  streams.map((s) => el('option', {value: s.id, selected: s.id === current.id}, s.name)));
  const airButton = el('button', {id: 'air-toggle', type: 'button', onclick: toggleAir});
  const airBadge = el('span', {id: 'air-state', class: 'badge'});
  const sessionInfo = el('span', {id: 'session-info', class: 'muted small'});
  let muted = localStorage.getItem('livehat.mute') === '1';
  const muteButton = el('button', {id: 'mute', type: 'button', class: 'secondary', onclick: () => {
    muted = !muted;
    localStorage.setItem('livehat.mute', muted ? '1' : '0');
    if (muted && 'speechSynthesis' in window) speechSynthesis.cancel();
    renderMute();
  }});
  const voiceInfo = el('span', {id: 'voices', class: 'muted small'});
  function renderMute() { muteButton.textContent = muted ? 'Unmute voice' : 'Mute voice'; }
  function renderAir() {
    airButton.textContent = current.on_air ? 'Stop' : 'Go on air';
    airButton.className = current.on_air ? 'on-air' : '';
    airBadge.textContent = current.on_air ? 'on air' : 'off air';
    airBadge.className = 'badge ' + (current.on_air ? 'bad' : '');
  }
  renderMute(); renderAir();
  main.append(el('div', {class: 'card live-bar'}, el('label', {for: 'stream-picker'}, 'Stream'), picker, airButton, airBadge,
    sessionInfo, el('span', {class: 'spacer'}), voiceInfo, muteButton));

  async function toggleAir() {
    airButton.disabled = true;
    try {
      current = await api('POST', '/api/streams/' + current.id + '/live/air', {on_air: !current.on_air});
      renderAir();
      toast(current.on_air ? 'On air: the strategy runs' : 'Stopped');
    } catch (err) { showError(err); } finally { airButton.disabled = false; }
  }

  // --- viewer chat simulator ---
  const chatLog = el('div', {id: 'chat-log', 'aria-live': 'polite'});
  const viewerSelect = el('select', {id: 'viewer-id', name: 'viewer', 'aria-label': 'Viewer'},
    [1, 2, 3, 4, 5].map((n) => el('option', {value: 'viewer' + n}, 'viewer ' + n)));
  const textInput = el('input', {id: 'viewer-text', name: 'text', placeholder: 'Type as the viewer… (中文 or English)', autocomplete: 'off', maxlength: 2000});
  const form = el('form', {id: 'chat-form', class: 'row'}, viewerSelect, textInput, el('button', {id: 'send', type: 'submit'}, 'Send'));
  form.addEventListener('submit', (e) => { e.preventDefault(); send(textInput.value); });
  const quick = el('div', {class: 'quick', id: 'quick'});
  const chatCard = el('div', {class: 'card'}, el('h2', {}, 'Viewer chat'), chatLog, quick, form);

  async function send(text) {
    if (!text.trim()) return;
    form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
    try {
      await api('POST', '/api/streams/' + current.id + '/live/messages',
        {messages: [{viewer: viewerSelect.value, text, at: new Date().toISOString()}]});
      textInput.value = '';
    } catch (err) {
      if (err.field && err.field.endsWith('.text')) textInput.classList.add('invalid');
      showError(err, form);
    }
  }

  // Quick questions about the stream's own items, in zh and en.
  try {
    const {catalog} = await api('GET', '/api/streams/' + current.id + '/catalog');
    const items = catalog.products || [];
    const en = (p) => (p.aliases || []).find((a) => /^[\x20-\x7e]+$/.test(a)) || p.name;
    const a = items[0], b = items[1] || items[0];
    const qs = a ? [
      ['zh', a.name + '多少钱？'], ['zh', a.name + '有优惠券吗？'], ['zh', b.name + '还有货吗？'], ['zh', a.name + '的链接在哪？'], ['zh', '主播好漂亮！'],
      ['en', 'How much is the ' + en(a) + '?'], ['en', 'Is there a coupon for the ' + en(a) + '?'], ['en', 'Is the ' + en(b) + ' in stock?'],
      ['en', 'How long does shipping take for the ' + en(a) + '?'], ['en', 'Hi, first time here!'],
    ] : [['zh', '主播好漂亮！'], ['en', 'Hi, first time here!']];
    quick.append(...qs.map(([lang, q]) => el('button', {type: 'button', class: 'secondary', lang: lang === 'zh' ? 'zh-CN' : 'en', onclick: () => send(q)}, q)));
  } catch (err) { showError(err); }

  // --- avatar answers ---
  const avatar = el('div', {id: 'avatar', 'aria-live': 'polite'});
  const answers = new Map(); // turn id → element
  function answerFor(turn) {
    let box = answers.get(turn);
    if (!box) {
      box = el('div', {class: 'answer', dataset: {turn}});
      answers.set(turn, box);
      avatar.append(box);
      avatar.scrollTop = avatar.scrollHeight;
    }
    return box;
  }
  const avatarCard = el('div', {class: 'card'}, el('h2', {}, 'Avatar'), avatar);

  // --- stats ---
  const metrics = el('div', {class: 'metrics', id: 'stats'});
  const histogram = el('div', {id: 'histogram'});
  const statsCard = el('div', {class: 'card'}, el('h2', {}, 'Latency (recent turns)'), metrics, histogram);
  let statsTimer = null;
  async function loadStats() {
    try {
      const s = await api('GET', '/api/streams/' + current.id + '/live/stats');
      const q = s.queue || {};
      const item = (label, value, id) => el('div', {id}, el('b', {}, value), label);
      metrics.replaceChildren(
        item('P50 total', fmt.ms(s.total.p50_ms), 'p50'), item('P95 total', fmt.ms(s.total.p95_ms), 'p95'),
        item('P50 first chunk', fmt.ms(s.first_chunk.p50_ms)), item('turns', String(s.turns), 'turn-count'),
        item('queue depth', String(q.queued || 0)), item('merged', String(q.merged || 0)), item('shed', String(q.shed || 0)),
        item('stale', String(q.stale || 0)));
      histogram.replaceChildren(Charts.histogram(s.values_ms || [], {unit: 'ms', bins: 12}));
      sessionInfo.textContent = (s.model ? s.model + ' · ' : '') + 'harness ' + fmt.short(s.harness_version);
    } catch (err) { if (err.status !== 404) showError(err); }
  }
  function scheduleStats() { clearTimeout(statsTimer); statsTimer = setTimeout(loadStats, 300); }

  // --- traces ---
  const traces = el('div', {id: 'traces'});
  const tracesCard = el('div', {class: 'card'}, el('h2', {}, 'Turns: hook decisions and tool calls'), traces);
  function short(s, n) { s = s == null ? '' : String(s); return s.length > n ? s.slice(0, n) + '…' : s; }
  function traceView(t) {
    const who = t.event === 'narration_tick' ? 'strategy' : (t.viewers || []).join(', ');
    const outcome = el('span', {class: 'badge ' + ({replied: 'good', safe_line: 'warn', denied: 'bad'}[t.outcome] || '')}, t.outcome);
    const hooks = el('table', {class: 'hooks'}, el('tbody', {}, (t.hooks || []).map((h) => el('tr', {},
      el('td', {}, h.name), el('td', {class: 'muted'}, h.event),
      el('td', {}, el('span', {class: 'badge ' + ({allow: 'good', deny: 'bad', retry: 'warn', rewrite: 'warn'}[h.action] || '')}, h.action)),
      el('td', {}, short(h.reason || h.feedback || h.error || h.text || h.context || '', 200)), el('td', {class: 'muted'}, fmt.ms(h.took_ms))))));
    const tools = el('table', {class: 'tools'}, el('tbody', {}, (t.tools || []).map((c) => el('tr', {class: c.error ? 'bad' : ''},
      el('td', {}, (c.kind === 'skill' ? 'skill ' : '') + c.name), el('td', {class: 'args'}, short(JSON.stringify(c.arguments || {}), 200)),
      el('td', {class: 'out'}, short(c.error || c.output, 300)), el('td', {class: 'muted'}, fmt.ms(c.took_ms))))));
    const tm = t.timing || {};
    return el('div', {class: 'trace', dataset: {turn: t.id}},
      el('h3', {}, outcome, ' ', who ? who + ': ' : '', t.input),
      el('div', {class: 'reply'}, '→ ', t.reply || (t.reason ? '(' + t.reason + ')' : '')),
      (t.hooks || []).length ? hooks : null, (t.tools || []).length ? tools : null,
      (t.retries || []).map((r) => el('div', {class: 'small warn'}, 'retry: ', r)),
      el('div', {class: 'muted small'}, 'total ', fmt.ms(tm.total_ms), ' · first chunk ', fmt.ms(tm.first_chunk_ms),
        ' · model ', fmt.ms(tm.model_ms), ' · tools ', fmt.ms(tm.tools_ms), ' · hooks ', fmt.ms(tm.hooks_ms),
        ' · queue ', fmt.ms(tm.queue_ms), ' · harness ', fmt.short(t.harness_version), t.source === 'api' ? ' · via API' : ''));
  }
  function addTrace(t) {
    const old = traces.querySelector('[data-turn="' + CSS.escape(t.id) + '"]');
    const view = traceView(t);
    if (old) old.replaceWith(view); else traces.prepend(view);
  }

  main.append(el('div', {class: 'live-grid'}, el('div', {}, chatCard, statsCard), el('div', {}, avatarCard, tracesCard)));

  // --- speech ---
  const synth = 'speechSynthesis' in window ? window.speechSynthesis : null;
  function voices() { return synth ? synth.getVoices() : []; }
  function renderVoices() {
    if (!synth) { voiceInfo.textContent = 'no speech synthesis in this browser'; return; }
    const vs = voices();
    const has = (p) => vs.some((v) => v.lang.toLowerCase().startsWith(p));
    voiceInfo.textContent = 'voices: zh ' + (has('zh') ? '✓' : '–') + ' · en ' + (has('en') ? '✓' : '–');
  }
  if (synth) synth.addEventListener('voiceschanged', renderVoices);
  renderVoices();
  function speak(text, lang) {
    if (!synth || muted) return;
    const u = new SpeechSynthesisUtterance(text);
    u.lang = lang === 'zh' ? 'zh-CN' : 'en-US';
    const v = voices().find((x) => x.lang.toLowerCase().startsWith(lang === 'zh' ? 'zh' : 'en'));
    if (v) u.voice = v;
    synth.speak(u);
  }

  // --- chat log ---
  function chatLine(who, text, cls) {
    chatLog.append(el('div', {class: 'chat-line ' + (cls || '')}, el('span', {class: 'who'}, who), el('span', {class: 'text'}, text)));
    while (chatLog.childNodes.length > 300) chatLog.firstChild.remove();
    chatLog.scrollTop = chatLog.scrollHeight;
  }

  // --- history, then the live feed ---
  try {
    const past = await api('GET', '/api/streams/' + current.id + '/live/turns?limit=20');
    past.reverse().forEach(addTrace);
  } catch (err) { showError(err); }
  loadStats();

  stream('/api/streams/' + current.id + '/live/events', (type, d) => {
    switch (type) {
      case 'session':
        sessionInfo.textContent = (d.model || '') + ' · harness ' + fmt.short(d.harness_version) +
          (d.arms ? ' · experiment arms ' + d.arms.map((a) => a.arm).join(', ') : '');
        if (typeof d.on_air === 'boolean' && d.on_air !== current.on_air) { current.on_air = d.on_air; renderAir(); }
        break;
      case 'message':
        chatLine(d.viewer, d.text);
        break;
      case 'chunk': {
        const box = answerFor(d.turn);
        // The avatar acts (shows the item, points at the link) as it starts speaking.
        (d.actions || []).forEach((a) => box.append(el('span', {class: 'badge tag action'}, a.kind + (a.item_id ? ' ' + a.item_id : ''))));
        box.append(el('span', {class: 'chunk'}, d.text));
        avatar.scrollTop = avatar.scrollHeight;
        speak(d.text, d.lang);
        break;
      }
      case 'turn': {
        const box = answerFor(d.id);
        box.classList.add(d.outcome);
        if (d.outcome === 'denied') box.append(el('span', {class: 'muted'}, '(not answered: ' + (d.reason || 'denied') + ')'));
        if (d.event === 'narration_tick') box.prepend(el('span', {class: 'badge tag'}, 'strategy'));
        if (d.arm && !box.querySelector('.arm')) box.prepend(el('span', {class: 'badge tag arm'}, 'arm ' + d.arm));
        if (d.reply) chatLine('host', d.reply, 'host');
        addTrace(d);
        scheduleStats();
        break;
      }
      case 'dropped':
        chatLine(d.viewer, d.text + ' (' + d.reason + ')', 'dropped');
        scheduleStats();
        break;
      case 'harness':
        toast('Harness switched to ' + fmt.short(d.harness_version) + ' from the next turn');
        sessionInfo.textContent = 'harness ' + fmt.short(d.harness_version);
        break;
      case 'air':
        current.on_air = d.on_air; renderAir();
        break;
      case 'closed':
        sessionInfo.textContent = 'session closed (' + d.reason + ')';
        break;
    }
  }, ['session', 'message', 'chunk', 'turn', 'dropped', 'harness', 'air', 'closed']);
});
