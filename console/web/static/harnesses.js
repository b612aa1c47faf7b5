'use strict';
// Harnesses: versions (immutable, content-hashed), drafts with an editor
// (validate, diff and HSA preview side by side), the release gate with its
// per-suite and per-category regressions, publishing to streams or as a
// canary, rollback, and the compatibility tables: models × versions, and
// versions × installed plugins with the streams on each.
// Every harness text is inserted with textContent (LiveHAT.el).
LH.i18n.add({
  en: {
    'harnesses.n_streams': ' ({n} streams)', 'harnesses.summary': '{name} · {skills} skills · {tools} tools · {hooks} hooks · {short}',
    'harnesses.confirm_delete_draft': 'Delete draft {name}?', 'harnesses.no_steps': '(no steps)',
    'harnesses.regressions': '{n} regressions beyond {tolerance} points: ', 'harnesses.no_regression': 'No regression beyond {tolerance} points.',
    'harnesses.publish_version': 'Publish {v}…', 'harnesses.gate_state': 'Gate {state} ({at})',
    'harnesses.published': 'Published {v} to {n} streams; each switches at its next turn', 'harnesses.override_badge': 'override: {reason}',
    'harnesses.rolled_back_by': 'by {by}', 'harnesses.confirm_rollback': 'Roll back {v} on {n} streams?',
    'harnesses.rolled_back': 'Rolled back: {n} streams restored', 'harnesses.skipped': ', {n} skipped',
    'harnesses.gate_hint': 'Runs the live-room suites and the streams’ recent questions with the model that will serve, under the candidate and the baseline, and shows what regressed. The expert only checks that the harness itself works; no release counts it.',
    'harnesses.gate_stream_hint': 'A stream served by its own model server needs a gate run for it: choose the stream, and the gate measures that server against the version the stream runs, on its own recent questions.',
    'harnesses.gate_stream': 'Stream', 'harnesses.all_streams': 'all streams (the organisation’s model)',
    'harnesses.stream_served_by': 'served by {model}', 'harnesses.stream_own_server': 'served by its own model server {model}',
    'harnesses.gate_for_stream': 'for stream {name}',
    'harnesses.title': 'LiveHAT · Harnesses', 'harnesses.heading': 'Harnesses',
    'harnesses.old_version': 'Old version',
    'harnesses.new_version': 'New version',
    'harnesses.versions': 'Versions',
    'harnesses.version': 'Version',
    'harnesses.name': 'Name',
    'harnesses.parent': 'Parent',
    'harnesses.author': 'Author',
    'harnesses.created': 'Created',
    'harnesses.streams': 'Streams',
    'harnesses.notes': 'Notes',
    'harnesses.edit_as_draft': 'Edit as draft',
    'harnesses.gate': 'Gate',
    'harnesses.publish': 'Publish',
    'harnesses.compare': 'Compare two versions',
    'harnesses.diff': 'Diff',
    'harnesses.no_drafts': 'No drafts. "Edit as draft" on a version opens one.',
    'harnesses.drafts': 'Drafts',
    'harnesses.base': 'Base',
    'harnesses.revision': 'Revision',
    'harnesses.committed_as': 'Committed as',
    'harnesses.open': 'Open',
    'harnesses.no_changes': 'No changes.',
    'harnesses.path': 'Path',
    'harnesses.old': 'Old',
    'harnesses.new': 'New',
    'harnesses.draft_opened': 'Draft opened',
    'harnesses.format': 'Format',
    'harnesses.document': 'Document',
    'harnesses.notes_hint': 'Notes (what changed and why)',
    'harnesses.revision_prefix': 'Revision ',
    'harnesses.base_infix': ' · base ',
    'harnesses.last_committed': ' · last committed as ',
    'harnesses.evolution_loop': ' · evolution loop',
    'harnesses.save': 'Save',
    'harnesses.validate': 'Validate',
    'harnesses.diff_base': 'Diff against base',
    'harnesses.commit': 'Commit version',
    'harnesses.delete_draft': 'Delete draft',
    'harnesses.pool': 'Pool',
    'harnesses.train_pool': 'train pool',
    'harnesses.heldout_pool': 'held-out pool',
    'harnesses.seed': 'Seed',
    'harnesses.preview_hsa': 'Preview HSA variant',
    'harnesses.saved_infix': ' · saved ',
    'harnesses.saved': 'Saved',
    'harnesses.draft_conflict': 'Someone else saved this draft: your text is still in the editor; reload the draft to see theirs, then apply your edit again.',
    'harnesses.valid': 'Valid',
    'harnesses.changes_from': 'Changes from ',
    'harnesses.committed_version': 'Committed version ',
    'harnesses.draft_prefix': 'Draft: ',
    'harnesses.hsa_preview': 'HSA preview',
    'harnesses.hsa_hint': 'A family and a seed give a task-preserving variant of this draft and the mapping of gold calls; the same seed always gives the same variant.',
    'harnesses.problems': 'Problems',
    'harnesses.families': 'Families: ',
    'harnesses.variant_infix': ' · variant ',
    'harnesses.base_prompt': 'Base prompt ',
    'harnesses.variant_prompt': 'Variant prompt',
    'harnesses.gold_mapping': 'Gold mapping',
    'harnesses.base_call': 'Base call',
    'harnesses.variant_call': 'Variant call',
    'harnesses.no_gold': 'No gold calls given: the mapping steps below say how calls change.',
    'harnesses.mapping_steps': 'Mapping steps',
    'harnesses.harness_changes': 'Harness changes',
    'harnesses.candidate': 'Candidate',
    'harnesses.baseline': 'Baseline',
    'harnesses.items_per_suite': 'Items per suite',
    'harnesses.tolerance': 'Tolerance (points)',
    'harnesses.model': 'Model',
    'harnesses.serving_model': 'the serving model',
    'harnesses.checkpoint_with': 'a checkpoint released with it',
    'harnesses.expert': 'the expert (harness sanity check)',
    'harnesses.checkpoint': 'Checkpoint',
    'harnesses.replayed': 'Replayed questions',
    'harnesses.run_gate': 'Run gate',
    'harnesses.release_gate': 'Release gate',
    'harnesses.recent_gates': 'Recent gates',
    'harnesses.started': 'Started',
    'harnesses.state': 'State',
    'harnesses.show': 'Show',
    'harnesses.no_gates': 'No gates yet.',
    'harnesses.cancel': 'Cancel',
    'harnesses.starting': 'starting…',
    'harnesses.sanity': 'sanity check',
    'harnesses.suite_category': 'Suite / category',
    'harnesses.delta_ci': 'Δ 95% interval',
    'harnesses.overall': 'Overall',
    'harnesses.failures_by_cause': 'Candidate failures by cause: ',
    'harnesses.open_evolution': 'open in Evolution',
    'harnesses.chosen_streams': ' chosen streams',
    'harnesses.canary': ' canary',
    'harnesses.canary_percent': 'Canary percent',
    'harnesses.pct_streams': '% of streams',
    'harnesses.latest_gate': 'The latest finished gate of this version with each stream’s model is used (a stream with its own model server needs a gate run for it); without one, give an override reason.',
    'harnesses.override_reason': 'Override reason (recorded; needed without a gate or despite regressions)',
    'harnesses.releases': 'Releases',
    'harnesses.when': 'When',
    'harnesses.by': 'By',
    'harnesses.roll_back': 'Roll back',
    'harnesses.no_releases': 'No releases.',
    'harnesses.compat_plugins': 'Compatibility: harness versions × installed plugins',
    'harnesses.installed': 'Installed: ',
    'harnesses.plugins_serve': 'Plugins serve it',
    'harnesses.requested': 'Requested by merchants: ',
    'harnesses.compat_models': 'Compatibility: models × harness versions',
    'harnesses.scores_hint': 'Scores appear here once a gate has run.',
    'harnesses.choose_publish': 'Choose "Publish" on a version or after a gate.',
    'harnesses.yes': 'yes',
    'harnesses.no': 'no',
  },
  'zh-CN': {
    'harnesses.n_streams': '（{n} 个直播间）', 'harnesses.summary': '{name} · {skills} 个技能 · {tools} 个工具 · {hooks} 个钩子 · {short}',
    'harnesses.confirm_delete_draft': '删除草稿 {name}？', 'harnesses.no_steps': '（无步骤）',
    'harnesses.regressions': '{n} 项回退超过 {tolerance} 分：', 'harnesses.no_regression': '没有超过 {tolerance} 分的回退。',
    'harnesses.publish_version': '发布 {v}…', 'harnesses.gate_state': '闸门 {state}（{at}）',
    'harnesses.published': '已发布 {v} 到 {n} 个直播间；各直播间在下一回合切换', 'harnesses.override_badge': '强制：{reason}',
    'harnesses.rolled_back_by': '由 {by} 回滚', 'harnesses.confirm_rollback': '在 {n} 个直播间回滚 {v}？',
    'harnesses.rolled_back': '已回滚：恢复了 {n} 个直播间', 'harnesses.skipped': '，跳过 {n} 个',
    'harnesses.gate_hint': '用将要服务的模型，在候选版本和基线版本下运行直播间评测集和各直播间最近的问题，并显示回退的部分。专家只检查 harness 本身能否运行；不作为任何发布的依据。',
    'harnesses.gate_stream_hint': '由自己的模型服务器服务的直播间需要单独运行闸门：选择该直播间，闸门会用它的服务器、以它当前运行的版本为基线、用它自己最近的问题来评测。',
    'harnesses.gate_stream': '直播间', 'harnesses.all_streams': '所有直播间（组织的服务模型）',
    'harnesses.stream_served_by': '由 {model} 服务', 'harnesses.stream_own_server': '由自己的模型服务器 {model} 服务',
    'harnesses.gate_for_stream': '直播间 {name}',
    'harnesses.title': 'LiveHAT · Harness 版本', 'harnesses.heading': 'Harness 版本',
    'harnesses.old_version': '旧版本',
    'harnesses.new_version': '新版本',
    'harnesses.versions': '版本',
    'harnesses.version': '版本',
    'harnesses.name': '名称',
    'harnesses.parent': '父版本',
    'harnesses.author': '作者',
    'harnesses.created': '创建时间',
    'harnesses.streams': '直播间',
    'harnesses.notes': '说明',
    'harnesses.edit_as_draft': '编辑为草稿',
    'harnesses.gate': '闸门',
    'harnesses.publish': '发布',
    'harnesses.compare': '比较两个版本',
    'harnesses.diff': '对比',
    'harnesses.no_drafts': '没有草稿。在版本上点击“编辑为草稿”即可打开。',
    'harnesses.drafts': '草稿',
    'harnesses.base': '基础版本',
    'harnesses.revision': '修订',
    'harnesses.committed_as': '提交为',
    'harnesses.open': '打开',
    'harnesses.no_changes': '没有变更。',
    'harnesses.path': '路径',
    'harnesses.old': '旧值',
    'harnesses.new': '新值',
    'harnesses.draft_opened': '草稿已打开',
    'harnesses.format': '格式',
    'harnesses.document': '文档',
    'harnesses.notes_hint': '说明（改了什么、为什么）',
    'harnesses.revision_prefix': '修订 ',
    'harnesses.base_infix': ' · 基础 ',
    'harnesses.last_committed': ' · 上次提交为 ',
    'harnesses.evolution_loop': ' · evolution loop',
    'harnesses.save': '保存',
    'harnesses.validate': '校验',
    'harnesses.diff_base': '与基础版本对比',
    'harnesses.commit': '提交版本',
    'harnesses.delete_draft': '删除草稿',
    'harnesses.pool': '样本池',
    'harnesses.train_pool': '训练池',
    'harnesses.heldout_pool': '留出池',
    'harnesses.seed': '随机种子',
    'harnesses.preview_hsa': '预览 HSA 变体',
    'harnesses.saved_infix': ' · 保存于 ',
    'harnesses.saved': '已保存',
    'harnesses.draft_conflict': '他人保存了此草稿：您的文本仍在编辑器中；请重新加载草稿查看对方的版本，再重新应用您的修改。',
    'harnesses.valid': '有效',
    'harnesses.changes_from': '相对于以下版本的变更：',
    'harnesses.committed_version': '已提交版本 ',
    'harnesses.draft_prefix': '草稿：',
    'harnesses.hsa_preview': 'HSA 预览',
    'harnesses.hsa_hint': '一个变换族和一个种子给出此草稿的保任务变体以及标准调用的映射；相同的种子总是给出相同的变体。',
    'harnesses.problems': '问题',
    'harnesses.families': '变换族：',
    'harnesses.variant_infix': ' · 变体 ',
    'harnesses.base_prompt': '基础提示词 ',
    'harnesses.variant_prompt': '变体提示词',
    'harnesses.gold_mapping': '标准调用映射',
    'harnesses.base_call': '基础调用',
    'harnesses.variant_call': '变体调用',
    'harnesses.no_gold': '未给出标准调用：下面的映射步骤说明调用如何变化。',
    'harnesses.mapping_steps': '映射步骤',
    'harnesses.harness_changes': 'Harness 变更',
    'harnesses.candidate': '候选版本',
    'harnesses.baseline': '基线版本',
    'harnesses.items_per_suite': '每个评测集的条目数',
    'harnesses.tolerance': '容差（分）',
    'harnesses.model': '模型',
    'harnesses.serving_model': '当前服务模型',
    'harnesses.checkpoint_with': '随它发布的检查点',
    'harnesses.expert': '专家（harness 自检）',
    'harnesses.checkpoint': '检查点',
    'harnesses.replayed': '重放的问题数',
    'harnesses.run_gate': '运行闸门',
    'harnesses.release_gate': '发布闸门',
    'harnesses.recent_gates': '最近的闸门',
    'harnesses.started': '开始时间',
    'harnesses.state': '状态',
    'harnesses.show': '查看',
    'harnesses.no_gates': '还没有闸门。',
    'harnesses.cancel': '取消',
    'harnesses.starting': '正在启动…',
    'harnesses.sanity': '自检',
    'harnesses.suite_category': '评测集 / 类别',
    'harnesses.delta_ci': 'Δ 95% 区间',
    'harnesses.overall': '总体',
    'harnesses.failures_by_cause': '候选版本按原因分类的失败：',
    'harnesses.open_evolution': '在“演进”中打开',
    'harnesses.chosen_streams': ' 指定直播间',
    'harnesses.canary': ' 灰度',
    'harnesses.canary_percent': '灰度百分比',
    'harnesses.pct_streams': '% 的直播间',
    'harnesses.latest_gate': '按每个直播间的服务模型，使用此版本最近完成的闸门（有自己模型服务器的直播间需要为它单独运行闸门）；没有闸门时，请填写强制理由。',
    'harnesses.override_reason': '强制理由（会被记录；没有闸门或存在回退时必填）',
    'harnesses.releases': '发布记录',
    'harnesses.when': '时间',
    'harnesses.by': '发布人',
    'harnesses.roll_back': '回滚',
    'harnesses.no_releases': '没有发布记录。',
    'harnesses.compat_plugins': '兼容性：harness 版本 × 已安装插件',
    'harnesses.installed': '已安装：',
    'harnesses.plugins_serve': '插件是否支持',
    'harnesses.requested': '商家申请的版本：',
    'harnesses.compat_models': '兼容性：模型 × harness 版本',
    'harnesses.scores_hint': '运行闸门后这里显示得分。',
    'harnesses.choose_publish': '在版本上或闸门之后点击“发布”。',
    'harnesses.yes': '是',
    'harnesses.no': '否',
  },
});
LiveHAT.page(async () => {
  const {el, api, toast, showError, fmt} = LiveHAT;
  const t = LH.t;
  const main = document.getElementById('main');
  const params = new URLSearchParams(location.search);
  const sections = {
    versions: el('section', {class: 'card', id: 'versions'}),
    editor: el('section', {id: 'editor'}),
    gate: el('section', {class: 'card', id: 'gate'}),
    publish: el('section', {class: 'card', id: 'publish'}),
    releases: el('section', {class: 'card', id: 'releases'}),
    compat: el('section', {class: 'card', id: 'compat'}),
  };
  main.append(...Object.values(sections));

  let versions = [];
  let streams = [];
  let families = [];
  let lastGate = null; // the gate shown in the gate card
  let loopID = params.get('loop') || '';

  const short = fmt.short;
  const versionLabel = (v) => short(v.version) + ' · ' + v.name + (v.streams ? t('harnesses.n_streams', {n: v.streams}) : '');
  const versionOptions = (selected) => versions.map((v) => el('option', {value: v.version, selected: v.version === selected}, versionLabel(v)));
  const current = () => versions.reduce((best, v) => (!best || v.streams > best.streams ? v : best), null);

  function intervalCell(ci) {
    if (!ci) return el('td', {class: 'muted'}, '');
    return el('td', {class: 'muted'}, '[' + fmt.num(ci[0], 1) + ', ' + fmt.num(ci[1], 1) + ']');
  }

  function deltaCell(d) {
    const cls = d < 0 ? 'delta-down' : d > 0 ? 'delta-up' : 'muted';
    return el('td', {class: cls}, (d > 0 ? '+' : '') + fmt.num(d, 1));
  }

  async function loadVersions() {
    [versions, streams] = await Promise.all([api('GET', '/api/harnesses'), api('GET', '/api/streams')]);
    const oldSel = el('select', {name: 'old', 'aria-label': t('harnesses.old_version')}, versionOptions(versions[1]?.version));
    const newSel = el('select', {name: 'new', 'aria-label': t('harnesses.new_version')}, versionOptions(versions[0]?.version));
    const diffOut = el('div', {id: 'version-diff'});
    sections.versions.replaceChildren(
      el('h2', {}, t('harnesses.versions')),
      el('table', {id: 'versions-table'},
        el('thead', {}, el('tr', {}, [t('harnesses.version'), t('harnesses.name'), t('harnesses.parent'), t('harnesses.author'), t('harnesses.created'), t('harnesses.streams'), t('harnesses.notes'), ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, versions.map((v) => el('tr', {dataset: {version: v.version}},
          el('td', {class: 'mono', title: v.version}, v.short),
          el('td', {}, v.name),
          el('td', {class: 'mono', title: v.parent || ''}, short(v.parent)),
          el('td', {}, v.author || 'system'),
          el('td', {}, fmt.time(v.created_at)),
          el('td', {}, String(v.streams)),
          el('td', {}, v.notes || ''),
          el('td', {class: 'row'},
            el('button', {class: 'secondary', onclick: () => newDraft(v.version)}, t('harnesses.edit_as_draft')),
            el('button', {class: 'secondary', onclick: () => showGateForm(v.version)}, t('harnesses.gate')),
            el('button', {class: 'secondary', onclick: () => showPublish(v.version)}, t('harnesses.publish'))))))),
      el('h2', {}, t('harnesses.compare')),
      el('form', {class: 'row', id: 'diff-form', onsubmit: async (e) => {
        e.preventDefault();
        try {
          const d = await api('POST', '/api/harness/diff', {old: oldSel.value, new: newSel.value});
          diffOut.replaceChildren(changeList(d.changes));
        } catch (err) { showError(err, e.target); }
      }}, oldSel, el('span', {}, '→'), newSel, el('button', {type: 'submit'}, t('harnesses.diff'))),
      diffOut,
      await draftsList());
  }

  async function draftsList() {
    const drafts = await api('GET', '/api/harness-drafts');
    if (!drafts.length) return el('p', {class: 'muted'}, t('harnesses.no_drafts'));
    return el('div', {}, el('h2', {}, t('harnesses.drafts')), el('table', {id: 'drafts-table'},
      el('thead', {}, el('tr', {}, [t('harnesses.name'), t('harnesses.base'), t('harnesses.author'), t('harnesses.saved'), t('harnesses.revision'), t('harnesses.committed_as'), ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, drafts.map((d) => el('tr', {},
        el('td', {}, d.name), el('td', {class: 'mono'}, short(d.base_version)), el('td', {}, d.author),
        el('td', {}, fmt.time(d.updated_at)), el('td', {}, String(d.revision)), el('td', {class: 'mono'}, short(d.committed_version)),
        el('td', {}, el('button', {class: 'secondary', onclick: () => openDraft(d.id)}, t('harnesses.open'))))))));
  }

  function changeList(changes) {
    if (!changes || !changes.length) return el('p', {class: 'muted'}, t('harnesses.no_changes'));
    return el('table', {class: 'changes'},
      el('thead', {}, el('tr', {}, ['', t('harnesses.path'), t('harnesses.old'), t('harnesses.new')].map((h) => el('th', {}, h)))),
      el('tbody', {}, changes.map((c) => el('tr', {class: 'change-' + c.kind},
        el('td', {}, {added: '+', removed: '−', changed: '~', moved: '↕'}[c.kind] || c.kind),
        el('td', {class: 'mono'}, c.path),
        el('td', {class: 'mono'}, c.old === undefined ? '' : JSON.stringify(c.old)),
        el('td', {class: 'mono'}, c.new === undefined ? '' : JSON.stringify(c.new))))));
  }

  async function newDraft(version) {
    try {
      const d = await api('POST', '/api/harness-drafts', {base_version: version});
      toast(t('harnesses.draft_opened'));
      await openDraft(d.id);
      await loadVersions();
    } catch (err) { showError(err); }
  }

  // openDraft shows the editor: the document on the left, problems, diff
  // and HSA preview on the right.
  async function openDraft(id) {
    let d;
    try { d = await api('GET', '/api/harness-drafts/' + encodeURIComponent(id)); } catch (err) { showError(err); return; }
    if (d.loop_id) loopID = d.loop_id;
    history.replaceState(null, '', '?draft=' + encodeURIComponent(d.id) + (loopID ? '&loop=' + encodeURIComponent(loopID) : ''));
    const form = el('form', {id: 'draft-form'},
      el('div', {class: 'row'},
        el('label', {for: 'd-name'}, t('harnesses.name')), el('input', {id: 'd-name', name: 'name', value: d.name}),
        el('label', {for: 'd-format'}, t('harnesses.format')),
        el('select', {id: 'd-format', name: 'format'}, ['json', 'yaml'].map((f) => el('option', {value: f, selected: f === d.format}, f)))),
      el('label', {for: 'd-document'}, t('harnesses.document')),
      el('textarea', {id: 'd-document', name: 'document', class: 'editor', spellcheck: 'false'}, d.document),
      el('label', {for: 'd-notes'}, t('harnesses.notes_hint')),
      el('input', {id: 'd-notes', name: 'notes', value: d.notes, class: 'wide'}),
      el('p', {class: 'muted', id: 'draft-meta'}, t('harnesses.revision_prefix') + d.revision + t('harnesses.base_infix') + short(d.base_version) +
        (d.committed_version ? t('harnesses.last_committed') + short(d.committed_version) : '') + (d.loop_id ? t('harnesses.evolution_loop') : '')),
      el('div', {class: 'row'},
        el('button', {type: 'submit', id: 'draft-save'}, t('harnesses.save')),
        el('button', {type: 'button', class: 'secondary', id: 'draft-validate', onclick: validate}, t('harnesses.validate')),
        el('button', {type: 'button', class: 'secondary', id: 'draft-diff', onclick: diff}, t('harnesses.diff_base')),
        el('button', {type: 'button', id: 'draft-commit', onclick: commit}, t('harnesses.commit')),
        el('button', {type: 'button', class: 'danger', onclick: remove}, t('harnesses.delete_draft'))));
    const side = el('div', {id: 'draft-side'});
    const hsaOut = el('div', {id: 'hsa-out'});
    const famSel = el('select', {name: 'family', id: 'hsa-family'},
      el('option', {value: ''}, '— pool draw —'),
      families.map((f) => el('option', {value: f.name, title: f.description}, f.name + ' (' + f.pool + ')')));
    const hsaForm = el('form', {id: 'hsa-form', class: 'row'},
      famSel,
      el('select', {name: 'pool', 'aria-label': t('harnesses.pool')}, el('option', {value: 'train'}, t('harnesses.train_pool')), el('option', {value: 'heldout'}, t('harnesses.heldout_pool'))),
      el('input', {name: 'seed', type: 'number', value: '1', size: 6, 'aria-label': t('harnesses.seed')}),
      el('input', {name: 'gold', placeholder: 'gold calls JSON, e.g. [{"name":"product_lookup","arguments":{"item_id":"A1"}}]', class: 'wide'}),
      el('button', {type: 'submit'}, t('harnesses.preview_hsa')));
    hsaForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      hsaForm.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      let gold = [];
      if (hsaForm.gold.value.trim()) {
        try { gold = JSON.parse(hsaForm.gold.value); } catch (err) {
          showError(new LiveHAT.ApiError(400, {error: 'gold: ' + err.message, field: 'gold'}), hsaForm); return;
        }
      }
      const req = {draft_id: d.id, seed: Number(hsaForm.seed.value) || 0, gold};
      if (famSel.value) req.family = famSel.value; else { req.pool = hsaForm.pool.value; req.n = 3; }
      try { showHSA(hsaOut, await api('POST', '/api/hsa/preview', req)); } catch (err) { showError(err, hsaForm); }
    });
    let rev = d.revision;
    const meta = () => form.querySelector('#draft-meta');

    async function save() {
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const saved = await api('PUT', '/api/harness-drafts/' + d.id,
        {name: form.name.value, format: form.format.value, document: form.document.value, notes: form.notes.value, revision: rev});
      rev = saved.revision;
      meta().textContent = t('harnesses.revision_prefix') + rev + t('harnesses.base_infix') + short(d.base_version) + t('harnesses.saved_infix') + fmt.time(saved.updated_at);
      return saved;
    }
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try { await save(); toast(t('harnesses.saved')); } catch (err) {
        if (err.status === 409) toast(t('harnesses.draft_conflict'), 'error');
        else showError(err, form);
      }
    });
    async function validate() {
      try {
        const type = form.format.value === 'yaml' ? 'application/yaml' : 'application/json';
        const s = await api('POST', '/api/harness/validate', form.document.value, {type});
        side.replaceChildren(el('h3', {}, t('harnesses.valid')), el('p', {}, t('harnesses.summary', {name: s.name, skills: s.skills, tools: s.tools, hooks: s.hooks, short: s.short})),
          (s.warnings || []).map((w) => el('p', {class: 'badge warn'}, w)));
      } catch (err) { side.replaceChildren(problems(err)); }
    }
    async function diff() {
      try {
        await save();
        const r = await api('GET', '/api/harness-drafts/' + d.id + '/diff');
        side.replaceChildren(el('h3', {}, t('harnesses.changes_from') + short(r.old)), changeList(r.changes));
      } catch (err) { side.replaceChildren(problems(err)); }
    }
    async function commit() {
      try {
        await save();
        const r = await api('POST', '/api/harness-drafts/' + d.id + '/commit', {revision: rev, notes: form.notes.value});
        toast(t('harnesses.committed_version') + short(r.version.version));
        rev = r.draft.revision;
        await loadVersions();
        showGateForm(r.version.version);
        sections.gate.scrollIntoView();
      } catch (err) { side.replaceChildren(problems(err)); showError(err, form); }
    }
    async function remove() {
      if (!confirm(t('harnesses.confirm_delete_draft', {name: d.name}))) return;
      try { await api('DELETE', '/api/harness-drafts/' + d.id); sections.editor.replaceChildren(); history.replaceState(null, '', '/harnesses'); await loadVersions(); } catch (err) { showError(err); }
    }
    sections.editor.replaceChildren(el('div', {class: 'card'},
      el('h2', {}, t('harnesses.draft_prefix'), d.name),
      el('div', {class: 'split'}, form, el('div', {}, side)),
      el('h2', {}, t('harnesses.hsa_preview')),
      el('p', {class: 'muted'}, t('harnesses.hsa_hint')),
      hsaForm, hsaOut));
  }

  function problems(err) {
    const list = (err.body && err.body.problems) || [];
    return el('div', {id: 'problems'}, el('h3', {}, t('harnesses.problems')), el('p', {class: 'bad'}, err.message),
      el('ul', {}, list.map((p) => el('li', {}, (p.line ? 'line ' + p.line + (p.col ? ':' + p.col : '') + ' ' : '') + (p.path ? p.path + ': ' : '') + p.message))));
  }

  function showHSA(out, r) {
    const fams = (r.record.transforms || []).map((t) => t.family + ' (' + t.pool + ')').join(', ');
    out.replaceChildren(
      el('p', {}, t('harnesses.families'), fams, t('harnesses.variant_infix'), short(r.variant.version)),
      el('div', {class: 'split'},
        el('div', {}, el('h3', {}, t('harnesses.base_prompt') + short(r.base.version)), el('pre', {class: 'prompt', id: 'hsa-base'}, r.base.prompt)),
        el('div', {}, el('h3', {}, t('harnesses.variant_prompt')), el('pre', {class: 'prompt', id: 'hsa-variant'}, r.variant.prompt))),
      el('h3', {}, t('harnesses.gold_mapping')),
      r.gold.length ? el('table', {id: 'hsa-gold'}, el('thead', {}, el('tr', {}, el('th', {}, t('harnesses.base_call')), el('th', {}, t('harnesses.variant_call')))),
        el('tbody', {}, r.gold.map((g) => el('tr', {}, el('td', {class: 'mono'}, JSON.stringify(g.base)),
          el('td', {class: 'mono' + (g.error ? ' bad' : '')}, g.error || JSON.stringify(g.variant))))))
        : el('p', {class: 'muted'}, t('harnesses.no_gold')),
      el('h3', {}, t('harnesses.mapping_steps')),
      el('pre', {}, (r.mapping.steps || []).map((s) => JSON.stringify(s)).join('\n') || t('harnesses.no_steps')),
      el('h3', {}, t('harnesses.harness_changes')), changeList(r.changes));
  }

  // The release gate.
  function showGateForm(candidate) {
    const cur = current();
    const suites = ['lsqa', 'hvqa', 'robust', 'strategy'];
    const streamModel = el('span', {class: 'muted', id: 'g-stream-model'});
    const form = el('form', {id: 'gate-form'},
      el('div', {class: 'row'},
        el('label', {for: 'g-candidate'}, t('harnesses.candidate')), el('select', {id: 'g-candidate', name: 'candidate'}, versionOptions(candidate || versions[0]?.version)),
        el('label', {for: 'g-baseline'}, t('harnesses.baseline')), el('select', {id: 'g-baseline', name: 'baseline'}, versionOptions(cur?.version)),
        el('label', {for: 'g-n'}, t('harnesses.items_per_suite')), el('input', {id: 'g-n', name: 'n', type: 'number', value: '5', min: 1, max: 100, size: 4}),
        el('label', {for: 'g-tol'}, t('harnesses.tolerance')), el('input', {id: 'g-tol', name: 'tolerance', type: 'number', value: '1', step: '0.5', min: 0, size: 4})),
      el('div', {class: 'row'},
        el('label', {for: 'g-model'}, t('harnesses.model')), el('select', {id: 'g-model', name: 'model'},
          el('option', {value: 'serving', selected: true}, t('harnesses.serving_model')),
          el('option', {value: 'checkpoint'}, t('harnesses.checkpoint_with')),
          el('option', {value: 'expert'}, t('harnesses.expert'))),
        el('label', {for: 'g-checkpoint'}, t('harnesses.checkpoint')), el('input', {id: 'g-checkpoint', name: 'checkpoint', size: 16, placeholder: 'name'}),
        el('label', {for: 'g-replay'}, t('harnesses.replayed')), el('input', {id: 'g-replay', name: 'replay', type: 'number', value: '10', min: 0, max: 100, size: 4})),
      el('div', {class: 'row'},
        el('label', {for: 'g-stream'}, t('harnesses.gate_stream')), el('select', {id: 'g-stream', name: 'stream'},
          el('option', {value: '', selected: true}, t('harnesses.all_streams')),
          streams.map((s) => el('option', {value: s.id}, s.name + ' · ' + short(s.harness_version)))),
        streamModel),
      el('div', {class: 'row'}, suites.map((s) => el('label', {class: 'check'}, el('input', {type: 'checkbox', name: 'suites', value: s, checked: true}), ' ' + s)),
        el('button', {type: 'submit', id: 'gate-run'}, t('harnesses.run_gate'))));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const req = {candidate: form.candidate.value, baseline: form.baseline.value, n: Number(form.n.value),
        tolerance: Number(form.tolerance.value), suites: [...form.querySelectorAll('input[name=suites]:checked')].map((i) => i.value),
        model: form.model.value};
      if (req.model === 'checkpoint') req.checkpoint = form.checkpoint.value;
      if (req.model !== 'expert') req.replay = Number(form.replay.value);
      if (form.stream.value) req.stream = form.stream.value;
      if (loopID) req.loop_id = loopID;
      try { watchGate(await api('POST', '/api/harness-gates', req)); } catch (err) { showError(err, form); }
    });
    // A stream's gate measures the model that serves it, against the
    // version it runs: say which model, and start from that version.
    form.stream.addEventListener('change', async () => {
      streamModel.textContent = '';
      const st = streams.find((s) => s.id === form.stream.value);
      if (!st) return;
      if (st.harness_version) form.baseline.value = st.harness_version;
      try {
        const v = await api('GET', '/api/serving-model/streams/' + encodeURIComponent(st.id));
        if (form.stream.value === st.id) streamModel.textContent = t(v.own ? 'harnesses.stream_own_server' : 'harnesses.stream_served_by', {model: v.spec});
      } catch (err) { showError(err); }
    });
    sections.gate.replaceChildren(el('h2', {}, t('harnesses.release_gate')),
      el('p', {class: 'muted'}, t('harnesses.gate_hint')),
      el('p', {class: 'muted'}, t('harnesses.gate_stream_hint')),
      form, el('div', {id: 'gate-status'}), el('div', {id: 'gate-report'}), gateHistory());
    loadGateHistory();
  }

  function gateHistory() { return el('div', {id: 'gate-history'}); }
  async function loadGateHistory() {
    const box = document.getElementById('gate-history');
    if (!box) return;
    const gates = await api('GET', '/api/harness-gates');
    box.replaceChildren(el('h3', {}, t('harnesses.recent_gates')), gates.length ? el('table', {},
      el('thead', {}, el('tr', {}, [t('harnesses.started'), t('harnesses.candidate'), t('harnesses.baseline'), t('harnesses.model'), 'n', t('harnesses.state'), ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, gates.slice(0, 10).map((g) => el('tr', {},
        el('td', {}, fmt.time(g.created_at)), el('td', {class: 'mono'}, short(g.candidate)), el('td', {class: 'mono'}, short(g.baseline)),
        el('td', {}, g.model + streamOfGate(g)), el('td', {}, String(g.n)), el('td', {}, stateBadge(g.state)),
        el('td', {}, el('button', {class: 'link', onclick: () => watchGate(g)}, t('harnesses.show'))))))) : el('p', {class: 'muted'}, t('harnesses.no_gates')));
  }

  // streamOfGate names the stream a finished gate measured the serving
  // model of, when it was run for one.
  function streamOfGate(g) {
    const id = g.report && g.report.stream;
    if (!id) return '';
    const st = streams.find((s) => s.id === id);
    return ' · ' + t('harnesses.gate_for_stream', {name: st ? st.name : id});
  }

  function stateBadge(state) {
    const cls = {passed: 'good', active: 'good', regressed: 'bad', failed: 'bad', cancelled: 'warn', running: 'warn', rolled_back: 'warn'}[state] || '';
    return el('span', {class: 'badge ' + cls}, state.replace('_', ' '));
  }

  function watchGate(g) {
    lastGate = g;
    const status = document.getElementById('gate-status');
    const report = document.getElementById('gate-report');
    if (g.state !== 'running') { showGateReport(g); return; }
    report.replaceChildren();
    const bar = el('progress', {id: 'gate-progress', max: g.total || 1, value: g.done || 0});
    const phase = el('span', {class: 'muted'}, t('harnesses.starting'));
    status.replaceChildren(el('div', {class: 'row'}, stateBadge('running'), bar, phase,
      el('button', {class: 'secondary', onclick: () => api('POST', '/api/harness-gates/' + g.id + '/cancel').catch(showError)}, t('harnesses.cancel'))));
    let finished = false;
    const done = async () => {
      if (finished) return;
      finished = true;
      es.close();
      try { showGateReport(await api('GET', '/api/harness-gates/' + g.id)); } catch (err) { showError(err); }
    };
    const es = LiveHAT.stream('/api/harness-gates/' + g.id + '/events', (type, data) => {
      if (type === 'progress') { bar.max = data.total || 1; bar.value = data.done; phase.textContent = data.done + '/' + data.total + ' · ' + data.phase; }
      if (type === 'done' || type === 'error') done();
    }, ['progress', 'done', 'error']);
    // The event stream may drop (a proxy, a long gate): poll as well.
    const poll = setInterval(async () => {
      if (finished) { clearInterval(poll); return; }
      try {
        const cur = await api('GET', '/api/harness-gates/' + g.id);
        bar.value = cur.done;
        if (cur.state !== 'running') { clearInterval(poll); done(); }
      } catch { /* the next tick retries */ }
    }, 2000);
  }

  function showGateReport(g) {
    lastGate = g;
    const status = document.getElementById('gate-status');
    const report = document.getElementById('gate-report');
    if (!status || !report) return;
    status.replaceChildren(el('div', {class: 'row', id: 'gate-state'}, stateBadge(g.state),
      el('span', {}, short(g.candidate) + ' vs ' + short(g.baseline) + ' · ' + g.model + streamOfGate(g) + ' · n=' + g.n),
      g.report && g.report.sanity ? el('span', {class: 'badge warn', id: 'gate-sanity'}, t('harnesses.sanity')) : null,
      g.error ? el('span', {class: 'bad'}, g.error) : null));
    const r = g.report || {};
    if (!r.suites) { report.replaceChildren(); loadGateHistory(); return; }
    const rows = [];
    for (const s of r.suites) {
      rows.push(el('tr', {class: 'suite-row' + (s.regressed ? ' regressed' : '')},
        el('td', {}, el('strong', {}, s.suite)), el('td', {}, fmt.num(s.baseline.score, 1)), el('td', {}, fmt.num(s.candidate.score, 1)),
        deltaCell(s.delta), intervalCell(s.delta_ci95), el('td', {class: 'muted'}, 'n=' + s.candidate.n + (s.candidate.errors ? ' · ' + s.candidate.errors + ' errors' : ''))));
      for (const c of s.categories) {
        rows.push(el('tr', {class: 'category-row' + (c.regressed ? ' regressed' : '')},
          el('td', {class: 'indent'}, c.category), el('td', {}, fmt.num(c.baseline, 1)), el('td', {}, fmt.num(c.candidate, 1)),
          deltaCell(c.delta), intervalCell(c.delta_ci95), el('td', {class: 'muted'}, 'n=' + c.n)));
      }
    }
    const causes = Object.entries(r.causes || {});
    report.replaceChildren(
      el('table', {id: 'gate-table'},
        el('thead', {}, el('tr', {}, [t('harnesses.suite_category'), t('harnesses.baseline'), t('harnesses.candidate'), 'Δ', t('harnesses.delta_ci'), ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows),
        el('tfoot', {}, el('tr', {}, el('td', {}, el('strong', {}, t('harnesses.overall'))), el('td', {}, fmt.num(r.overall.baseline, 1)),
          el('td', {}, fmt.num(r.overall.candidate, 1)), deltaCell(r.overall.delta), el('td', {}), el('td', {})))),
      (r.warnings || []).map((w) => el('p', {class: 'badge warn gate-warning'}, w)),
      r.regressions.length
        ? el('p', {class: 'bad', id: 'gate-regressions'}, t('harnesses.regressions', {n: r.regressions.length, tolerance: r.tolerance}),
          r.regressions.map((x) => x.suite + (x.category ? '/' + x.category : '') + ' ' + fmt.num(x.delta, 1)).join(', '))
        : el('p', {class: 'good', id: 'gate-regressions'}, t('harnesses.no_regression', {tolerance: r.tolerance})),
      causes.length ? el('p', {}, t('harnesses.failures_by_cause'), causes.map(([k, n]) => k.replace('_', ' ') + ' ' + n).join(' · '), ' — ',
        el('a', {href: '/evolution?version=' + encodeURIComponent(g.candidate)}, t('harnesses.open_evolution'))) : null,
      el('div', {class: 'row'}, el('button', {id: 'gate-publish', onclick: () => showPublish(g.candidate, g)}, t('harnesses.publish_version', {v: short(g.candidate)}))));
    loadGateHistory().catch(showError);
    loadCompat().catch(showError);
  }

  // Publishing: chosen streams or a canary percentage.
  function showPublish(version, gate) {
    const g = gate && gate.candidate === version ? gate : (lastGate && lastGate.candidate === version && lastGate.state !== 'running' ? lastGate : null);
    const form = el('form', {id: 'publish-form'},
      el('div', {class: 'row'}, el('label', {for: 'p-version'}, t('harnesses.version')), el('select', {id: 'p-version', name: 'version'}, versionOptions(version))),
      el('div', {class: 'row'},
        el('label', {class: 'check'}, el('input', {type: 'radio', name: 'mode', value: 'streams', checked: true}), t('harnesses.chosen_streams')),
        el('label', {class: 'check'}, el('input', {type: 'radio', name: 'mode', value: 'canary'}), t('harnesses.canary')),
        el('input', {name: 'canary_percent', type: 'number', min: 1, max: 100, value: '10', size: 4, 'aria-label': t('harnesses.canary_percent')}), el('span', {}, t('harnesses.pct_streams'))),
      el('div', {id: 'p-streams'}, streams.map((s) => el('label', {class: 'check'},
        el('input', {type: 'checkbox', name: 'streams', value: s.id}), ' ' + s.name + ' ', el('span', {class: 'mono muted'}, short(s.harness_version))))),
      el('p', {class: 'muted'}, g ? t('harnesses.gate_state', {state: g.state, at: fmt.time(g.created_at)}) : t('harnesses.latest_gate')),
      el('label', {for: 'p-override'}, t('harnesses.override_reason')),
      el('input', {id: 'p-override', name: 'override', class: 'wide'}),
      el('div', {class: 'row'}, el('button', {type: 'submit', id: 'publish-submit'}, t('harnesses.publish'))));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      form.querySelectorAll('.invalid').forEach((n) => n.classList.remove('invalid'));
      const req = {version: form.version.value};
      if (form.mode.value === 'canary') req.canary_percent = Number(form.canary_percent.value);
      else req.streams = [...form.querySelectorAll('input[name=streams]:checked')].map((i) => i.value);
      if (g && g.candidate === req.version) req.gate_id = g.id;
      if (form.override.value.trim()) req.override = form.override.value;
      if (loopID) req.loop_id = loopID;
      try {
        const r = await api('POST', '/api/releases', req);
        toast(t('harnesses.published', {v: short(r.version), n: r.streams.length}));
        await Promise.all([loadVersions(), loadReleases()]);
      } catch (err) { showError(err, form); }
    });
    sections.publish.replaceChildren(el('h2', {}, t('harnesses.publish')), form);
    sections.publish.scrollIntoView();
  }

  async function loadReleases() {
    const rels = await api('GET', '/api/releases');
    sections.releases.replaceChildren(el('h2', {}, t('harnesses.releases')), rels.length ? el('table', {id: 'releases-table'},
      el('thead', {}, el('tr', {}, [t('harnesses.when'), t('harnesses.version'), t('harnesses.streams'), t('harnesses.gate'), t('harnesses.by'), t('harnesses.state'), ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, rels.map((r) => el('tr', {},
        el('td', {}, fmt.time(r.created_at)),
        el('td', {class: 'mono'}, short(r.version)),
        el('td', {}, (r.canary_percent ? r.canary_percent + '% canary: ' : '') + r.streams.map((s) => s.name).join(', ')),
        el('td', {}, r.gate_id ? gateSummary(r.gate_report) : el('span', {class: 'badge warn', title: r.override}, t('harnesses.override_badge', {reason: r.override}))),
        el('td', {}, r.created_by),
        el('td', {}, stateBadge(r.state)),
        el('td', {}, r.state === 'active' ? el('button', {class: 'danger', onclick: () => rollback(r)}, t('harnesses.roll_back')) : (r.rolled_back_by ? t('harnesses.rolled_back_by', {by: r.rolled_back_by}) : '')))))) :
      el('p', {class: 'muted'}, t('harnesses.no_releases')));
  }

  function gateSummary(rep) {
    if (!rep || !rep.overall) return 'gate';
    return el('span', {class: rep.regressions && rep.regressions.length ? 'delta-down' : 'delta-up'},
      'gate Δ ' + fmt.num(rep.overall.delta, 1) + (rep.regressions && rep.regressions.length ? ' · ' + rep.regressions.length + ' regressions' : ''));
  }

  async function rollback(r) {
    if (!confirm(t('harnesses.confirm_rollback', {v: short(r.version), n: r.streams.length}))) return;
    try {
      const res = await api('POST', '/api/releases/' + r.id + '/rollback');
      toast(t('harnesses.rolled_back', {n: res.restored.length}) + (res.skipped.length ? t('harnesses.skipped', {n: res.skipped.length}) : ''));
      await Promise.all([loadVersions(), loadReleases()]);
    } catch (err) { showError(err); }
  }

  // pluginMatrix is every version against the installed plugins, with the
  // streams on it and any version a stream's merchant asked for.
  function pluginMatrix(m) {
    const names = Object.fromEntries(streams.map((s) => [s.id, s.name]));
    return [el('h2', {}, t('harnesses.compat_plugins')),
      el('p', {class: 'muted', id: 'compat-plugins'}, t('harnesses.installed') + (m.plugins.length ? m.plugins.map((p) => p.name + '@' + p.version).join(', ') : 'none')),
      el('table', {id: 'plugin-compat-table'},
        el('thead', {}, el('tr', {}, [t('harnesses.version'), t('harnesses.name'), t('harnesses.streams'), t('harnesses.plugins_serve'), t('harnesses.problems')].map((h) => el('th', {}, h)))),
        el('tbody', {}, m.harnesses.map((h) => el('tr', {dataset: {version: h.version}, class: h.compatible ? '' : 'regressed'},
          el('td', {class: 'mono', title: h.version}, short(h.version)), el('td', {}, h.name),
          el('td', {}, h.streams.map((id) => names[id] || id).join(', ')),
          el('td', {}, el('span', {class: 'badge ' + (h.compatible ? 'good' : 'bad')}, h.compatible ? t('harnesses.yes') : t('harnesses.no'))),
          el('td', {class: 'small'}, h.problems.slice(0, 3).map((p) => el('div', {}, p.message)),
            h.problems.length > 3 ? el('div', {class: 'muted'}, '… ' + (h.problems.length - 3) + ' more') : null))))),
      m.streams.some((s) => s.requested_version)
        ? el('p', {id: 'compat-requests'}, t('harnesses.requested'), m.streams.filter((s) => s.requested_version)
          .map((s) => s.name + ' → ' + short(s.requested_version)).join(', '))
        : null].filter(Boolean);
  }

  async function loadCompat() {
    const c = await api('GET', '/api/harness-compat');
    const scored = c.versions.filter((v) => c.cells.some((x) => x.version === v.version));
    if (!c.cells.length) {
      sections.compat.replaceChildren(...pluginMatrix(c.plugins), el('h2', {}, t('harnesses.compat_models')),
        el('p', {class: 'muted'}, t('harnesses.scores_hint')));
      return;
    }
    const cell = (m, v) => c.cells.find((x) => x.model === m && x.version === v);
    sections.compat.replaceChildren(...pluginMatrix(c.plugins), el('h2', {}, t('harnesses.compat_models')),
      el('table', {id: 'compat-table'},
        el('thead', {}, el('tr', {}, el('th', {}, t('harnesses.model')), scored.map((v) => el('th', {title: v.version}, short(v.version) + ' ' + v.name)))),
        el('tbody', {}, c.models.map((m) => el('tr', {}, el('td', {}, m), scored.map((v) => {
          const x = cell(m, v.version);
          if (!x) return el('td', {class: 'muted'}, '—');
          return el('td', {title: Object.entries(x.suites).map(([s, sc]) => s + ' ' + fmt.num(sc, 1) + ' (n=' + x.n[s] + ')').join('\n')},
            el('strong', {}, fmt.num(x.mean, 1)), el('div', {class: 'muted small'}, Object.entries(x.suites).map(([s, sc]) => s + ' ' + fmt.num(sc, 0)).join(' · ')));
        }))))));
  }

  families = await api('GET', '/api/hsa/families');
  await loadVersions();
  showGateForm(versions[0]?.version);
  sections.publish.replaceChildren(el('h2', {}, t('harnesses.publish')), el('p', {class: 'muted'}, t('harnesses.choose_publish')));
  await Promise.all([loadReleases(), loadCompat()]);
  if (params.get('draft')) await openDraft(params.get('draft'));
  else if (loopID) {
    const d = (await api('GET', '/api/harness-drafts')).find((x) => x.loop_id === loopID);
    if (d) await openDraft(d.id);
  }
});
