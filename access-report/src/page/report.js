// toolgate access report and console. Every text from the data is set with
// textContent or as an attribute value, never parsed as markup.
(function () {
  'use strict';
  var boot = JSON.parse(document.getElementById('toolgate-data').textContent);
  var app = document.getElementById('app');
  var SVG = 'http://www.w3.org/2000/svg';
  var ROW = 22;

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'text') e.textContent = v;
        else if (k === 'class') e.className = v;
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) e.appendChild(typeof x === 'string' ? document.createTextNode(x) : x); });
      else e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, String(attrs[k]));
    });
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  // ------------------------------------------------------------ the data
  var R = null; // the report: {title, matrix, diff, denials}
  var M = null; // its matrix
  // Every lookup keyed by data is a Map, never a plain object: a tool,
  // configuration or reason named `__proto__`, `constructor`, `toString` or
  // `hasOwnProperty` would otherwise find Object.prototype's members.
  var letterCode = new Map(); // cell letter -> reason code
  var codeInfo = new Map(); // reason code -> {letter, code, message}
  var decoded = new Map(); // ctx -> [Uint8Array per configuration]
  var excludedBy = new Map(); // tool index -> [configuration indices]
  var byGroup = []; // group index -> [tool indices]
  var refusalIndex = new Map(); // "ctx:cfg" -> Map(tool index -> text index)

  function load(report) {
    R = report; M = report.matrix;
    letterCode = new Map(); codeInfo = new Map(); decoded = new Map(); excludedBy = new Map(); refusalIndex = new Map();
    M.reasons.forEach(function (r) { letterCode.set(r.letter, r.code); codeInfo.set(r.code, r); });
    M.excludedBy.forEach(function (p) { excludedBy.set(p[0], p[1]); });
    byGroup = M.groups.map(function () { return []; });
    M.tools.forEach(function (t, i) { byGroup[t[1]].push(i); });
    if (state.ctx >= M.contexts.length) state.ctx = 0;
    state.expanded = new Set();
    if (M.tools.length <= 300) M.groups.forEach(function (_, g) { state.expanded.add(g); });
  }

  function digitsAt(s, i) { var j = i; while (j < s.length && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++; return j; }
  // A row: run-length ("+12x+3") or the differences from an earlier row
  // ("@CTX,CFG;" then per changed cell the unchanged count before it and its character).
  function decode(s, n) {
    var i, j, pos = 0;
    if (s.charAt(0) === '@') {
      var semi = s.indexOf(';'), ref = s.slice(1, semi).split(',');
      var out = rows(parseInt(ref[0], 10))[parseInt(ref[1], 10)].slice();
      i = semi + 1;
      while (i < s.length) {
        j = digitsAt(s, i);
        if (j > i) pos += parseInt(s.slice(i, j), 10);
        out[pos++] = s.charCodeAt(j);
        i = j + 1;
      }
      return out;
    }
    var res = new Uint8Array(n);
    i = 0;
    while (i < s.length) {
      var c = s.charCodeAt(i++);
      j = digitsAt(s, i);
      var count = j > i ? parseInt(s.slice(i, j), 10) : 1;
      res.fill(c, pos, pos + count);
      pos += count; i = j;
    }
    return res;
  }
  function rows(ctx) {
    if (!decoded.has(ctx)) {
      var n = M.tools.length, list = [];
      decoded.set(ctx, list);
      // A row may refer to an earlier row of its own context: fill in order.
      M.cells[ctx].forEach(function (si) { list.push(decode(M.strings[si], n)); });
    }
    return decoded.get(ctx);
  }
  // A cell's meaning: {kind, code, hidden}.
  function cellOf(byte) {
    var ch = String.fromCharCode(byte);
    if (ch === '+') return { kind: 'offered', code: 'offered', hidden: false };
    if (ch === '~') return { kind: 'observed', code: 'observed', hidden: false };
    if (ch === '!') return { kind: 'approval', code: 'approval', hidden: false };
    var lower = ch.toLowerCase();
    var code = letterCode.get(lower) || 'unknown';
    return { kind: 'refused', code: code, hidden: ch !== lower };
  }
  function refused(byte) { return byte !== 43 && byte !== 126 && byte !== 33; }
  function refusalOf(ctx, cfg, tool) {
    if (!M.refusals) return null;
    var key = ctx + ':' + cfg;
    if (!refusalIndex.has(key)) {
      var flat = M.refusals.cells[ctx][cfg], idx = new Map();
      for (var i = 0; i < flat.length; i += 2) idx.set(flat[i], flat[i + 1]);
      refusalIndex.set(key, idx);
    }
    var t = refusalIndex.get(key).get(tool);
    return t === undefined ? null : M.refusals.texts[t];
  }
  function contextLabel(c) {
    var who = c.consumer === null ? 'no consumer' : c.consumer === '*' ? 'consumer without a profile' : 'consumer ' + c.consumer;
    var mode = c.mode === null ? 'as configured (' + c.effectiveMode + ')' : c.mode;
    return c.role + ' · ' + who + ' · ' + mode;
  }
  function verdictText(cell) {
    if (cell.kind === 'offered') return 'offered';
    if (cell.kind === 'observed') return 'offered (observed only: the trust zone is observed)';
    if (cell.kind === 'approval') return 'offered; a person approves each call before it runs (needs-approval)';
    var info = codeInfo.get(cell.code);
    var t = 'refused: ' + cell.code + (info ? ' (' + info.message + ')' : '');
    if (cell.hidden) t += '; the name is hidden from this user, who is told notRegistered';
    return t;
  }

  // ------------------------------------------------------------ state
  var state = { tab: 'matrix', ctx: 0, name: '', group: -1, reason: '', refusedOnly: false, expanded: new Set(), cur: { row: 0, col: 0 }, view: [] };

  // ------------------------------------------------------------ layout
  var tabsEl, panelEl, headerEl, bannerEl;
  var tabs = [];
  function shell(title) {
    clear(app);
    headerEl = el('header', null,
      el('h1', { text: title }),
      el('div', { class: 'meta', id: 'meta' }));
    bannerEl = el('div', { id: 'banner' });
    tabsEl = el('div', { class: 'tabs', role: 'tablist' });
    panelEl = el('main', { class: 'panel', id: 'panel' });
    app.appendChild(headerEl); app.appendChild(bannerEl); app.appendChild(tabsEl); app.appendChild(panelEl);
  }
  function renderMeta() {
    var meta = document.getElementById('meta');
    clear(meta);
    meta.appendChild(document.createTextNode(
      M.tools.length + ' tools, ' + M.configs.length + ' configurations, ' + M.contexts.length +
      ' contexts; table sha256 ' + M.digest));
  }
  function renderTabs() {
    clear(tabsEl);
    tabs = [['matrix', 'Access matrix'], ['readouts', 'Readouts']];
    if (R.diff) tabs.push(['changes', 'Changes']);
    if (R.denials) tabs.push(['denials', 'Denials']);
    if (boot.kind === 'console') tabs.push(['simulate', 'Simulate']);
    tabs.forEach(function (t) {
      tabsEl.appendChild(el('button', {
        role: 'tab', id: 'tab-' + t[0], 'aria-selected': state.tab === t[0] ? 'true' : 'false',
        text: t[1], onclick: function () { state.tab = t[0]; render(); }
      }));
    });
  }
  function render() {
    renderMeta();
    renderTabs();
    clear(panelEl);
    if (state.tab === 'matrix') renderMatrix();
    else if (state.tab === 'readouts') renderReadouts();
    else if (state.tab === 'changes') renderChanges();
    else if (state.tab === 'denials') renderDenials();
    else if (state.tab === 'simulate') renderSimulate();
  }

  function contextSelect(id, onchange) {
    var s = el('select', { id: id, onchange: onchange });
    M.contexts.forEach(function (c, i) {
      var o = el('option', { value: i, text: contextLabel(c) });
      if (i === state.ctx) o.selected = true;
      s.appendChild(o);
    });
    return s;
  }

  // ------------------------------------------------------------ matrix
  var matrixEl, bodyEl, detailEl;
  function toolPasses(i, cfgRows) {
    var t = M.tools[i];
    if (state.group >= 0 && t[1] !== state.group) return false;
    if (state.name && t[0].toLowerCase().indexOf(state.name) < 0) return false;
    if (state.refusedOnly || state.reason) {
      var hit = false;
      for (var c = 0; c < cfgRows.length && !hit; c++) {
        var b = cfgRows[c][i];
        if (state.reason) {
          if (state.reason === 'offered') hit = b === 43;
          else if (state.reason === 'observed') hit = b === 126;
          else if (state.reason === 'approval') hit = b === 33;
          else hit = refused(b) && cellOf(b).code === state.reason;
        } else hit = refused(b);
      }
      if (!hit) return false;
    }
    return true;
  }
  function buildView() {
    var cfgRows = rows(state.ctx);
    var view = [];
    var filtering = state.name || state.reason || state.refusedOnly || state.group >= 0;
    byGroup.forEach(function (tools, g) {
      var pass = tools.filter(function (i) { return toolPasses(i, cfgRows); });
      if (!pass.length) return;
      view.push({ g: g, tools: pass });
      if (state.expanded.has(g) || (filtering && state.name)) pass.forEach(function (i) { view.push({ t: i }); });
    });
    state.view = view;
    if (state.cur.row >= view.length) state.cur.row = Math.max(0, view.length - 1);
  }
  function renderMatrix() {
    var reasonSel = el('select', { id: 'f-reason', onchange: function (e) { state.reason = e.target.value; refresh(); } },
      el('option', { value: '', text: 'any decision' }),
      el('option', { value: 'offered', text: 'offered' }),
      el('option', { value: 'observed', text: 'offered, observed only' }),
      el('option', { value: 'approval', text: 'offered, needs approval' }),
      M.reasons.map(function (r) { return el('option', { value: r.code, text: 'refused: ' + r.code }); }));
    reasonSel.value = state.reason;
    var groupSel = el('select', { id: 'f-group', onchange: function (e) { state.group = parseInt(e.target.value, 10); refresh(); } },
      el('option', { value: -1, text: 'every group' }),
      M.groups.map(function (g, i) { return el('option', { value: i, text: g }); }));
    groupSel.value = String(state.group);
    var name = el('input', { type: 'search', id: 'f-name', placeholder: 'tool name contains', value: state.name,
      oninput: function (e) { state.name = e.target.value.toLowerCase(); refresh(); } });
    var only = el('input', { type: 'checkbox', id: 'f-refused', onchange: function (e) { state.refusedOnly = e.target.checked; refresh(); } });
    only.checked = state.refusedOnly;
    var expand = el('button', { id: 'expand-all', text: 'Expand all groups', onclick: function () { M.groups.forEach(function (_, g) { state.expanded.add(g); }); refresh(); } });
    var collapse = el('button', { id: 'collapse-all', text: 'Collapse all groups', onclick: function () { state.expanded = new Set(); refresh(); } });
    panelEl.appendChild(el('div', { class: 'filters' },
      el('label', null, 'Context ', contextSelect('f-context', function (e) { state.ctx = parseInt(e.target.value, 10); refresh(); })),
      el('label', null, 'Tool ', name),
      el('label', null, 'Group ', groupSel),
      el('label', null, 'Decision ', reasonSel),
      el('label', null, only, 'only refused'),
      expand, collapse));
    var legend = el('div', { class: 'legend', id: 'legend' },
      el('span', null, el('i', { class: 'sw k-offered' }), 'offered'),
      el('span', null, el('i', { class: 'sw k-observed' }), 'offered, observed only'),
      el('span', null, el('i', { class: 'sw k-approval' }), 'offered, a person approves each call'),
      M.reasons.map(function (r) { return el('span', { title: r.message }, el('i', { class: 'sw k-' + r.code }), r.code + ' (' + r.letter + ')'); }),
      el('span', null, el('i', { class: 'sw k-configurationExcluded hid' }), 'hatched: name hidden from this user'),
      el('span', null, el('i', { class: 'sw agg-mixed' }), 'group row: tools offered / tools'));
    panelEl.appendChild(legend);
    if (!M.refusals) panelEl.appendChild(el('p', { class: 'note', text: 'Refusal texts are left out of this report (more than 200,000 refused cells): each cell still carries its reason; `toolgate decide --refusal` or the console give the text.' }));
    matrixEl = el('div', { class: 'matrix', id: 'matrix', tabindex: 0, role: 'grid', 'aria-label': 'access matrix: arrow keys move, Enter shows the cell, Space opens or closes a group',
      onscroll: function () { schedule(); }, onkeydown: onMatrixKey });
    var head = el('div', { class: 'mhead' }, el('div', { class: 'name', text: 'tool \\ configuration' }));
    M.configs.forEach(function (c) { head.appendChild(el('div', { class: 'col', title: c.name }, el('span', { text: c.name }))); });
    bodyEl = el('div', { class: 'mbody' });
    matrixEl.appendChild(head); matrixEl.appendChild(bodyEl);
    panelEl.appendChild(el('div', { id: 'count', class: 'meta' }));
    panelEl.appendChild(matrixEl);
    detailEl = el('div', { class: 'detail', id: 'detail', 'aria-live': 'polite' }, el('span', { class: 'note', text: 'Click a cell, or move to it with the arrow keys and press Enter.' }));
    panelEl.appendChild(detailEl);
    refresh();
  }
  function refresh() {
    buildView();
    var shownTools = state.view.filter(function (r) { return r.t !== undefined; }).length;
    var groups = state.view.filter(function (r) { return r.g !== undefined; });
    var total = groups.reduce(function (a, r) { return a + r.tools.length; }, 0);
    var count = document.getElementById('count');
    if (count) count.textContent = total + ' tools match in ' + groups.length + ' groups (' + shownTools + ' shown in open groups)';
    bodyEl.style.height = (state.view.length * ROW) + 'px';
    bodyEl.style.width = (260 + M.configs.length * 26) + 'px';
    drawn = null;
    draw();
  }
  var pending = false, drawn = null;
  function schedule() { if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; draw(); }); } }
  function draw() {
    if (!matrixEl) return;
    var top = Math.max(0, matrixEl.scrollTop - 110);
    var first = Math.max(0, Math.floor(top / ROW) - 5);
    var last = Math.min(state.view.length, Math.ceil((top + matrixEl.clientHeight) / ROW) + 5);
    var key = first + ':' + last + ':' + state.cur.row + ':' + state.cur.col;
    if (drawn === key) return;
    drawn = key;
    clear(bodyEl);
    var cfgRows = rows(state.ctx);
    for (var r = first; r < last; r++) bodyEl.appendChild(drawRow(state.view[r], r, cfgRows));
  }
  function drawRow(v, r, cfgRows) {
    var row, c;
    if (v.g !== undefined) {
      var open = state.expanded.has(v.g);
      row = el('div', { class: 'row g', 'data-group': M.groups[v.g], role: 'row' });
      row.style.top = (r * ROW) + 'px';
      row.appendChild(el('div', { class: 'name', title: M.groups[v.g], onclick: function () { toggle(v.g); } },
        (open ? '▾ ' : '▸ ') + M.groups[v.g] + ' (' + v.tools.length + ')'));
      for (c = 0; c < M.configs.length; c++) {
        var on = 0;
        for (var k = 0; k < v.tools.length; k++) { var b = cfgRows[c][v.tools[k]]; if (!refused(b)) on++; }
        var cls = on === v.tools.length ? 'agg-all' : on === 0 ? 'agg-none' : 'agg-mixed';
        var cell = el('div', { class: 'c ' + cls + (state.cur.row === r && state.cur.col === c ? ' cur' : ''),
          title: M.groups[v.g] + ' in ' + M.configs[c].name + ': ' + on + ' of ' + v.tools.length + ' offered',
          'data-group': M.groups[v.g], 'data-config': M.configs[c].name, 'data-offered': on, text: String(on) });
        cell.addEventListener('click', pick.bind(null, r, c));
        row.appendChild(cell);
      }
      return row;
    }
    var t = M.tools[v.t];
    row = el('div', { class: 'row t', role: 'row' });
    row.style.top = (r * ROW) + 'px';
    row.appendChild(el('div', { class: 'name', title: t[0] + (t[2] ? ' (remote)' : ''), text: t[0] }));
    for (c = 0; c < M.configs.length; c++) {
      var cellv = cellOf(cfgRows[c][v.t]);
      var ref = cellv.kind === 'refused' ? refusalOf(state.ctx, c, v.t) : null;
      var title = t[0] + ' in ' + M.configs[c].name + ': ' + verdictText(cellv) + (ref ? '\n' + ref[0] : '');
      var e = el('div', { class: 'c k-' + cellv.code + (cellv.hidden ? ' hid' : '') + (state.cur.row === r && state.cur.col === c ? ' cur' : ''),
        role: 'gridcell', title: title, 'data-tool': t[0], 'data-config': M.configs[c].name, 'data-code': cellv.code,
        'data-hidden': cellv.hidden ? '1' : '0',
        text: cellv.kind === 'refused' ? String.fromCharCode(cfgRows[c][v.t]) : '' });
      e.addEventListener('click', pick.bind(null, r, c));
      row.appendChild(e);
    }
    return row;
  }
  function toggle(g) { if (state.expanded.has(g)) state.expanded.delete(g); else state.expanded.add(g); refresh(); }
  function pick(r, c) { state.cur = { row: r, col: c }; drawn = null; draw(); showDetail(); }
  function onMatrixKey(e) {
    var cur = state.cur, n = state.view.length, moved = true;
    if (e.key === 'ArrowDown') cur.row = Math.min(n - 1, cur.row + 1);
    else if (e.key === 'ArrowUp') cur.row = Math.max(0, cur.row - 1);
    else if (e.key === 'ArrowRight') cur.col = Math.min(M.configs.length - 1, cur.col + 1);
    else if (e.key === 'ArrowLeft') cur.col = Math.max(0, cur.col - 1);
    else if (e.key === 'PageDown') cur.row = Math.min(n - 1, cur.row + 20);
    else if (e.key === 'PageUp') cur.row = Math.max(0, cur.row - 20);
    else if (e.key === 'Home') cur.col = 0;
    else if (e.key === 'End') cur.col = M.configs.length - 1;
    else if (e.key === 'Enter') { showDetail(); moved = false; }
    else if (e.key === ' ') { var v = state.view[cur.row]; if (v && v.g !== undefined) toggle(v.g); moved = false; }
    else return;
    e.preventDefault();
    if (moved) {
      var y = cur.row * ROW + 110;
      if (y < matrixEl.scrollTop + 110) matrixEl.scrollTop = y - 110;
      else if (y + ROW > matrixEl.scrollTop + matrixEl.clientHeight) matrixEl.scrollTop = y + ROW - matrixEl.clientHeight;
      var x = 260 + cur.col * 26;
      if (x + 26 > matrixEl.scrollLeft + matrixEl.clientWidth) matrixEl.scrollLeft = x + 26 - matrixEl.clientWidth;
      else if (x - 260 < matrixEl.scrollLeft) matrixEl.scrollLeft = Math.max(0, x - 260);
      drawn = null; draw();
    }
  }
  function dl(pairs) {
    var d = el('dl');
    pairs.forEach(function (p) { if (p[1] !== null && p[1] !== undefined) { d.appendChild(el('dt', { text: p[0] })); d.appendChild(el('dd', { text: p[1] })); } });
    return d;
  }
  function showDetail() {
    var v = state.view[state.cur.row];
    if (!v) return;
    var c = state.cur.col, cfg = M.configs[c];
    clear(detailEl);
    if (v.g !== undefined) {
      var cfgRows = rows(state.ctx);
      var off = v.tools.filter(function (i) { return !refused(cfgRows[c][i]); }).length;
      detailEl.appendChild(dl([['group', M.groups[v.g]], ['configuration', cfg.name], ['context', contextLabel(M.contexts[state.ctx])],
        ['offered', off + ' of ' + v.tools.length + ' tools (Space or a click on the name opens the group)']]));
      return;
    }
    var t = M.tools[v.t], cell = cellOf(rows(state.ctx)[c][v.t]);
    var ref = cell.kind === 'refused' ? refusalOf(state.ctx, c, v.t) : null;
    var by = (excludedBy.get(v.t) || []).map(function (i) { return M.configs[i].name; });
    detailEl.appendChild(dl([
      ['tool', t[0] + (t[2] ? ' (remote)' : '')], ['group', M.groups[t[1]]], ['configuration', cfg.name + ' (' + cfg.file + ')'],
      ['context', contextLabel(M.contexts[state.ctx])], ['decision', verdictText(cell)],
      ['what the model is told', ref ? ref[0] : (cell.kind === 'refused' && !M.refusals ? '(left out of this report)' : null)],
      ['remediation', ref ? ref[1] : null],
      ['excluded by', by.length ? by.join(', ') : 'no configuration']]));
    if (boot.kind === 'console') {
      detailEl.appendChild(el('button', { id: 'detail-simulate', text: 'Explain gate by gate in the simulation', onclick: function () {
        var ctx = M.contexts[state.ctx];
        sim = { configuration: cfg.name, role: ctx.role, consumer: ctx.consumer, enforcement: ctx.mode, run: '', tools: t[0] };
        state.tab = 'simulate'; render(); runSimulation();
      } }));
    }
  }

  // ------------------------------------------------------------ readouts
  function renderReadouts() {
    var cfgSel = el('select', { id: 'r-config' });
    M.configs.forEach(function (c, i) { cfgSel.appendChild(el('option', { value: i, text: c.name })); });
    cfgSel.value = String(state.rcfg || 0);
    var out = el('div', { id: 'r-config-out' });
    var ctxSel = contextSelect('r-context', function (e) { state.ctx = parseInt(e.target.value, 10); showConfig(); });
    function showConfig() {
      var i = parseInt(cfgSel.value, 10); state.rcfg = i;
      var c = M.configs[i];
      clear(out);
      out.appendChild(dl([['configuration', c.name], ['file', c.file], ['provider', c.provider === null ? '- (least trusted zone)' : c.provider],
        ['trust zone', c.zone + ' (ceiling ' + c.ceiling + ')'], ['groups', c.groups === null ? 'every group' : c.groups.join(', ') || '-']]));
      out.appendChild(el('h2', { text: 'Excluded (' + c.excluded.length + ')' }));
      out.appendChild(list('r-excluded', c.excluded.map(function (t) { return M.tools[t][0]; })));
      out.appendChild(el('h2', { text: 'Excluded names no longer registered (' + c.noLongerRegistered.length + ')' }));
      out.appendChild(list('r-stale', c.noLongerRegistered));
      var cr = rows(state.ctx)[i], un = [];
      for (var t = 0; t < M.tools.length; t++) {
        var b = cr[t];
        // The runtime's unavailable list: refused tools whose names this user may see, in registry order.
        if (refused(b) && String.fromCharCode(b) === String.fromCharCode(b).toLowerCase()) un.push(M.tools[t][0] + ' ' + cellOf(b).code);
      }
      out.appendChild(el('h2', { text: 'Unavailable list as the model gets it (' + contextLabel(M.contexts[state.ctx]) + ', ' + un.length + ')' }));
      out.appendChild(list('r-unavailable', un));
    }
    cfgSel.addEventListener('change', showConfig);
    var toolIn = el('input', { type: 'search', id: 'r-tool', placeholder: 'tool name contains' });
    var toolOut = el('div', { id: 'r-tool-out' });
    function showTools() {
      var q = toolIn.value.toLowerCase(), shown = 0, tb = el('tbody');
      for (var i = 0; i < M.tools.length && shown < 500; i++) {
        if (q && M.tools[i][0].toLowerCase().indexOf(q) < 0) continue;
        if (!q && !excludedBy.has(i)) continue;
        shown++;
        var by = (excludedBy.get(i) || []).map(function (c) { return M.configs[c].name; });
        tb.appendChild(el('tr', { 'data-tool': M.tools[i][0] }, el('td', { text: M.tools[i][0] }), el('td', { text: M.groups[M.tools[i][1]] }), el('td', { text: by.length ? by.join(', ') : '-' })));
      }
      clear(toolOut);
      toolOut.appendChild(el('table', { class: 'list', id: 'r-tools' }, el('thead', null, el('tr', null, el('th', { text: 'tool' }), el('th', { text: 'group' }), el('th', { text: 'excluded by' }))), tb));
      if (shown === 500) toolOut.appendChild(el('p', { class: 'note', text: 'The first 500 matches; narrow the name.' }));
      if (!q) toolOut.appendChild(el('p', { class: 'note', text: 'Tools some configuration excludes; type a name for any tool.' }));
    }
    toolIn.addEventListener('input', showTools);
    panelEl.appendChild(el('div', { class: 'cols' },
      el('section', null, el('h2', { text: 'Per configuration' }), el('div', { class: 'filters' }, el('label', null, 'Configuration ', cfgSel), el('label', null, 'Context ', ctxSel)), out),
      el('section', null, el('h2', { text: 'Per tool: the configurations that exclude it' }), el('div', { class: 'filters' }, el('label', null, 'Tool ', toolIn)), toolOut)));
    showConfig(); showTools();
  }
  function list(id, items) {
    if (!items.length) return el('p', { id: id, class: 'note', text: 'none' });
    var ul = el('ul', { id: id });
    items.slice(0, 2000).forEach(function (s) { ul.appendChild(el('li', { text: s })); });
    if (items.length > 2000) ul.appendChild(el('li', { class: 'note', text: '… and ' + (items.length - 2000) + ' more' }));
    return ul;
  }

  // ------------------------------------------------------------ changes
  function pointText(p) {
    var who = p.consumer === null ? 'no consumer' : p.consumer === '*' ? 'consumer without a profile' : 'consumer ' + p.consumer;
    return p.role + ' · ' + who + ' · ' + (p.mode === null ? 'as configured' : p.mode);
  }
  function verdict(v) {
    if (v.allowed) return v.observedOnly ? 'offered (observed only)' : 'offered';
    return v.reason ? 'refused: ' + v.reason : 'refused';
  }
  function renderChanges() {
    var D = R.diff.diff, s = D.summary;
    panelEl.appendChild(el('p', { class: 'meta', text: 'Against ' + R.diff.oldName + ' (table sha256 ' + R.diff.oldDigest + '); ' + s.decisions + ' decisions compared.' }));
    panelEl.appendChild(el('div', { class: 'counts', id: 'diff-counts' },
      el('div', { class: 'd-widened', 'data-count': 'widened' }, el('b', { text: String(s.widened) }), 'widened'),
      el('div', { class: 'd-narrowed', 'data-count': 'narrowed' }, el('b', { text: String(s.narrowed) }), 'narrowed'),
      el('div', { class: 'd-reasonChanged', 'data-count': 'reasonChanged' }, el('b', { text: String(s.reasonChanged) }), 'reason changed'),
      el('div', null, el('b', { text: D.toolsAdded.length + ' / ' + D.toolsRemoved.length }), 'tools added / removed'),
      el('div', null, el('b', { text: D.configurationsAdded.length + ' / ' + D.configurationsRemoved.length }), 'configurations added / removed')));
    var inv = [];
    if (D.toolsAdded.length) inv.push(['tools added', D.toolsAdded.join(', ')]);
    if (D.toolsRemoved.length) inv.push(['tools removed', D.toolsRemoved.join(', ')]);
    if (D.configurationsAdded.length) inv.push(['configurations added', D.configurationsAdded.join(', ')]);
    if (D.configurationsRemoved.length) inv.push(['configurations removed', D.configurationsRemoved.join(', ')]);
    D.settings.forEach(function (st) { inv.push(['setting ' + st[0], st[1] + ' → ' + st[2]]); });
    if (inv.length) panelEl.appendChild(dl(inv));
    if (!D.changes.length) { panelEl.appendChild(el('p', { id: 'diff-none', text: 'No decision changes.' })); return; }
    var kindSel = el('select', { id: 'd-kind' }, el('option', { value: '', text: 'every change' }),
      el('option', { value: 'widened', text: 'widened' }), el('option', { value: 'narrowed', text: 'narrowed' }), el('option', { value: 'reasonChanged', text: 'reason changed' }));
    var box = el('div', { id: 'diff-matrix' });
    var info = el('div', { class: 'detail', id: 'diff-detail', 'aria-live': 'polite' }, el('span', { class: 'note', text: 'Click a change to see where it happens.' }));
    panelEl.appendChild(el('div', { class: 'filters' }, el('label', null, 'Show ', kindSel),
      el('span', null, el('i', { class: 'sw d-widened' }), ' widened (newly offered) '), el('span', null, el('i', { class: 'sw d-narrowed' }), ' narrowed '),
      el('span', null, el('i', { class: 'sw d-reasonChanged' }), ' reason changed')));
    panelEl.appendChild(box); panelEl.appendChild(info);
    function draw() {
      var k = kindSel.value;
      var ch = D.changes.filter(function (c) { return !k || c.kind === k; });
      // Names are data: Maps, so that a tool or configuration named
      // `__proto__`, `constructor`, `toString` or `hasOwnProperty` gets its row.
      var tools = [], cfgs = [], ti = new Map(), ci = new Map(), at = new Map();
      ch.forEach(function (c) {
        if (!ti.has(c.tool)) { ti.set(c.tool, tools.length); tools.push(c.tool); }
        if (!ci.has(c.configuration)) { ci.set(c.configuration, cfgs.length); cfgs.push(c.configuration); }
        var key = c.tool + '\u0000' + c.configuration;
        if (!at.has(key)) at.set(key, []);
        at.get(key).push(c);
      });
      clear(box);
      var tb = el('tbody');
      tools.slice(0, 2000).forEach(function (t) {
        var tr = el('tr', null, el('th', { text: t, scope: 'row' }));
        cfgs.forEach(function (cf) {
          var cs = at.get(t + '\u0000' + cf);
          if (!cs) { tr.appendChild(el('td')); return; }
          var kind = cs.some(function (c) { return c.kind === 'widened'; }) ? 'widened' : cs.some(function (c) { return c.kind === 'narrowed'; }) ? 'narrowed' : 'reasonChanged';
          var title = cs.map(function (c) { return c.kind + ': ' + verdict(c.old) + ' → ' + verdict(c.new) + (c.everywhere ? ' (everywhere)' : ' (' + c.points.length + ' points)'); }).join('\n');
          var b = el('button', { class: 'd-' + kind, title: title, 'data-tool': t, 'data-config': cf, 'data-kind': kind,
            text: kind === 'widened' ? '+' : kind === 'narrowed' ? '−' : '≠', onclick: function () {
              clear(info);
              info.appendChild(dl([['tool', t], ['configuration', cf]]));
              cs.forEach(function (c) {
                info.appendChild(el('p', null, el('strong', { text: c.kind }), ' ' + verdict(c.old) + ' → ' + verdict(c.new) + (c.everywhere ? ', at every point' : '')));
                info.appendChild(list('', c.points.map(pointText)));
              });
            } });
          tr.appendChild(el('td', null, b));
        });
        tb.appendChild(tr);
      });
      var head = el('tr', null, el('th', { text: 'tool \\ configuration' }));
      cfgs.forEach(function (c) { head.appendChild(el('th', { text: c, scope: 'col' })); });
      box.appendChild(el('table', { class: 'list' }, el('thead', null, head), tb));
      if (tools.length > 2000) box.appendChild(el('p', { class: 'note', text: 'The first 2000 tools with changes.' }));
    }
    kindSel.addEventListener('change', draw);
    draw();
  }

  // ------------------------------------------------------------ denials
  var reasonColour = new Map([['notRegistered', '#6e7781'], ['toolDisabled', '#8c959f'], ['requiresAdmin', '#8250df'], ['notInProfile', '#bf3989'], ['configurationGroup', '#0969da'], ['configurationExcluded', '#cf222e'], ['trustZone', '#bc4c00']]);
  function colourOf(code) { return reasonColour.get(code) || '#000000'; }
  function renderDenials() {
    var L = R.denials, S = L.stats;
    panelEl.appendChild(el('div', { class: 'counts', id: 'log-counts' },
      el('div', null, el('b', { text: String(S.decisions) }), 'decisions'),
      el('div', null, el('b', { text: String(S.refused) }), 'refused'),
      el('div', null, el('b', { text: String(S.observedOnly) }), 'observed only')));
    if (!L.buckets.length) { panelEl.appendChild(el('p', { text: 'The log holds no decisions.' })); return; }
    // Over time: a stacked bar per bucket.
    var W = 900, H = 220, P = 40, n = L.buckets.length, bw = (W - P - 10) / n;
    var max = Math.max.apply(null, L.buckets.map(function (b) { return b[1]; }).concat([1]));
    var chart = svg('svg', { id: 'chart-time', width: W, height: H + 30, role: 'img', 'aria-label': 'denials over time' });
    chart.appendChild(svg('text', { x: 0, y: 12, text: String(max) }));
    chart.appendChild(svg('text', { x: 0, y: H, text: '0' }));
    L.buckets.forEach(function (b, i) {
      var y = H;
      L.reasons.forEach(function (code, r) {
        var v = b[2 + r]; if (!v) return;
        var h = (H - 10) * v / max;
        y -= h;
        var rect = svg('rect', { x: P + i * bw, y: y, width: Math.max(1, bw - 1), height: h, fill: colourOf(code), 'data-reason': code, 'data-count': v });
        rect.appendChild(svg('title', { text: new Date(L.startMs + i * L.bucketMs).toISOString() + ': ' + v + ' ' + code }));
        chart.appendChild(rect);
      });
    });
    chart.appendChild(svg('text', { x: P, y: H + 20, text: new Date(L.startMs).toISOString() }));
    chart.appendChild(svg('text', { x: W - 200, y: H + 20, text: new Date(L.startMs + n * L.bucketMs).toISOString() }));
    panelEl.appendChild(el('h2', { text: 'Denials over time (' + (L.bucketMs / 1000) + ' s per bar)' }));
    panelEl.appendChild(chart);
    panelEl.appendChild(el('h2', { text: 'Denials per reason' }));
    panelEl.appendChild(bars('chart-reason', S.byReason ? Object.keys(S.byReason).map(function (k) { return [k, S.byReason[k], k]; }) : []));
    var perCfg = Object.keys(S.byConfiguration).map(function (c) {
      var m = S.byConfiguration[c]; return [c, Object.keys(m).reduce(function (a, k) { return a + m[k]; }, 0), null, m];
    }).sort(function (a, b) { return b[1] - a[1] || (a[0] < b[0] ? -1 : 1); });
    panelEl.appendChild(el('h2', { text: 'Denials per configuration' + (perCfg.length > 30 ? ' (the 30 most refused)' : '') }));
    panelEl.appendChild(bars('chart-config', perCfg.slice(0, 30)));
  }
  function bars(id, items) {
    var W = 900, H = 20, L = 260;
    var max = Math.max.apply(null, items.map(function (x) { return x[1]; }).concat([1]));
    var s = svg('svg', { id: id, width: W, height: items.length * H + 4, role: 'img', 'aria-label': id });
    items.forEach(function (it, i) {
      s.appendChild(svg('text', { x: 0, y: i * H + 14, text: it[0].length > 40 ? it[0].slice(0, 39) + '…' : it[0] }));
      var x = L;
      var parts = it[3] ? Object.keys(it[3]).map(function (k) { return [k, it[3][k]]; }) : [[it[2], it[1]]];
      parts.forEach(function (p) {
        var w = (W - L - 60) * p[1] / max;
        var r = svg('rect', { x: x, y: i * H + 3, width: Math.max(1, w), height: H - 6, fill: colourOf(p[0]), 'data-label': it[0], 'data-reason': p[0], 'data-count': p[1] });
        r.appendChild(svg('title', { text: it[0] + ': ' + p[1] + ' ' + p[0] }));
        s.appendChild(r); x += w;
      });
      s.appendChild(svg('text', { x: x + 4, y: i * H + 14, text: String(it[1]) }));
    });
    return s;
  }

  // ------------------------------------------------------------ console
  var token = null;
  try { token = sessionStorage.getItem('toolgate-token'); } catch (e) { token = null; }
  var sim = { configuration: '', role: 'user', consumer: null, enforcement: null, run: '', tools: '' };
  function api(path, body) {
    var h = {};
    if (token) h.Authorization = 'Bearer ' + token;
    if (body !== undefined) h['Content-Type'] = 'application/json';
    return fetch(path, { method: body === undefined ? 'GET' : 'POST', headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' })
      .then(function (r) { return r.json().then(function (j) { return { status: r.status, body: j }; }, function () { return { status: r.status, body: null }; }); });
  }
  // The service's error answers: {"error": {"status", "code", "message"}}.
  function errorText(r) { return r.body && r.body.error ? r.body.error.message : null; }
  function askToken(message) {
    clear(app);
    var input = el('input', { type: 'password', id: 'token', autocomplete: 'off' });
    app.appendChild(el('main', { class: 'panel' }, el('h1', { text: 'toolgate console' }), el('p', { class: 'err', text: message }),
      el('label', null, 'Bearer token (an API key of the service\'s --auth file) ', input),
      el('button', { id: 'token-go', text: 'Sign in', onclick: function () {
        token = input.value; try { sessionStorage.setItem('toolgate-token', token); } catch (e) { /* not kept */ }
        startConsole();
      } })));
    input.focus();
  }
  function startConsole() {
    api('/console/v1/report').then(function (r) {
      if (r.status === 401) { askToken(errorText(r) || 'This service requires authentication.'); return; }
      if (r.status !== 200) { clear(app); app.appendChild(el('p', { class: 'err', text: 'The service answered ' + r.status })); return; }
      load(r.body);
      shell('toolgate console: ' + R.title);
      render();
      setInterval(poll, 3000);
    }, function (e) { clear(app); app.appendChild(el('p', { class: 'err', text: 'The service did not answer: ' + e })); });
  }
  function poll() {
    api('/console/v1/digest').then(function (r) {
      if (r.status !== 200 || !r.body || r.body.digest === M.digest) return;
      api('/console/v1/report').then(function (full) {
        if (full.status !== 200) return;
        var tab = state.tab;
        load(full.body);
        state.tab = tab;
        clear(bannerEl);
        bannerEl.appendChild(el('div', { class: 'banner', id: 'reloaded', text: 'The service reloaded its table at ' + new Date().toISOString() + ': now sha256 ' + M.digest }));
        render();
      });
    });
  }
  function renderSimulate() {
    if (!sim.configuration) sim.configuration = M.configs.length ? M.configs[0].name : '';
    function sel(id, options, value, set) {
      var s = el('select', { id: id, onchange: function (e) { set(e.target.value); } });
      options.forEach(function (o) { var op = el('option', { value: o[0], text: o[1] }); if (o[0] === value) op.selected = true; s.appendChild(op); });
      return s;
    }
    var consumerOpts = [['', 'no consumer'], ['*', 'a consumer without a profile']].concat(M.consumers.map(function (c) { return [c, c]; }));
    var form = el('div', { class: 'filters' },
      el('label', null, 'Configuration ', sel('s-config', M.configs.map(function (c) { return [c.name, c.name]; }), sim.configuration, function (v) { sim.configuration = v; })),
      el('label', null, 'Role ', sel('s-role', [['user', 'user'], ['admin', 'admin'], ['none', 'none']], sim.role, function (v) { sim.role = v; })),
      el('label', null, 'Consumer ', sel('s-consumer', consumerOpts, sim.consumer === null ? '' : sim.consumer, function (v) { sim.consumer = v === '' ? null : v; })),
      el('label', null, 'Enforcement ', sel('s-enforcement', [['', 'as configured'], ['observe', 'observe'], ['enforce', 'enforce']], sim.enforcement === null ? '' : sim.enforcement, function (v) { sim.enforcement = v === '' ? null : v; })));
    var tools = el('input', { type: 'text', id: 's-tools', placeholder: 'tools to explain, comma-separated', value: sim.tools, oninput: function (e) { sim.tools = e.target.value; } });
    var run = el('textarea', { id: 's-run', rows: 3, cols: 60, placeholder: 'optional: a stored run state (JSON of `toolgate run start`)', oninput: function (e) { sim.run = e.target.value; } });
    run.value = sim.run;
    panelEl.appendChild(form);
    panelEl.appendChild(el('div', { class: 'filters' }, el('label', null, 'Explain ', tools)));
    panelEl.appendChild(el('div', { class: 'filters' }, el('label', null, 'Stored run ', run)));
    panelEl.appendChild(el('button', { id: 's-go', text: 'Ask the gate', onclick: runSimulation }));
    panelEl.appendChild(el('div', { id: 's-out' }));
  }
  function runSimulation() {
    var out = document.getElementById('s-out');
    if (!out) return;
    var req = { configuration: sim.configuration, role: sim.role, consumer: sim.consumer, enforcement: sim.enforcement,
      tools: sim.tools.split(',').map(function (s) { return s.trim(); }).filter(function (s) { return s; }) };
    if (sim.run.trim()) {
      try { req.run = JSON.parse(sim.run); } catch (e) { clear(out); out.appendChild(el('p', { class: 'err', id: 's-error', text: 'The stored run is not JSON: ' + e.message })); return; }
    }
    clear(out);
    out.appendChild(el('p', { class: 'note', text: 'asking…' }));
    api('/console/v1/simulate', req).then(function (r) {
      clear(out);
      if (r.status === 401) { askToken(errorText(r) || 'authentication required'); return; }
      if (r.status !== 200) { out.appendChild(el('p', { class: 'err', id: 's-error', text: errorText(r) || ('the service answered ' + r.status) })); return; }
      var s = r.body;
      var offered = s.decisions.filter(function (d) { return d.allowed; }).length;
      out.appendChild(el('p', { id: 's-summary', text: offered + ' of ' + s.decisions.length + ' tools offered to ' + s.configuration + ' (' + s.role + ', ' +
        (s.consumer === null ? 'no consumer' : 'consumer ' + s.consumer + (s.profile ? ', profile ' + s.profile : ', no profile')) + ', ' + s.mode + '); table sha256 ' + s.digest }));
      s.explain.forEach(function (x, i) {
        var ul = el('ul', { class: 'gates' });
        x.gates.forEach(function (g) {
          var cls = g.outcome === 'passed' ? 'pass' : g.outcome === 'refused' ? 'refuse' : 'observe';
          ul.appendChild(el('li', { class: cls, 'data-gate': g.gate, 'data-outcome': g.outcome, text: (g.outcome === 'passed' ? 'pass ' : g.outcome === 'refused' ? 'REFUSE ' : 'observe ') + g.gate }));
        });
        var ref = s.refusals[i];
        out.appendChild(el('section', { class: 'detail', 'data-explain': x.tool },
          el('h2', { text: x.tool + ': ' + (x.allowed ? (x.observedOnly ? 'offered (observed only)' : 'offered') : 'refused: ' + x.reason) }), ul,
          ref ? dl([['what the model is told', ref.modelText], ['remediation', ref.remediation]]) : null));
      });
      out.appendChild(el('h2', { text: 'Unavailable list (' + s.unavailable.length + ')' }));
      out.appendChild(list('s-unavailable', s.unavailable.map(function (u) { return u.tool + ' ' + u.reason; })));
      out.appendChild(el('h2', { text: 'As the model gets it' }));
      out.appendChild(el('pre', { id: 's-prompt', text: s.prompt || '(nothing is unavailable)' }));
      out.appendChild(el('h2', { text: 'Decisions' }));
      var tb = el('tbody');
      s.decisions.slice(0, 1000).forEach(function (d) {
        tb.appendChild(el('tr', { 'data-tool': d.tool }, el('td', { text: d.tool }), el('td', { text: d.allowed ? (d.observedOnly ? 'observed' : 'yes') : 'no' }), el('td', { text: d.reason || '-' })));
      });
      out.appendChild(el('table', { class: 'list', id: 's-decisions' }, el('thead', null, el('tr', null, el('th', { text: 'tool' }), el('th', { text: 'offered' }), el('th', { text: 'reason' }))), tb));
      if (s.decisions.length > 1000) out.appendChild(el('p', { class: 'note', text: 'The first 1000 decisions.' }));
    }, function (e) { clear(out); out.appendChild(el('p', { class: 'err', id: 's-error', text: 'The service did not answer: ' + e })); });
  }

  // ------------------------------------------------------------ start
  if (boot.kind === 'console') startConsole();
  else { load(boot.report); shell('toolgate access report: ' + R.title); render(); }
  if (window.performance && performance.mark) performance.mark('toolgate-rendered');
}());
