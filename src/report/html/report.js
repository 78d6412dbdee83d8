/*
 * report.js: draws the HTML report (docs/html-report.md) from the report's JSON, embedded once
 * in #opscope-data: the same object `opscope report --format json` writes. Plain DOM and SVG,
 * no library. Invariants: every string from the trace reaches the document through
 * textContent, createTextNode or setAttribute (never innerHTML), so a name is always text; a
 * section whose tables are absent from the JSON is left out; every number shown keeps its raw
 * JSON value in a data-v attribute (the browser test compares them with the JSON report).
 */
'use strict';
(function () {
	const D = JSON.parse(document.getElementById('opscope-data').textContent);
	const TABLES = Array.isArray(D.tables) ? D.tables : [];
	const used = new Set(); /* tables drawn by a section: the rest go to "More tables" */
	const SVGNS = 'http://www.w3.org/2000/svg';
	const NCOL = 10;

	/* ---------------------------------------------------------------------------------- */
	/* DOM helpers: text only, never markup */

	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const k in attrs || {})
			if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, String(attrs[k]));
		for (const c of kids) add(e, c);
		return e;
	}
	function sv(tag, attrs, ...kids) {
		const e = document.createElementNS(SVGNS, tag);
		for (const k in attrs || {})
			if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, String(attrs[k]));
		for (const c of kids) add(e, c);
		return e;
	}
	function add(e, c) {
		if (c === null || c === undefined || c === false) return;
		if (Array.isArray(c)) { for (const x of c) add(e, x); return; }
		e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
	}
	function tip(text) { return sv('title', null, text); }

	/* ---------------------------------------------------------------------------------- */
	/* Formats (the JSON keeps ns, fractions and bytes) */

	function fmtNs(ns) {
		if (ns === null || ns === undefined) return '-';
		const a = Math.abs(ns);
		if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
		if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
		if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
		return ns + ' ns';
	}
	function fmtPct(r) { return r === null || r === undefined ? '-' : (r * 100).toFixed(2) + '%'; }
	function fmtBytes(b) {
		if (b === null || b === undefined) return '-';
		const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
		let i = 0, v = b;
		while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
		return i ? v.toFixed(2) + ' ' + u[i] : b + ' B';
	}
	function fmtNum(x) {
		if (x === null || x === undefined) return '-';
		if (typeof x !== 'number') return String(x);
		if (Number.isInteger(x)) return x.toLocaleString('en-US');
		const a = Math.abs(x);
		return a >= 1000 ? x.toFixed(1) : a >= 1 ? x.toFixed(3) : x.toPrecision(3);
	}
	const FRACTION_KEYS = new Set(['share', 'utilization', 'kernel_busy', 'device_busy',
		'sm_efficiency', 'compute', 'communication', 'memcpy', 'memset', 'idle_data',
		'idle_sync', 'idle_host', 'idle_other']);
	/* How a column's numbers read: ns, pct, bytes, num, or t (text). */
	function colKind(key, rows) {
		let v = null;
		for (const r of rows) if (r[key] !== null && r[key] !== undefined) { v = r[key]; break; }
		if (typeof v === 'string') return 't';
		if (/(^|_)ns$/.test(key)) return 'ns';
		if (/(ratio|share)$/.test(key) || FRACTION_KEYS.has(key)) return 'pct';
		if (/(^|_)bytes$/.test(key)) return 'bytes'; /* not gbytes (GB) */
		return 'num';
	}
	function fmt(kind, v) {
		if (kind === 'ns') return fmtNs(v);
		if (kind === 'pct') return fmtPct(v);
		if (kind === 'bytes') return fmtBytes(v);
		if (kind === 't') return v === null || v === undefined ? '' : String(v);
		return fmtNum(v);
	}

	/* ---------------------------------------------------------------------------------- */
	/* Tables of the JSON */

	function find(view, title) {
		return TABLES.find(t => t.view === view && (title === undefined || t.title === title) &&
			Array.isArray(t.rows) && t.rows.length) || null;
	}
	function findAll(view) { return TABLES.filter(t => t.view === view && t.rows && t.rows.length); }
	function use(t) { if (t) used.add(t); return t; }

	/* The trace's start on the timeline's axis (the first window or step of the step view's
	 * timeline tables), so that times read "+12.345 ms" as on the timeline; null without
	 * them. */
	const T0 = (() => {
		let t0 = Infinity;
		for (const t of TABLES)
			if (t.view === 'step' && (t.title === 'Timeline' || t.title === 'Timeline: Steps') && Array.isArray(t.rows))
				for (const r of t.rows) if (typeof r.start_ns === 'number') t0 = Math.min(t0, r.start_ns);
		return t0 < Infinity ? t0 : null;
	})();
	/* A time since T0. Epoch ns lie beyond 2^53, where a double holds them to within 256 ns:
	 * there the difference is rounded to the us, which Kineto's timestamps are in anyway. */
	function fmtRel(v) {
		if (typeof v !== 'number' || T0 === null) return fmtNs(v);
		let d = v - T0;
		if (Math.abs(T0) > Number.MAX_SAFE_INTEGER) d = Math.round(d / 1000) * 1000;
		return (d < 0 ? '-' : '+') + fmtNs(Math.abs(d));
	}
	/* A short, distinct label for a step: "#5" for "ProfilerStep#5"; the rest as it is. */
	function shortStep(s) {
		const m = /#(\d+)$/.exec(String(s));
		return m ? '#' + m[1] : String(s);
	}

	/* A sortable, searchable table of every column of t; rows under a row (level > 0) stay
	 * under it. The headers are the text report's (the JSON's "columns"), the key in each
	 * header's tooltip; opts.rel names the columns of times on the timeline's axis, shown
	 * from the trace's start. Tables of fewer than 10 rows get no search. */
	let tableSeq = 0;
	function dataTable(t, opts) {
		use(t);
		opts = opts || {};
		const id = 'tbl' + (++tableSeq);
		const keys = [], titles = {};
		for (const c of Array.isArray(t.columns) ? t.columns : [])
			if (c && typeof c.key === 'string' && !keys.includes(c.key)) { keys.push(c.key); titles[c.key] = String(c.title || c.key); }
		for (const r of t.rows) for (const k in r) if (k !== 'level' && !keys.includes(k)) keys.push(k);
		const rel = new Set(T0 === null ? [] : opts.rel || []);
		const kinds = {};
		for (const k of keys) kinds[k] = colKind(k, t.rows);
		const groups = [];
		t.rows.forEach((r, i) => {
			if (!r.level || !groups.length) groups.push({ head: r, i: i, kids: [] });
			else groups[groups.length - 1].kids.push(r);
		});
		const st = { key: null, dir: -1, q: '', limit: opts.limit || 200 };
		const wrap = el('div', { class: 'tbl', id: id, 'data-title': t.title, 'data-view': t.view, 'data-group': t.group || '' });
		const search = el('input', { type: 'search', placeholder: 'Search', 'aria-label': 'Search ' + t.title,
			'data-role': 'search' });
		const count = el('span', { class: 'note', 'aria-live': 'polite' });
		const more = el('button', { type: 'button', 'data-role': 'more' }, 'Show all rows');
		const tools = el('div', { class: 'tools' }, search, count, more);
		wrap.appendChild(tools);
		const table = el('table');
		table.appendChild(el('caption', null, t.title + (t.group ? ' (' + t.group + ')' : '')));
		const hr = el('tr');
		const ths = {};
		for (const k of keys) {
			const b = el('button', { type: 'button', title: k + ' (click to sort)' }, titles[k] || k);
			const th = el('th', { class: kinds[k] === 't' ? 't' : null, scope: 'col', 'data-k': k }, b);
			b.addEventListener('click', () => {
				if (st.key === k) st.dir = -st.dir;
				else { st.key = k; st.dir = kinds[k] === 't' ? 1 : -1; }
				draw();
			});
			ths[k] = th;
			hr.appendChild(th);
		}
		table.appendChild(el('thead', null, hr));
		const body = el('tbody');
		table.appendChild(body);
		wrap.appendChild(el('div', { class: 'tablewrap' }, table));
		search.addEventListener('input', () => { st.q = search.value.toLowerCase(); draw(); });
		more.addEventListener('click', () => { st.limit = Infinity; draw(); });
		function matches(r) {
			for (const k of keys) {
				const v = r[k];
				if (typeof v === 'string' && v.toLowerCase().includes(st.q)) return true;
			}
			return false;
		}
		function cmp(a, b) {
			const x = a.head[st.key], y = b.head[st.key];
			if (x === y) return a.i - b.i;
			if (x === null || x === undefined) return 1;
			if (y === null || y === undefined) return -1;
			if (typeof x === 'string' || typeof y === 'string')
				return st.dir * String(x).localeCompare(String(y));
			return st.dir * (x < y ? -1 : 1);
		}
		function row(r, sub) {
			const tr = el('tr', { class: (sub ? 'sub ' : '') + (opts.rowClass ? opts.rowClass(r) : '') });
			for (const k of keys) {
				const v = r[k], kind = kinds[k];
				const txt = rel.has(k) ? fmtRel(v) : fmt(kind, v);
				const td = el('td', {
					class: kind === 't' ? (opts.wrap && opts.wrap.includes(k) ? 't wrap' : 't') : null,
					'data-k': k,
					'data-v': v === null || v === undefined ? '' : String(v),
					title: kind === 't' && txt.length > 40 ? txt.slice(0, 2000) : null,
				}, txt);
				tr.appendChild(td);
			}
			return tr;
		}
		function draw() {
			let gs = st.q ? groups.filter(g => matches(g.head) || g.kids.some(matches)) : groups.slice();
			if (st.key) gs.sort(cmp);
			for (const k of keys)
				if (k === st.key) ths[k].setAttribute('aria-sort', st.dir > 0 ? 'ascending' : 'descending');
				else ths[k].removeAttribute('aria-sort');
			body.textContent = '';
			const frag = document.createDocumentFragment();
			let shown = 0;
			for (const g of gs) {
				if (shown >= st.limit) break;
				frag.appendChild(row(g.head, false));
				for (const kd of g.kids) frag.appendChild(row(kd, true));
				shown++;
			}
			body.appendChild(frag);
			count.textContent = shown + ' of ' + groups.length + ' rows' +
				(st.q ? ' (' + gs.length + ' match)' : '');
			more.hidden = shown >= gs.length;
			tools.hidden = groups.length < 10 && !st.q;
		}
		draw();
		return wrap;
	}

	/* ---------------------------------------------------------------------------------- */
	/* Charts: plain SVG */

	function color(i) { return 'var(--c' + (i % NCOL) + ')'; }
	function fill(i) { return 'url(#pat' + (i % NCOL) + ')'; }
	/* One pattern per palette colour: the colour with a texture of its own, so that
	 * neighbouring segments differ without colour too. */
	function patterns() {
		const defs = sv('defs');
		const marks = ['', 'M0,8 L8,0', 'M0,4 H8', 'M4,0 V8', 'M0,0 L8,8', 'M2,2 h1 v1 h-1z M6,6 h1 v1 h-1z',
			'M0,8 L8,0 M0,0 L8,8', 'M0,2 H8 M0,6 H8', 'M2,0 V8 M6,0 V8', 'M0,4 H8 M4,0 V8'];
		for (let i = 0; i < NCOL; i++) {
			const p = sv('pattern', { id: 'pat' + i, width: 8, height: 8, patternUnits: 'userSpaceOnUse' });
			p.appendChild(sv('rect', { width: 8, height: 8, style: 'fill:' + color(i) }));
			if (marks[i]) p.appendChild(sv('path', { d: marks[i], stroke: 'rgba(0,0,0,0.45)', 'stroke-width': 1.2, fill: 'none' }));
			defs.appendChild(p);
		}
		return sv('svg', { width: 0, height: 0, style: 'position:absolute', 'aria-hidden': 'true' }, defs);
	}
	function legend(items) {
		return el('div', { class: 'legend' }, items.map((it, i) =>
			el('span', null, el('span', { class: 'sw', style: 'background:' + color(i) }), it)));
	}
	function cut(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; }

	/* Horizontal bars: items [{label, value, text}] largest first. */
	function hbars(items, label) {
		const W = 1000, LW = 330, H = 20, max = Math.max(1e-300, ...items.map(x => x.value || 0));
		const s = sv('svg', { width: W, height: items.length * H + 6, role: 'img', 'aria-label': label, class: 'hbars' });
		items.forEach((it, i) => {
			const y = i * H + 3, w = Math.max(1, (W - LW - 240) * (it.value || 0) / max);
			const g = sv('g', { 'data-label': it.label, 'data-v': it.value });
			g.appendChild(tip(it.label + ': ' + it.text));
			g.appendChild(sv('text', { x: LW - 6, y: y + 13, 'text-anchor': 'end' }, cut(it.label, 52)));
			g.appendChild(sv('rect', { x: LW, y: y + 2, width: w, height: H - 5, style: 'fill:' + fill(0) }));
			g.appendChild(sv('text', { x: LW + w + 6, y: y + 13 }, it.text));
			s.appendChild(g);
		});
		return el('div', { class: 'chart' }, s);
	}
	/* Top-N bars with a chooser. */
	function topBars(rows, labelKey, valueKey, kind, title) {
		const box = el('div');
		const sel = el('select', { 'aria-label': 'How many bars: ' + title });
		for (const n of [10, 20, 50]) sel.appendChild(el('option', { value: n }, 'top ' + n));
		const holder = el('div');
		function draw() {
			const n = Number(sel.value);
			const items = rows.filter(r => typeof r[valueKey] === 'number')
				.sort((a, b) => b[valueKey] - a[valueKey]).slice(0, n)
				.map(r => ({ label: String(r[labelKey]), value: r[valueKey], text: fmt(kind, r[valueKey]) }));
			holder.textContent = '';
			holder.appendChild(hbars(items, title));
		}
		sel.addEventListener('change', draw);
		box.appendChild(el('div', { class: 'tools' }, el('h3', null, title), sel));
		box.appendChild(holder);
		draw();
		return box;
	}
	/* The axis's top: the least 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten not
	 * below v, so that its quarters are round numbers. */
	function niceMax(v) {
		if (!(v > 0)) return 1;
		const p = Math.pow(10, Math.floor(Math.log10(v)));
		for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v * (1 - 1e-9)) return m * p;
		return v;
	}
	/* An axis label: the format without trailing zeros ("50 ms", "12.5 us"). */
	function fmtTick(kind, v) { return trimZeros(fmt(kind, kind === 'ns' ? Math.round(v) : v)); }
	function trimZeros(t) { return t.replace(/\.(\d*?)0+( |%|$)/, (m, d, e) => (d ? '.' + d : '') + e); }
	/* Vertical stacked bars: bars [{label, parts: [values in series order], group?, mark?}];
	 * a bar with mark gets a star above it and an outline (the straggler); bars of one group
	 * (a step) stand together under the group's name. */
	function stacked(series, bars, kind, label) {
		const H = 240, BW = Math.max(8, Math.min(48, Math.floor(860 / Math.max(1, bars.length)) - 4));
		const groups = bars.some(b => b.group !== undefined);
		const W = 90 + bars.length * (BW + 4) + 10;
		const max = niceMax(Math.max(1e-300, ...bars.map(b => b.parts.reduce((s, v) => s + (v || 0), 0))) * (bars.some(b => b.mark) ? 1.08 : 1));
		const s = sv('svg', { width: W, height: H + (groups ? 56 : 40), role: 'img', 'aria-label': label, class: 'stacked' });
		for (let k = 0; k <= 4; k++) {
			const y = 10 + H - H * k / 4;
			s.appendChild(sv('line', { x1: 84, x2: W, y1: y, y2: y, class: 'grid' }));
			s.appendChild(sv('text', { x: 80, y: y + 4, 'text-anchor': 'end' }, fmtTick(kind, max * k / 4)));
		}
		bars.forEach((b, i) => {
			const x = 90 + i * (BW + 4);
			let y = 10 + H;
			const total = b.parts.reduce((a, v) => a + (v || 0), 0);
			const g = sv('g', { 'data-label': b.label, 'data-total': total });
			b.parts.forEach((v, j) => {
				if (!v) return;
				const h = H * v / max;
				y -= h;
				const r = sv('rect', { x: x, y: y, width: BW, height: Math.max(h, 0.5), style: 'fill:' + fill(j),
					'data-series': series[j], 'data-v': v });
				r.appendChild(tip(b.label + ' \u2014 ' + series[j] + ': ' + fmt(kind, v) +
					(total ? ' (' + fmtPct(v / total) + ')' : '')));
				g.appendChild(r);
			});
			if (b.mark) {
				g.appendChild(sv('rect', { x: x - 1, y: y - 1, width: BW + 2, height: 10 + H - y + 2, fill: 'none', stroke: 'var(--fg)', 'stroke-width': 2, 'data-mark': '1' }));
				g.appendChild(sv('text', { x: x + BW / 2, y: y - 4, 'text-anchor': 'middle', class: 'strag-mark' }, '\u2605'));
			}
			if (bars.length <= 40)
				g.appendChild(sv('text', { x: x + BW / 2, y: H + 24, 'text-anchor': 'middle', class: 'xl' }, tip(b.label), cut(b.short || b.label, Math.max(3, Math.floor(BW / 6)))));
			if (groups && (i === 0 || bars[i - 1].group !== b.group)) {
				let n = 1;
				while (i + n < bars.length && bars[i + n].group === b.group) n++;
				g.appendChild(sv('text', { x: x, y: H + 42 }, cut(b.group, Math.max(3, Math.floor(n * (BW + 4) / 6.5)))));
			}
			s.appendChild(g);
		});
		return el('div', null, legend(series), el('div', { class: 'chart' }, s));
	}
	/* Lines over x: series [{label, pts: [[x, y]]}]. */
	function lines(series, fx, fy, label, ymax) {
		const W = 920, H = 200, L = 80;
		let x0 = Infinity, x1 = -Infinity, y1 = ymax || 0;
		for (const se of series) for (const p of se.pts) { x0 = Math.min(x0, p[0]); x1 = Math.max(x1, p[0]); if (!ymax) y1 = Math.max(y1, p[1]); }
		if (!(x1 > x0)) x1 = x0 + 1;
		if (!(y1 > 0)) y1 = 1;
		const X = x => L + (W - L - 10) * (x - x0) / (x1 - x0), Y = y => 10 + H - H * y / y1;
		const s = sv('svg', { width: W, height: H + 36, role: 'img', 'aria-label': label });
		for (let k = 0; k <= 4; k++) {
			s.appendChild(sv('line', { x1: L, x2: W - 10, y1: Y(y1 * k / 4), y2: Y(y1 * k / 4), class: 'grid' }));
			s.appendChild(sv('text', { x: L - 4, y: Y(y1 * k / 4) + 4, 'text-anchor': 'end' }, fy(y1 * k / 4)));
		}
		for (let k = 0; k <= 4; k++) /* five x labels, as the timeline has */
			s.appendChild(sv('text', { x: X(x0 + (x1 - x0) * k / 4), y: H + 30, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle' },
				trimZeros(fx(x0 + (x1 - x0) * k / 4))));
		series.forEach((se, i) => {
			const d = se.pts.map((p, j) => (j ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1)).join(' ');
			const path = sv('path', { d: d, fill: 'none', style: 'stroke:' + color(i), 'stroke-width': 2,
				'stroke-dasharray': i % 2 ? '5 3' : null });
			path.appendChild(tip(se.label));
			s.appendChild(path);
		});
		return el('div', null, series.length > 1 ? legend(series.map(x => x.label + (series.indexOf(x) % 2 ? ' (dashed)' : ' (solid)'))) : null,
			el('div', { class: 'chart' }, s));
	}

	/* ---------------------------------------------------------------------------------- */
	/* Sections */

	const main = document.getElementById('main');
	const toc = document.getElementById('toc');
	main.appendChild(patterns());
	function section(id, title, build) {
		const s = el('section', { id: 'sec-' + id, 'aria-labelledby': 'h-' + id });
		s.appendChild(el('h2', { id: 'h-' + id }, title));
		const n = s.childNodes.length;
		try {
			build(s);
		} catch (e) {
			s.appendChild(el('p', { class: 'bad' }, 'This section failed to draw: ' + e.message));
			console.error(e);
		}
		if (s.childNodes.length === n) return;
		main.appendChild(s);
		toc.appendChild(el('a', { href: '#sec-' + id }, title));
	}
	function card(k, v, raw, cls) {
		return el('div', { class: 'card' + (cls ? ' ' + cls : '') }, el('div', { class: 'k' }, k),
			el('div', { class: 'v', 'data-v': raw === undefined ? null : raw }, v));
	}

	document.getElementById('inputs').textContent = (D.inputs || []).join('  \u00b7  ');

	/* Overview: device, totals, losses and drops, time by type, model phases, GPU use */
	section('overview', 'Overview', s => {
		const files = find('files'), dev = find('device'), ov = find('overview');
		const cards = el('div', { class: 'cards', id: 'overview-cards' });
		if (ov && ov.totals) {
			if ('total_ns' in ov.totals) cards.appendChild(card('Total time', fmtNs(ov.totals.total_ns), ov.totals.total_ns));
			if ('gpu_busy_ns' in ov.totals) cards.appendChild(card('GPU busy', fmtNs(ov.totals.gpu_busy_ns), ov.totals.gpu_busy_ns));
		}
		if (files) {
			const ev = files.rows.reduce((a, r) => a + (r.events || 0), 0);
			const dr = files.rows.reduce((a, r) => a + (r.dropped || 0), 0);
			const bad = files.rows.filter(r => r.status && r.status !== 'complete').length;
			cards.appendChild(card('Files', String(files.rows.length), files.rows.length));
			cards.appendChild(card('Events', fmtNum(ev), ev));
			cards.appendChild(card('Dropped events', fmtNum(dr) + (dr ? ' (lost)' : ''), dr, dr ? 'bad' : ''));
			if (bad) cards.appendChild(card('Incomplete files', String(bad), bad, 'bad'));
		}
		if (dev) for (const r of dev.rows) cards.appendChild(card(String(r.device) + ' utilization', fmt(colKind('utilization', dev.rows), r.utilization), r.utilization));
		if (cards.childNodes.length) s.appendChild(cards);
		if (files) { /* lost events and cut files: a box no one can miss, not only a cell */
			const items = [];
			for (const r of files.rows) {
				const f = String(r.file);
				if (r.dropped) items.push(f + ': ' + fmtNum(r.dropped) + ' events dropped (' + fmtPct(r.dropped_ratio) + ' of its events)');
				if (r.torn_tail_bytes) items.push(f + ': a torn tail of ' + fmtBytes(r.torn_tail_bytes) + ' (the file ends mid-record)');
				if (r.status && r.status !== 'complete')
					items.push(f + ': ' + String(r.status) + (r.incomplete_reason ? ' (' + String(r.incomplete_reason) + ')' : ''));
			}
			if (items.length)
				s.appendChild(el('div', { class: 'warn', id: 'overview-warn', role: 'alert' },
					el('strong', null, 'Some of the trace is missing: the numbers below count only what was read.'),
					el('ul', null, items.map(x => el('li', null, x)))));
		}
		const st = find('step');
		if (st) { /* the step-time breakdown, as the TensorBoard plugin's overview has it */
			const rows = st.rows.filter(r => typeof r.total_ns === 'number');
			if (rows.length) {
				s.appendChild(el('h3', null, 'Step time breakdown'));
				s.appendChild(el('div', { id: 'overview-steps' }, stepBreakdown(rows)));
			}
		}
		if (ov) {
			const all = ov.rows.filter(r => typeof r.time_ns === 'number');
			if (all.length) {
				s.appendChild(el('h3', null, 'Time by event type'));
				s.appendChild(hbars(all.map(r => ({ label: (r.level ? '\u00a0\u00a0' : '') + String(r.type || r.section), value: r.time_ns, text: fmtNs(r.time_ns) + ' (' + fmtPct(r.ratio) + ')' })), 'Time by event type'));
			}
		}
		const model = find('model');
		if (model) {
			s.appendChild(el('h3', null, 'Model phases'));
			const sub = model.rows.filter(r => r.level), top = sub.length ? sub : model.rows;
			s.appendChild(hbars(top.map(r => ({ label: String(r.name), value: r.cpu_total_ns, text: fmtNs(r.cpu_total_ns) + ' CPU' + (r.gpu_total_ns ? ', ' + fmtNs(r.gpu_total_ns) + ' GPU' : '') })), 'Model phases, CPU time'));
		}
		const dist = find('distributed');
		if (dist) { s.appendChild(el('h3', null, 'Distributed')); s.appendChild(dataTable(dist)); }
		const tbls = [[files, { wrap: ['file', 'incomplete_reason'] }], [dev], [ov], [model]];
		if (tbls.some(x => x[0])) s.appendChild(el('h3', null, 'Overview tables'));
		for (const [t, o] of tbls) if (t) s.appendChild(dataTable(t, o));
	});
	/* The step-time breakdown's stacked bars (the TensorBoard plugin's split), for the
	 * overview and the Steps section. */
	function stepBreakdown(rows) {
		const roles = [['kernel_ns', 'Kernel'], ['memcpy_ns', 'Memcpy'], ['memset_ns', 'Memset'],
			['communication_ns', 'Communication'], ['runtime_ns', 'Runtime'], ['dataloader_ns', 'DataLoader'],
			['cpu_exec_ns', 'CPU Exec'], ['other_ns', 'Other']];
		return stacked(roles.map(x => x[1]), rows.map(r => ({ label: String(r.step), short: shortStep(r.step), parts: roles.map(x => r[x[0]]) })), 'ns', 'Step time breakdown');
	}

	/* Step-time breakdown and step trace */
	section('steps', 'Steps', s => {
		const st = find('step');
		if (st) {
			const rows = st.rows.filter(r => typeof r.total_ns === 'number');
			s.appendChild(el('h3', null, 'Step time breakdown (as the TensorBoard plugin shows it)'));
			s.appendChild(el('div', { id: 'step-breakdown' }, stepBreakdown(rows)));
			const tr = [['gap_ns', 'Gap (data wait)'], ['compute_ns', 'Forward + backward'], ['tail_ns', 'Tail (optimizer, all-reduce)'], ['drain_ns', 'GPU drain']];
			if (rows.some(r => tr.some(x => r[x[0]]))) {
				s.appendChild(el('h3', null, 'Step trace (as MindSpore shows it)'));
				s.appendChild(el('div', { id: 'step-trace' }, stacked(tr.map(x => x[1]), rows.map(r => ({ label: String(r.step), short: shortStep(r.step), parts: tr.map(x => r[x[0]]) })), 'ns', 'Step trace')));
			}
			s.appendChild(dataTable(st));
		}
		const perf = find('perf');
		if (perf) { s.appendChild(el('h3', null, 'Data pipeline and throughput')); s.appendChild(dataTable(perf)); }
		const gt = find('gputime', 'GPU Time Breakdown');
		if (gt) {
			const parts = [['compute_ns', 'Compute'], ['communication_ns', 'Communication'], ['memcpy_ns', 'Memcpy'], ['memset_ns', 'Memset'],
				['idle_data_ns', 'Idle: data'], ['idle_sync_ns', 'Idle: sync'], ['idle_host_ns', 'Idle: host'], ['idle_other_ns', 'Idle: other']];
			s.appendChild(el('h3', null, 'GPU time per step'));
			const multiDev = new Set(gt.rows.map(r => r.device)).size > 1;
			/* the whole window's row ("Window") would dwarf the steps: it stays in the table */
			const per = gt.rows.filter(r => r.step !== 'Window');
			s.appendChild(stacked(parts.map(x => x[1]), (per.length ? per : gt.rows).map(r => ({ label: String(r.device) + ' ' + String(r.step), short: shortStep(r.step), group: multiDev ? String(r.device) : undefined, parts: parts.map(x => r[x[0]]) })), 'ns', 'GPU time per step'));
			s.appendChild(dataTable(gt));
		}
	});

	/* Advice, each finding with links to its evidence */
	section('advice', 'Advice', s => {
		const adv = find('advice');
		if (!adv) return;
		use(adv);
		const list = el('div', { id: 'advice-list' });
		for (const r of adv.rows) {
			const box = el('div', { class: 'advice', 'data-rule': r.rule });
			/* "rank" is the finding's place in the list (the text's "#"), not a process rank */
			box.appendChild(el('h3', null, (typeof r.rank === 'number' ? r.rank + '. ' : '') + String(r.title || r.rule)));
			box.appendChild(el('p', null, el('strong', null, 'At stake: '), fmtNs(r.at_stake_ns), ' (' + fmtPct(r.share) + ' of the time)'));
			if (r.finding) box.appendChild(el('p', null, el('strong', null, 'Finding: '), String(r.finding)));
			if (r.change) box.appendChild(el('p', null, el('strong', null, 'Change: '), String(r.change)));
			const links = el('p', null, el('strong', null, 'Evidence: '), String(r.evidence || ''), ' ');
			const target = adviceTarget(r.rule);
			links.appendChild(el('a', { href: '#sec-' + target, class: 'evlink' }, '[see ' + target + ']'));
			if (typeof r.start_ns === 'number' && typeof r.end_ns === 'number' && r.end_ns > r.start_ns) {
				const a = el('a', { href: '#sec-timeline', 'data-start': r.start_ns, 'data-end': r.end_ns }, ' [show ' + fmtNs(r.end_ns - r.start_ns) + ' on the timeline]');
				a.addEventListener('click', () => { if (window.opscopeTimeline) window.opscopeTimeline.show(r.start_ns, r.end_ns); });
				links.appendChild(a);
			}
			box.appendChild(links);
			list.appendChild(box);
		}
		s.appendChild(list);
		s.appendChild(dataTable(adv, { wrap: ['title', 'evidence', 'change', 'finding'], limit: 50, rel: ['start_ns', 'end_ns'] }));
	});
	/* The section with each rule's evidence (docs/advice.md's rules). */
	function adviceTarget(rule) {
		const where = { input_bound: 'steps', gpu_idle: 'kernels', sync_in_step: 'timeline',
			pageable_copy: 'kernels', tiny_kernels: 'kernels', tensor_cores: 'flops',
			exposed_comm: 'steps', first_step_slow: 'steps', straggler: 'ranks' };
		return where[String(rule)] || 'operators';
	}

	/* Operators */
	section('operators', 'Operators', s => {
		const op = find('operator', 'Operator Summary');
		if (op) {
			s.appendChild(topBars(op.rows.filter(r => !r.level), 'name', 'cpu_total_ns', 'ns', 'Operators by CPU time'));
			if (op.rows.some(r => !r.level && r.gpu_total_ns)) s.appendChild(topBars(op.rows.filter(r => !r.level), 'name', 'gpu_total_ns', 'ns', 'Operators by GPU time'));
		}
		for (const t of findAll('operator')) {
			if (t !== op) s.appendChild(el('h3', null, t.title));
			s.appendChild(dataTable(t));
		}
		for (const v of ['userdefined', 'module', 'python', 'nvtx', 'memcpy'])
			for (const t of findAll(v)) { s.appendChild(el('h3', null, t.title)); s.appendChild(dataTable(t)); }
	});

	/* Kernels */
	section('kernels', 'Kernels', s => {
		const k = find('kernel');
		if (k) {
			s.appendChild(topBars(k.rows, 'display_name', 'total_ns', 'ns', 'Kernels by GPU time'));
			s.appendChild(dataTable(k, { wrap: [] }));
		}
		for (const v of ['launch', 'nvprof'])
			for (const t of findAll(v)) { s.appendChild(el('h3', null, t.title)); s.appendChild(dataTable(t)); }
		const g = find('gpu', 'GPU Utilization');
		if (g) { s.appendChild(el('h3', null, 'GPU utilization per step')); s.appendChild(dataTable(g)); }
		const q = find('queue', 'Queue Length');
		if (q) { s.appendChild(el('h3', null, 'Queue length')); s.appendChild(dataTable(q)); }
		const busy = find('gpu', 'GPU Utilization over time');
		if (busy) {
			s.appendChild(el('h3', null, 'GPU utilization over time'));
			const t0 = 0; /* the windows count from the GPU window's start */
			s.appendChild(lines([...new Set(busy.rows.map(r => r.device))].map(d => ({ label: String(d) + ' kernel busy', pts: busy.rows.filter(r => r.device === d).map(r => [r.start_ns - t0, r.kernel_busy]) })), x => '+' + fmtNs(Math.round(x)), fmtPct, 'GPU kernel busy share over time', 1));
			s.appendChild(dataTable(busy));
		}
		const qt = find('queue', 'Queue Length over time');
		if (qt) { s.appendChild(el('h3', null, qt.title)); s.appendChild(dataTable(qt)); }
	});

	/* FLOPs and the roofline */
	section('flops', 'FLOPs and roofline', s => {
		const per = find('flops', 'FLOPs per Operator'), cat = find('flops', 'FLOPs by Category');
		const ceil = find('flops', 'Roofline Ceilings'), none = find('flops', 'Operators with no FLOPs Model');
		if (!per && !cat) return;
		if (per) s.appendChild(roofline(per, ceil));
		if (cat) { s.appendChild(el('h3', null, cat.title)); s.appendChild(dataTable(cat)); }
		if (ceil) { s.appendChild(el('h3', null, ceil.title)); s.appendChild(dataTable(ceil, { wrap: ['source'] })); }
		if (per) { s.appendChild(el('h3', null, per.title + ' (with input shapes)')); s.appendChild(dataTable(per)); }
		if (none) { s.appendChild(el('h3', null, none.title)); s.appendChild(dataTable(none)); }
	});
	function roofline(per, ceil) {
		const pts = per.rows.filter(r => r.flop_per_byte > 0 && r.tflops_per_s > 0);
		if (!pts.length) return el('p', { class: 'note' }, 'No operator has both FLOPs and bytes: no roofline to draw.');
		const c = ceil ? ceil.rows[0] : null;
		const peaks = c ? [['fp32_tflops', 'FP32'], ['tf32_tflops', 'TF32'], ['bf16_tflops', 'BF16'], ['fp16_tflops', 'FP16'], ['fp64_tflops', 'FP64'], ['fp8_tflops', 'FP8']].filter(p => c[p[0]] > 0) : [];
		const bw = c && c.tbytes_per_s > 0 ? c.tbytes_per_s : null;
		let xs = pts.map(r => r.flop_per_byte), ys = pts.map(r => r.tflops_per_s);
		for (const p of peaks) ys.push(c[p[0]]);
		const lx0 = Math.floor(Math.log10(Math.min(...xs))) - 1, lx1 = Math.ceil(Math.log10(Math.max(...xs))) + 1;
		const ly0 = Math.floor(Math.log10(Math.min(...ys))) - 1, ly1 = Math.ceil(Math.log10(Math.max(...ys))) + 1;
		const W = 920, H = 360, L = 70;
		const X = v => L + (W - L - 20) * (Math.log10(v) - lx0) / (lx1 - lx0);
		const Y = v => 10 + H - H * (Math.log10(v) - ly0) / (ly1 - ly0);
		const s = sv('svg', { width: W, height: H + 50, role: 'img', 'aria-label': 'Roofline: achieved TFLOP/s against FLOP per byte', id: 'roofline' });
		for (let e = lx0; e <= lx1; e++) { s.appendChild(sv('line', { x1: X(10 ** e), x2: X(10 ** e), y1: 10, y2: 10 + H, class: 'grid' })); s.appendChild(sv('text', { x: X(10 ** e), y: H + 26, 'text-anchor': 'middle' }, '1e' + e)); }
		for (let e = ly0; e <= ly1; e++) { s.appendChild(sv('line', { x1: L, x2: W - 20, y1: Y(10 ** e), y2: Y(10 ** e), class: 'grid' })); s.appendChild(sv('text', { x: L - 4, y: Y(10 ** e) + 4, 'text-anchor': 'end' }, '1e' + e)); }
		s.appendChild(sv('text', { x: W / 2, y: H + 44, 'text-anchor': 'middle' }, 'FLOP per byte (log)'));
		s.appendChild(sv('text', { x: 12, y: 20 }, 'TFLOP/s'));
		peaks.forEach((p, i) => {
			const peak = c[p[0]];
			const xr = bw ? peak / bw : 10 ** lx0; /* the ridge: bandwidth meets this peak */
			const d = bw ? 'M' + X(10 ** lx0) + ',' + Y(bw * 10 ** lx0) + ' L' + X(xr) + ',' + Y(peak) + ' L' + X(10 ** lx1) + ',' + Y(peak)
				: 'M' + X(10 ** lx0) + ',' + Y(peak) + ' L' + X(10 ** lx1) + ',' + Y(peak);
			const path = sv('path', { d: d, fill: 'none', style: 'stroke:' + color(i + 1), 'stroke-width': 1.5, 'stroke-dasharray': i ? '6 3' : null, 'data-peak': peak });
			path.appendChild(tip(p[1] + ' peak ' + peak + ' TFLOP/s' + (bw ? ', memory ' + bw + ' TB/s' : '')));
			s.appendChild(path);
			s.appendChild(sv('text', { x: W - 24, y: Y(peak) - 3, 'text-anchor': 'end' }, p[1] + ' ' + fmtNum(peak) + ' TFLOP/s'));
		});
		for (const r of pts) {
			const dot = sv('circle', { cx: X(r.flop_per_byte), cy: Y(r.tflops_per_s), r: 4, style: 'fill:' + color(0), 'fill-opacity': 0.7, stroke: 'var(--fg)', 'stroke-width': 0.5, 'data-name': r.name });
			dot.appendChild(tip(r.name + ' ' + (r.input_shapes || '') + ': ' + fmtNum(r.flop_per_byte) + ' FLOP/B, ' + fmtNum(r.tflops_per_s) + ' TFLOP/s, ' + (r.bound || '')));
			s.appendChild(dot);
		}
		return el('div', null, el('h3', null, 'Roofline'), el('p', { class: 'note' }, 'Each dot is an operator row of the table below (hover for its name); lines are the device\u2019s ceilings' + (c && c.source ? ' (' + c.source + ')' : '') + '.'), el('div', { class: 'chart' }, s));
	}

	/* CPU samples: the flame graph */
	section('samples', 'CPU samples', s => {
		const flames = findAll('samples').filter(t => t.title === 'Samples: Flame Graph');
		if (flames.length) s.appendChild(flame(flames.map(use)));
		for (const t of findAll('samples')) if (!flames.includes(t)) { s.appendChild(el('h3', null, t.title)); s.appendChild(dataTable(t)); }
	});
	/* The flame graph of tables[0] (all samples), or of one of the others (the samples inside
	 * the ranges of one name), as the range chooser says. */
	function flame(tables) {
		let t, kids, roots, total;
		function choose(k) {
			t = tables[k];
			kids = t.rows.map(() => []);
			roots = [];
			total = 0;
			t.rows.forEach((r, i) => {
				if (r.parent === null || r.parent === undefined) { roots.push(i); total += r.total; }
				else kids[r.parent].push(i);
			});
			for (const c of kids) c.sort((a, b) => t.rows[b].total - t.rows[a].total);
		}
		choose(0);
		const box = el('div', { id: 'flame-box' });
		const search = el('input', { type: 'search', placeholder: 'Search functions', 'aria-label': 'Search the flame graph', id: 'flame-search' });
		const reset = el('button', { type: 'button', id: 'flame-reset' }, 'Reset zoom');
		const info = el('span', { class: 'note', id: 'flame-info', 'aria-live': 'polite' });
		const range = el('select', { id: 'flame-range', 'aria-label': 'Samples inside the ranges of' });
		tables.forEach((x, k) => range.appendChild(el('option', { value: k }, x.group ? 'samples ' + cut(x.group, 80) : 'all samples')));
		range.addEventListener('change', () => { choose(Number(range.value)); focus = null; draw(); });
		box.appendChild(el('div', { class: 'tools' }, tables.length > 1 ? range : null, search, reset, info));
		box.appendChild(el('p', { class: 'note' }, 'Width is the share of samples. Click a frame (or focus it and press Enter) to zoom to it; Escape or Reset zooms out. The search marks matching functions and sums their samples. The chooser keeps the samples taken inside the ranges of one name (the names that hold the most samples; opscope report --views samples --under NAME for any other).'));
		const crumbs = el('div', { id: 'flame-crumbs', class: 'tools' });
		box.appendChild(crumbs);
		const area = el('div', { class: 'flame', id: 'flame', role: 'group', 'aria-label': 'Flame graph' });
		box.appendChild(area);
		let focus = null; /* the zoomed node, or null for all */
		function path(i) { const p = []; for (let x = i; x !== null && x !== undefined; x = t.rows[x].parent) p.unshift(x); return p; }
		function draw() {
			area.textContent = '';
			crumbs.textContent = '';
			const W = area.clientWidth || 900, RH = 18;
			const q = search.value.toLowerCase();
			let depthMax = 0;
			const frag = document.createDocumentFragment();
			const base = focus === null ? total : t.rows[focus].total;
			function put(i, x, w, d) {
				const r = t.rows[i];
				depthMax = Math.max(depthMax, d);
				if (w < 0.6) return;
				const hit = q && String(r.name).toLowerCase().includes(q);
				const nd = el('div', {
					class: 'fr' + (hit ? ' hit' : q ? ' dim' : ''), 'data-i': i, 'data-total': r.total, 'data-self': r.self,
					role: 'button', tabindex: w >= 24 ? 0 : -1,
					'aria-label': r.name + ': ' + r.total + ' samples, ' + fmtPct(r.total / total),
					title: cut(r.name, 300) + (r.file ? ' (' + cut(r.file, 200) + ')' : '') + '\n' + r.total + ' samples (' + fmtPct(r.total / total) + '), self ' + r.self,
					style: 'left:' + x.toFixed(1) + 'px;width:' + w.toFixed(1) + 'px;top:' + (d * RH) + 'px;background:' + color(hashName(r.name)),
				}, w >= 24 ? cut(r.name, Math.floor(w / 6)) : '');
				frag.appendChild(nd);
				let cx = x;
				for (const c of kids[i]) { const cw = w * t.rows[c].total / r.total; put(c, cx, cw, d + 1); cx += cw; }
			}
			if (focus === null) {
				let x = 0;
				for (const rt of roots) { const w = W * t.rows[rt].total / total; put(rt, x, w, 0); x += w; }
			} else {
				const p = path(focus);
				p.slice(0, -1).forEach((a, d) => put1(a, d));
				put(focus, 0, W, p.length - 1);
			}
			function put1(i, d) { /* an ancestor of the zoomed frame: full width */
				const r = t.rows[i];
				frag.appendChild(el('div', { class: 'fr dim', 'data-i': i, role: 'button', tabindex: 0, title: r.name,
					style: 'left:0;width:' + W + 'px;top:' + (d * RH) + 'px;background:' + color(hashName(r.name)) }, cut(r.name, Math.floor(W / 6))));
			}
			area.appendChild(frag);
			area.style.height = ((depthMax + 1) * RH + 4) + 'px';
			const all = el('button', { type: 'button' }, 'all');
			all.addEventListener('click', () => zoom(null));
			crumbs.appendChild(all);
			if (focus !== null) for (const a of path(focus)) {
				const b = el('button', { type: 'button' }, cut(t.rows[a].name, 40));
				b.addEventListener('click', () => zoom(a));
				crumbs.appendChild(b);
			}
			let matched = 0;
			if (q) { /* samples under a matching frame, each once: stop at the first match */
				const walk = i => { if (String(t.rows[i].name).toLowerCase().includes(q)) { matched += t.rows[i].total; return; } for (const c of kids[i]) walk(c); };
				for (const rt of roots) walk(rt);
			}
			info.textContent = (focus === null ? 'all ' + total + ' samples' : 'zoomed: ' + base + ' of ' + total + ' samples') +
				(q ? '; matched ' + matched + ' samples (' + fmtPct(total ? matched / total : 0) + ')' : '');
			info.setAttribute('data-matched', matched);
		}
		function zoom(i) { focus = i; draw(); }
		area.addEventListener('click', e => {
			const n = e.target.closest('.fr');
			if (n) zoom(Number(n.getAttribute('data-i')));
		});
		area.addEventListener('keydown', e => {
			const n = e.target.closest('.fr');
			if ((e.key === 'Enter' || e.key === ' ') && n) { e.preventDefault(); zoom(Number(n.getAttribute('data-i'))); area.querySelector('.fr[tabindex="0"]')?.focus(); }
			if (e.key === 'Escape') zoom(null);
		});
		reset.addEventListener('click', () => zoom(null));
		search.addEventListener('input', draw);
		window.addEventListener('resize', draw);
		requestAnimationFrame(draw);
		draw();
		return box;
	}
	function hashName(s) { let h = 0; s = String(s); for (let i = 0; i < s.length && i < 64; i++) h = (h * 31 + s.charCodeAt(i)) | 0; return Math.abs(h) % NCOL; }

	/* Many ranks side by side, stragglers marked */
	section('ranks', 'Ranks', s => {
		const rk = find('ranks', 'Ranks'), steps = find('ranks', 'Rank Steps');
		if (!rk && !steps) return;
		if (rk) {
			s.appendChild(stacked(['Computation', 'Communication'], rk.rows.map(r => ({ label: 'rank ' + r.rank, parts: [r.computation_ns, r.communication_ns] })), 'ns', 'Computation and communication per rank'));
			s.appendChild(dataTable(rk, { wrap: ['file'] }));
		}
		if (steps) {
			const parts = [['compute_ns', 'Compute'], ['communication_ns', 'Communication'], ['data_wait_ns', 'Data wait'], ['collective_wait_ns', 'Collective wait']];
			const bars = [];
			let cur = null;
			for (const r of steps.rows) {
				if (!r.level) { cur = r; continue; }
				const strag = isStraggler(cur, r);
				bars.push({ label: (cur ? cur.step + ' ' : '') + r.step + (strag ? ' (straggler)' : ''), short: String(r.step).replace(/^rank /, 'r').replace(/ \*$/, ''),
					group: cur ? String(cur.step) : '', mark: strag, parts: parts.map(x => r[x[0]]) });
			}
			s.appendChild(el('h3', null, 'Steps side by side: the straggler of each step has a star (\u2605) and an outline, its table row is bold'));
			if (bars.length) s.appendChild(stacked(parts.map(x => x[1]), bars, 'ns', 'Steps per rank'));
			let head = null;
			s.appendChild(dataTable(steps, {
				rowClass: r => {
					if (!r.level) { head = r; return 'strag-head'; }
					return isStraggler(head, r) ? 'strag' : '';
				},
			}));
		}
		for (const t of findAll('ranks')) if (!used.has(t)) { s.appendChild(el('h3', null, t.title)); s.appendChild(dataTable(t)); }
	});

	/* Is rank row r (level 1: "rank N", the straggler's with " *") the straggler of step row
	 * head (level 0, its rank the straggler's)? */
	function isStraggler(head, r) {
		return !!head && head.rank !== null && head.rank !== undefined &&
			String(r.step).replace(/ \*$/, '') === 'rank ' + head.rank;
	}

	/* Memory over time */
	section('memory', 'Memory', s => {
		const ot = find('gpumem', 'GPU Memory over time');
		if (ot) {
			use(ot);
			const devs = [...new Set(ot.rows.map(r => r.device))];
			const series = [];
			for (const d of devs) {
				const rows = ot.rows.filter(r => r.device === d);
				series.push({ label: String(d) + ' peak in window', pts: rows.map(r => [r.start_ns, r.max_bytes]) });
				series.push({ label: String(d) + ' at window end', pts: rows.map(r => [r.start_ns, r.end_bytes]) });
			}
			const t0 = Math.min(...ot.rows.map(r => r.start_ns));
			s.appendChild(el('h3', null, 'GPU memory over time'));
			s.appendChild(lines(series, x => '+' + fmtNs(Math.round(x - t0)), fmtBytes, 'GPU memory over time'));
		}
		for (const v of ['gpumem', 'memory'])
			for (const t of findAll(v)) { s.appendChild(el('h3', null, t.title)); s.appendChild(dataTable(t)); }
	});

	/* The timeline: steps, GPU busy, queue and memory, from the report's windows */
	section('timeline', 'Timeline', s => {
		/* the step view's timeline tables and the advice ranges: all in the trace's own ns
		 * (the GPU views' windows count from their window's start, another origin: they
		 * have their own tables and charts) */
		const steps = find('step', 'Timeline: Steps'), wins = find('step', 'Timeline');
		if (!steps && !wins) return;
		s.appendChild(timeline({ steps, wins, adv: find('advice') }));
		for (const t of [steps, wins]) if (t) { s.appendChild(el('h3', null, t.title)); s.appendChild(dataTable(t, { rel: ['start_ns'] })); }
	});
	function timeline(src) {
		const lanes = [];
		let t0 = Infinity, t1 = -Infinity;
		const span = r => { t0 = Math.min(t0, r.start_ns); t1 = Math.max(t1, r.start_ns + (r.duration_ns || 0)); };
		if (src.steps) {
			const rows = src.steps.rows.filter(r => typeof r.start_ns === 'number');
			rows.forEach(span);
			lanes.push({ label: 'Steps', kind: 'spans', items: rows.map(r => ({ s: r.start_ns, e: r.start_ns + r.duration_ns, name: String(r.step), text: (r.device ? r.device + ' ' : '') + r.step + ': ' + fmtNs(r.duration_ns) })) });
		}
		if (src.wins) { /* per window: busy share and the name that took most of it */
			src.wins.rows.forEach(span);
			for (const ln of ['phases', 'operators', 'kernels']) {
				const rows = src.wins.rows.filter(r => r.lane === ln);
				if (rows.length) lanes.push({ label: ln[0].toUpperCase() + ln.slice(1), key: ln, kind: 'top', items: rows.map(r => ({ s: r.start_ns, e: r.start_ns + r.duration_ns, v: r.busy_ns, d: r.duration_ns, name: String(r.name), top: r.name_ns })) });
			}
		}
		if (src.adv) {
			const rows = src.adv.rows.filter(r => typeof r.start_ns === 'number' && r.end_ns > r.start_ns);
			if (rows.length) lanes.push({ label: 'Advice', kind: 'spans', items: rows.map(r => ({ s: r.start_ns, e: r.end_ns, name: String(r.rule), text: String(r.title || r.rule) })) });
		}
		if (!(t1 > t0)) return el('p', { class: 'note' }, 'No timed windows in this trace.');
		const box = el('div', { id: 'timeline-box' });
		const W = 1000, L = 170, LH = 30;
		const svg = sv('svg', { width: W, height: lanes.length * LH + 30, class: 'tl', tabindex: 0, role: 'img', id: 'timeline',
			'aria-label': 'Timeline; keys: + and - zoom, left and right pan, 0 resets' });
		const label = el('span', { class: 'note', 'aria-live': 'polite', id: 'timeline-range' });
		const btn = (t, f) => { const b = el('button', { type: 'button' }, t); b.addEventListener('click', f); return b; };
		let v0 = t0, v1 = t1;
		function set(a, b) {
			const min = Math.max(1000, (t1 - t0) / 1e6);
			if (b - a < min) { const c = (a + b) / 2; a = c - min / 2; b = c + min / 2; }
			v0 = Math.max(t0, a); v1 = Math.min(t1, b);
			if (v1 <= v0) { v0 = t0; v1 = t1; }
			draw();
		}
		const zoomBy = f => { const c = (v0 + v1) / 2, h = (v1 - v0) * f / 2; set(c - h, c + h); };
		const pan = f => { const d = (v1 - v0) * f; if (v0 + d < t0) set(t0, t0 + v1 - v0); else if (v1 + d > t1) set(t1 - (v1 - v0), t1); else set(v0 + d, v1 + d); };
		box.appendChild(el('div', { class: 'tools' }, btn('Zoom in', () => zoomBy(0.5)), btn('Zoom out', () => zoomBy(2)),
			btn('\u2190', () => pan(-0.25)), btn('\u2192', () => pan(0.25)), btn('Reset', () => set(t0, t1)), label));
		box.appendChild(el('div', { class: 'chart' }, svg));
		box.appendChild(el('p', { class: 'note' }, 'The timeline draws windows, not single events, so it stays light on any trace: the steps, then per window (400 across the trace) the busy share of phases, operators (outermost) and kernels with the name that took most of it (hover for it), and the advice ranges. Zooming in stretches the windows. For every event, export the trace for Perfetto or chrome://tracing: opscope export --format chrome -o trace.json TRACE, then open it at ui.perfetto.dev.'));
		const X = t => L + (W - L - 10) * (t - v0) / (v1 - v0);
		function draw() {
			svg.textContent = '';
			label.textContent = '+' + fmtNs(Math.round(v0 - t0)) + ' to +' + fmtNs(Math.round(v1 - t0)) + ' (' + fmtNs(Math.round(v1 - v0)) + ' shown)';
			svg.appendChild(sv('clipPath', { id: 'tlclip' }, sv('rect', { x: L, y: 0, width: W - L - 10, height: lanes.length * LH + 30 })));
			lanes.forEach((ln, i) => {
				const y = i * LH + 4;
				svg.appendChild(sv('text', { x: 4, y: y + 17 }, cut(ln.label, 26)));
				svg.appendChild(sv('line', { x1: L, x2: W - 10, y1: y + LH - 2, y2: y + LH - 2, class: 'axis' }));
				const g = sv('g', { 'clip-path': 'url(#tlclip)', 'data-lane': ln.key || ln.label });
				ln.items.forEach((it, j) => {
					if (it.e < v0 || it.s > v1) return;
					const x = X(it.s), w = Math.max(1, X(it.e) - x);
					if (ln.kind === 'spans') {
						const r = sv('rect', { x: x, y: y + 2, width: w, height: LH - 8, style: 'fill:' + fill(j % 2 ? 1 : 0), stroke: 'var(--bg)' });
						r.appendChild(tip(it.text));
						g.appendChild(r);
						if (w > 40) g.appendChild(sv('text', { x: x + 3, y: y + 17 }, cut(it.name, Math.floor(w / 6))));
					} else if (ln.kind === 'top') {
						const h = (LH - 8) * Math.min(1, (it.v || 0) / it.d);
						const r = sv('rect', { x: x, y: y + LH - 6 - h, width: w, height: Math.max(h, 0.5), style: 'fill:' + color(hashName(it.name)), 'data-v': it.v });
						r.appendChild(tip(ln.label + ' at +' + fmtNs(it.s - t0) + ' (' + fmtNs(it.d) + '): ' + it.name + ' ' + fmtNs(it.top) + ' of ' + fmtNs(it.v) + ' busy'));
						g.appendChild(r);
						if (w > 60) g.appendChild(sv('text', { x: x + 2, y: y + 12 }, cut(it.name, Math.floor(w / 6))));
					} else {
						const h = (LH - 8) * Math.min(1, (it.v || 0) / ln.max);
						const r = sv('rect', { x: x, y: y + LH - 6 - h, width: w, height: Math.max(h, 0.5), style: 'fill:' + color(2 + i) });
						r.appendChild(tip(ln.label + ' at +' + fmtNs(it.s - t0) + ': ' + ln.fmt(it.v)));
						g.appendChild(r);
					}
				});
				svg.appendChild(g);
			});
			const yb = lanes.length * LH + 22;
			for (let k = 0; k <= 4; k++) {
				const t = v0 + (v1 - v0) * k / 4;
				svg.appendChild(sv('text', { x: X(t), y: yb, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle' }, '+' + fmtNs(Math.round(t - t0))));
			}
		}
		svg.addEventListener('keydown', e => {
			const k = { '+': () => zoomBy(0.5), '=': () => zoomBy(0.5), '-': () => zoomBy(2), ArrowLeft: () => pan(-0.25), ArrowRight: () => pan(0.25), '0': () => set(t0, t1) }[e.key];
			if (k) { e.preventDefault(); k(); }
		});
		svg.addEventListener('wheel', e => {
			e.preventDefault();
			const r = svg.getBoundingClientRect();
			const at = v0 + (v1 - v0) * Math.min(1, Math.max(0, (e.clientX - r.left - L) / (W - L - 10)));
			const f = e.deltaY > 0 ? 1.25 : 0.8;
			set(at - (at - v0) * f, at + (v1 - at) * f);
		}, { passive: false });
		let drag = null;
		svg.addEventListener('pointerdown', e => { drag = { x: e.clientX, a: v0, b: v1 }; });
		window.addEventListener('pointerup', () => { drag = null; });
		svg.addEventListener('pointermove', e => {
			if (!drag) return;
			const d = (drag.x - e.clientX) * (drag.b - drag.a) / (W - L - 10);
			if (drag.a + d >= t0 && drag.b + d <= t1) set(drag.a + d, drag.b + d);
		});
		window.opscopeTimeline = { show: (a, b) => set(a - (b - a) * 0.1, b + (b - a) * 0.1), span: () => [v0, v1] };
		draw();
		return box;
	}

	/* Every other table, so that every column of the report is here */
	section('more', 'More tables', s => {
		for (const t of TABLES) {
			if (used.has(t) || !t.rows || !t.rows.length) continue;
			s.appendChild(el('h3', null, t.title));
			s.appendChild(dataTable(t));
		}
	});
	/* a caption that repeats the heading just above its table is hidden from sight (screen
	 * readers still name the table by it) */
	for (const w of document.querySelectorAll('.tbl')) {
		const h = w.previousElementSibling, cap = w.querySelector('caption');
		if (h && h.tagName === 'H3' && cap && cap.textContent === h.textContent) cap.classList.add('vh');
	}
	/* evidence links to a section this trace has no data for go */
	for (const a of document.querySelectorAll('a.evlink'))
		if (!document.getElementById(a.getAttribute('href').slice(1))) a.remove();
	const empty = TABLES.filter(t => t.empty);
	if (empty.length) main.appendChild(el('section', { id: 'sec-empty' }, el('h2', null, 'Views with nothing to show'),
		el('ul', null, empty.map(t => el('li', null, String(t.empty))))));

	/* Light and dark: the system's choice first, the button flips it */
	const root = document.documentElement, themeBtn = document.getElementById('theme');
	function theme(dark) {
		root.setAttribute('data-theme', dark ? 'dark' : 'light');
		themeBtn.textContent = dark ? 'Light' : 'Dark';
		themeBtn.setAttribute('aria-pressed', String(dark));
		themeBtn.setAttribute('aria-label', dark ? 'Switch to the light theme' : 'Switch to the dark theme');
	}
	theme(window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
	themeBtn.addEventListener('click', () => theme(root.getAttribute('data-theme') !== 'dark'));
	window.opscopeDrawnMs = performance.now(); /* navigation start to drawn: bench_html.sh */
	document.body.setAttribute('data-ready', '1');
})();
