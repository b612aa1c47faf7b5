'use strict';
// Live view: one stream's live room. A viewer-chat simulator feeds the
// stream's session; the avatar's answers stream in chunk by chunk (and are
// read aloud by the browser's speech synthesis); every turn shows its hook
// decisions, tool calls and timing; latency P50/P95 and a histogram
// summarise the recent turns. Viewer and model text is untrusted: it is
// inserted with textContent only (LiveHAT.el).
LH.i18n.add({
  en: {
    'live.title': 'LiveHAT · Live view', 'live.heading': 'Live view',
    'live.no_stream': 'No stream yet: create one on the Streams page.', 'live.stream': 'Stream',
    'live.unmute': 'Unmute voice', 'live.mute': 'Mute voice', 'live.stop': 'Stop', 'live.go_on_air': 'Go on air',
    'live.on_air': 'on air', 'live.off_air': 'off air', 'live.now_on_air': 'On air: the strategy runs', 'live.stopped': 'Stopped',
    'live.viewer': 'Viewer', 'live.viewer_n': 'viewer {n}', 'live.type_as_viewer': 'Type as the viewer… (中文 or English)',
    'live.send': 'Send', 'live.viewer_chat': 'Viewer chat', 'live.avatar': 'Avatar', 'live.latency': 'Latency (recent turns)',
    'live.p50_total': 'P50 total', 'live.p95_total': 'P95 total', 'live.p50_first': 'P50 first chunk', 'live.turns': 'turns',
    'live.queue_depth': 'queue depth', 'live.merged': 'merged', 'live.shed': 'shed', 'live.stale': 'stale',
    'live.harness_short': 'harness {v}', 'live.traces': 'Turns: hook decisions and tool calls', 'live.strategy': 'strategy',
    'live.retry': 'retry: ', 'live.timing': 'total {total} · first chunk {first} · model {model} · tools {tools} · hooks {hooks} · queue {queue} · harness {harness}',
    'live.via_api': ' · via API', 'live.no_speech': 'no speech synthesis in this browser', 'live.voices': 'voices: zh {zh} · en {en}',
    'live.arms': ' · experiment arms {arms}', 'live.not_answered': '(not answered: {reason})', 'live.denied': 'denied',
    'live.arm': 'arm {arm}', 'live.host': 'host', 'live.harness_switched': 'Harness switched to {v} from the next turn',
    'live.session_closed': 'session closed ({reason})',
    'live.outcome.replied': 'replied', 'live.outcome.denied': 'denied', 'live.outcome.safe_line': 'safe line', 'live.outcome.cancelled': 'cancelled',
    'live.action.allow': 'allow', 'live.action.deny': 'deny', 'live.action.retry': 'retry', 'live.action.rewrite': 'rewrite',
  },
  'zh-CN': {
    'live.title': 'LiveHAT · 直播预览', 'live.heading': '直播预览',
    'live.no_stream': '还没有直播间：请先在“直播间”页面创建。', 'live.stream': '直播间',
    'live.unmute': '打开语音', 'live.mute': '静音', 'live.stop': '下播', 'live.go_on_air': '开播',
    'live.on_air': '直播中', 'live.off_air': '未开播', 'live.now_on_air': '已开播：营销策略开始运行', 'live.stopped': '已下播',
    'live.viewer': '观众', 'live.viewer_n': '观众 {n}', 'live.type_as_viewer': '以观众身份输入…（中文或英文）',
    'live.send': '发送', 'live.viewer_chat': '观众弹幕', 'live.avatar': '数字人', 'live.latency': '延迟（最近的回合）',
    'live.p50_total': 'P50 总耗时', 'live.p95_total': 'P95 总耗时', 'live.p50_first': 'P50 首段', 'live.turns': '回合',
    'live.queue_depth': '队列长度', 'live.merged': '已合并', 'live.shed': '已丢弃', 'live.stale': '已过期',
    'live.harness_short': 'harness {v}', 'live.traces': '回合：钩子决策和工具调用', 'live.strategy': '策略',
    'live.retry': '重试：', 'live.timing': '总计 {total} · 首段 {first} · 模型 {model} · 工具 {tools} · 钩子 {hooks} · 排队 {queue} · harness {harness}',
    'live.via_api': ' · 来自 API', 'live.no_speech': '此浏览器不支持语音合成', 'live.voices': '语音：中文 {zh} · 英文 {en}',
    'live.arms': ' · 实验组 {arms}', 'live.not_answered': '（未回答：{reason}）', 'live.denied': '已拒绝',
    'live.arm': '组 {arm}', 'live.host': '主播', 'live.harness_switched': '从下一回合起切换到 harness {v}',
    'live.session_closed': '会话已关闭（{reason}）',
    'live.outcome.replied': '已回答', 'live.outcome.denied': '已拒绝', 'live.outcome.safe_line': '安全话术', 'live.outcome.cancelled': '已取消',
    'live.action.allow': '通过', 'live.action.deny': '拒绝', 'live.action.retry': '重试', 'live.action.rewrite': '改写',
  },
});

LiveHAT.page(async (me) => {
  const {el, api, stream, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const streams = await api('GET', '/api/streams');
  if (!streams.length) {
    main.append(el('p', {class: 'muted'}, t('live.no_stream')));
    return;
  }
  const params = new URLSearchParams(location.search);
  let current = streams.find((s) => s.id === params.get('stream')) || streams[0];
  if (params.get('stream') !== current.id) history.replaceState(null, '', '/live?stream=' + encodeURIComponent(current.id));

  // --- header: stream picker, on-air switch, status, mute ---
  const picker = el('select', {id: 'stream-picker', 'aria-label': t('live.stream'),
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
  function renderMute() { muteButton.textContent = t(muted ? 'live.unmute' : 'live.mute'); }
  function renderAir() {
    airButton.textContent = t(current.on_air ? 'live.stop' : 'live.go_on_air');
    airButton.className = current.on_air ? 'on-air' : '';
    airBadge.textContent = t(current.on_air ? 'live.on_air' : 'live.off_air');
    airBadge.className = 'badge ' + (current.on_air ? 'bad' : '');
  }
  renderMute(); renderAir();

  // Going on air goes through the go-live checklist (golive.js), shown
  // under the bar: what blocks, the risks to accept, then the server's
  // check. Stopping is immediate.
  const checklistSlot = el('div', {id: 'golive-slot'});
  function closeChecklist() { checklistSlot.replaceChildren(); }
  async function toggleAir() {
    airButton.disabled = true;
    try {
      if (current.on_air) {
        current = await api('POST', '/api/streams/' + current.id + '/live/air', {on_air: false});
        renderAir();
        toast(t('live.stopped'));
        return;
      }
      checklistSlot.replaceChildren(await GoLive.card(current.id, {pageLink: true, onClose: closeChecklist, onChange: (st) => {
        current = st;
        renderAir();
        closeChecklist();
        toast(t('live.now_on_air'));
      }}));
      checklistSlot.scrollIntoView({block: 'nearest'});
    } catch (err) { showError(err); } finally { airButton.disabled = false; }
  }

  main.append(el('div', {class: 'card live-bar'}, el('label', {for: 'stream-picker'}, t('live.stream')), picker, airButton, airBadge,
    sessionInfo, el('span', {class: 'spacer'}), voiceInfo, muteButton), checklistSlot);

  // --- viewer chat simulator ---
  const chatLog = el('div', {id: 'chat-log', 'aria-live': 'polite'});
  const viewerSelect = el('select', {id: 'viewer-id', name: 'viewer', 'aria-label': t('live.viewer')},
    [1, 2, 3, 4, 5].map((n) => el('option', {value: 'viewer' + n}, t('live.viewer_n', {n}))));
  const textInput = el('input', {id: 'viewer-text', name: 'text', placeholder: t('live.type_as_viewer'), autocomplete: 'off', maxlength: 2000});
  const form = el('form', {id: 'chat-form', class: 'row'}, viewerSelect, textInput, el('button', {id: 'send', type: 'submit'}, t('live.send')));
  form.addEventListener('submit', (e) => { e.preventDefault(); send(textInput.value); });
  const quick = el('div', {class: 'quick', id: 'quick'});
  const chatCard = el('div', {class: 'card'}, el('h2', {}, t('live.viewer_chat')), chatLog, quick, form);

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
  const avatarCard = el('div', {class: 'card'}, el('h2', {}, t('live.avatar')), avatar);

  // --- stats ---
  const metrics = el('div', {class: 'metrics', id: 'stats'});
  const histogram = el('div', {id: 'histogram'});
  const statsCard = el('div', {class: 'card'}, el('h2', {}, t('live.latency')), metrics, histogram);
  let statsTimer = null;
  async function loadStats() {
    try {
      const s = await api('GET', '/api/streams/' + current.id + '/live/stats');
      const q = s.queue || {};
      const item = (label, value, id) => el('div', {id}, el('b', {}, value), label);
      metrics.replaceChildren(
        item(t('live.p50_total'), fmt.ms(s.total.p50_ms), 'p50'), item(t('live.p95_total'), fmt.ms(s.total.p95_ms), 'p95'),
        item(t('live.p50_first'), fmt.ms(s.first_chunk.p50_ms)), item(t('live.turns'), LH.fmt.number(s.turns), 'turn-count'),
        item(t('live.queue_depth'), LH.fmt.number(q.queued || 0)), item(t('live.merged'), LH.fmt.number(q.merged || 0)),
        item(t('live.shed'), LH.fmt.number(q.shed || 0)), item(t('live.stale'), LH.fmt.number(q.stale || 0)));
      histogram.replaceChildren(Charts.histogram(s.values_ms || [], {unit: 'ms', bins: 12}));
      sessionInfo.textContent = (s.model ? s.model + ' · ' : '') + t('live.harness_short', {v: fmt.short(s.harness_version)});
    } catch (err) { if (err.status !== 404) showError(err); }
  }
  function scheduleStats() { clearTimeout(statsTimer); statsTimer = setTimeout(loadStats, 300); }

  // --- traces ---
  const traces = el('div', {id: 'traces'});
  const tracesCard = el('div', {class: 'card'}, el('h2', {}, t('live.traces')), traces);
  function short(s, n) { s = s == null ? '' : String(s); return s.length > n ? s.slice(0, n) + '…' : s; }
  function traceView(turn) {
    const t = LH.t;
    const who = turn.event === 'narration_tick' ? t('live.strategy') : (turn.viewers || []).join(', ');
    // A code this page has no text for (a newer runtime's) shows as sent.
    const word = (prefix, code) => (LH.i18n.has(prefix + code) ? t(prefix + code) : code);
    const outcome = el('span', {class: 'badge ' + ({replied: 'good', safe_line: 'warn', denied: 'bad'}[turn.outcome] || ''), dataset: {outcome: turn.outcome}},
      word('live.outcome.', turn.outcome));
    const hooks = el('table', {class: 'hooks'}, el('tbody', {}, (turn.hooks || []).map((h) => el('tr', {},
      el('td', {}, h.name), el('td', {class: 'muted'}, h.event),
      el('td', {}, el('span', {class: 'badge ' + ({allow: 'good', deny: 'bad', retry: 'warn', rewrite: 'warn'}[h.action] || '')}, word('live.action.', h.action))),
      el('td', {}, short(h.reason || h.feedback || h.error || h.text || h.context || '', 200)), el('td', {class: 'muted'}, fmt.ms(h.took_ms))))));
    const tools = el('table', {class: 'tools'}, el('tbody', {}, (turn.tools || []).map((c) => el('tr', {class: c.error ? 'bad' : ''},
      el('td', {}, (c.kind === 'skill' ? 'skill ' : '') + c.name), el('td', {class: 'args'}, short(JSON.stringify(c.arguments || {}), 200)),
      el('td', {class: 'out'}, short(c.error || c.output, 300)), el('td', {class: 'muted'}, fmt.ms(c.took_ms))))));
    const tm = turn.timing || {};
    return el('div', {class: 'trace', dataset: {turn: turn.id}},
      el('h3', {}, outcome, ' ', who ? who + ': ' : '', turn.input),
      el('div', {class: 'reply'}, '→ ', turn.reply || (turn.reason ? '(' + turn.reason + ')' : '')),
      (turn.hooks || []).length ? hooks : null, (turn.tools || []).length ? tools : null,
      (turn.retries || []).map((r) => el('div', {class: 'small warn'}, t('live.retry'), r)),
      el('div', {class: 'muted small'}, t('live.timing', {total: fmt.ms(tm.total_ms), first: fmt.ms(tm.first_chunk_ms),
        model: fmt.ms(tm.model_ms), tools: fmt.ms(tm.tools_ms), hooks: fmt.ms(tm.hooks_ms), queue: fmt.ms(tm.queue_ms),
        harness: fmt.short(turn.harness_version)}), turn.source === 'api' ? t('live.via_api') : ''));
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
    if (!synth) { voiceInfo.textContent = t('live.no_speech'); return; }
    const vs = voices();
    const has = (p) => vs.some((v) => v.lang.toLowerCase().startsWith(p));
    voiceInfo.textContent = t('live.voices', {zh: has('zh') ? '✓' : '–', en: has('en') ? '✓' : '–'});
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
        sessionInfo.textContent = (d.model || '') + ' · ' + t('live.harness_short', {v: fmt.short(d.harness_version)}) +
          (d.arms ? t('live.arms', {arms: d.arms.map((a) => a.arm).join(', ')}) : '');
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
        if (d.outcome === 'denied') box.append(el('span', {class: 'muted'}, t('live.not_answered', {reason: d.reason || t('live.denied')})));
        if (d.event === 'narration_tick') box.prepend(el('span', {class: 'badge tag'}, t('live.strategy')));
        if (d.arm && !box.querySelector('.arm')) box.prepend(el('span', {class: 'badge tag arm'}, t('live.arm', {arm: d.arm})));
        if (d.reply) chatLine(t('live.host'), d.reply, 'host');
        addTrace(d);
        scheduleStats();
        break;
      }
      case 'dropped':
        chatLine(d.viewer, d.text + ' (' + d.reason + ')', 'dropped');
        scheduleStats();
        break;
      case 'harness':
        toast(t('live.harness_switched', {v: fmt.short(d.harness_version)}));
        sessionInfo.textContent = t('live.harness_short', {v: fmt.short(d.harness_version)});
        break;
      case 'air':
        current.on_air = d.on_air; renderAir();
        if (d.on_air) closeChecklist();
        break;
      case 'closed':
        sessionInfo.textContent = t('live.session_closed', {reason: d.reason});
        break;
    }
  }, ['session', 'message', 'chunk', 'turn', 'dropped', 'harness', 'air', 'closed']);
});
