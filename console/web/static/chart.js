// Small SVG charts for the console (no library): line charts for curves
// and a histogram for latencies. Values are numbers; labels go in with
// textContent.
'use strict';

const Charts = (() => {
  const NS = 'http://www.w3.org/2000/svg';
  const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

  function svg(tag, attrs) {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    return n;
  }

  function text(x, y, s, anchor) {
    const t = svg('text', {x, y, 'font-size': 11, fill: '#555', 'text-anchor': anchor || 'start'});
    t.textContent = s;
    return t;
  }

  function niceRange(lo, hi) {
    if (!isFinite(lo) || !isFinite(hi)) return [0, 1];
    if (lo === hi) { const d = Math.abs(lo) || 1; return [lo - d / 2, hi + d / 2]; }
    return [lo, hi];
  }

  // line draws series [{name, points: [[x, y], …]}] into a new <svg>.
  function line(series, opts = {}) {
    const W = opts.width || 560, H = opts.height || 220, L = 48, R = 12, T = 12, B = 28;
    const root = svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img'});
    const pts = series.flatMap((s) => s.points);
    const [x0, x1] = niceRange(Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0])));
    const [y0, y1] = niceRange(Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1])));
    const sx = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
    const sy = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
    root.append(svg('line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#bbb'}));
    root.append(svg('line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#bbb'}));
    for (let i = 0; i <= 4; i++) {
      const y = y0 + (y1 - y0) * i / 4;
      root.append(text(L - 4, sy(y) + 4, Number(y.toPrecision(3)).toString(), 'end'));
    }
    root.append(text(L, H - 8, String(Math.round(x0))), text(W - R, H - 8, String(Math.round(x1)), 'end'));
    if (opts.xLabel) root.append(text((L + W) / 2, H - 8, opts.xLabel, 'middle'));
    series.forEach((s, i) => {
      if (!s.points.length) return;
      const d = s.points.map((p, j) => (j ? 'L' : 'M') + sx(p[0]).toFixed(1) + ' ' + sy(p[1]).toFixed(1)).join(' ');
      root.append(svg('path', {d, fill: 'none', stroke: COLORS[i % COLORS.length], 'stroke-width': 1.8}));
      const label = text(L + 8 + 110 * i, T + 10, s.name);
      label.setAttribute('fill', COLORS[i % COLORS.length]);
      root.append(label);
    });
    return root;
  }

  // histogram draws counts of values in equal-width bins.
  function histogram(values, opts = {}) {
    const W = opts.width || 420, H = opts.height || 160, L = 36, B = 24, T = 8, bins = opts.bins || 20;
    const root = svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img'});
    if (!values.length) { root.append(text(W / 2, H / 2, 'no data yet', 'middle')); return root; }
    const lo = Math.min(...values), hi = Math.max(...values) + 1e-9;
    const counts = new Array(bins).fill(0);
    for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / (hi - lo) * bins))]++;
    const max = Math.max(...counts), bw = (W - L) / bins;
    counts.forEach((c, i) => {
      const h = (H - B - T) * c / max;
      root.append(svg('rect', {x: L + i * bw + 1, y: H - B - h, width: bw - 2, height: h, fill: '#2563eb'}));
    });
    const unit = opts.unit || '';
    root.append(text(L, H - 6, lo.toFixed(0) + unit), text(W, H - 6, hi.toFixed(0) + unit, 'end'), text(L - 4, T + 10, String(max), 'end'));
    return root;
  }

  return {line, histogram};
})();
