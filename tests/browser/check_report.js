// check_report.js: the HTML report in a real browser (Debian's chromium, headless, over
// tests/browser/cdp.js), checked against the JSON report of the same trace.
//
//   node check_report.js --page P.html --json P.json [--text P.txt] --shots DIR --name NAME [--hostile]
//
// Loads P.html from file:// and fails on any console error or warning, any exception, any
// request other than the page itself, and then on each of: the sections present are exactly
// those whose tables the JSON has; every table's first rows hold the JSON's values, cell by
// cell (data-v) and its row count; the step breakdown's bars sum to the JSON's roles; sorting
// a numeric column (click, then click again) orders it both ways; the search keeps the rows
// the JSON says match; the flame graph (where there are samples) zooms on click and on Enter,
// resets on Escape, and its search sums the samples the JSON tree gives; the timeline zooms
// from the keyboard; Tab reaches the skip link first; the theme button flips light and dark.
// Headers: the JSON's column titles (the key in the tooltip); with --text (the text report of
// the same trace) those of the TEXT_HEADERS tables equal the text report's; a caption that
// repeats the heading above its table takes no room.
// Times: the Timeline tables' and the advice's start times read from the trace's start
// ("+156 us"), to the us.
// Overview: the step breakdown's bars, one per step, labelled "#N" with the full name in the
// tooltip; a warning box naming each file that lost events or ends torn, none when all was
// read.
// With --hostile: window.__pwned stays unset, no <img> exists, two <script> elements in all,
// and the operator and kernel names read back exactly as the JSON has them (10,000-character
// one included). Screenshots (light, dark, the top in light) go to DIR/NAME-*.png. Prints TAP;
// exits 1 on a failure, 77 when chromium is missing.
'use strict';
const fs = require('fs');
const path = require('path');
const { Browser, findChromium } = require('./cdp.js');

const args = {};
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i];
	if (a === '--hostile') args.hostile = true;
	else args[a.replace(/^--/, '')] = process.argv[++i];
}
let n = 0, failed = 0;
function check(name, ok, detail) {
	n++;
	if (ok) console.log('ok ' + n + ' - ' + name);
	else { failed++; console.log('not ok ' + n + ' - ' + name + (detail !== undefined ? ' # ' + JSON.stringify(detail).slice(0, 600) : '')); }
}

// Tables whose text headers (expanded as the JSON's columns expand a "CPU Total / Avg / Max
// / Min / Ratio(%)" header) the page's headers must equal, in order.
const TEXT_HEADERS = ['Trace Files', 'Overview Summary', 'Model Summary', 'Step Summary', 'Device Summary'];

// The header titles of the text report's table `title`: the line under the one that names
// it, cut where the dashed line's columns are; null when the text has no such table.
function textHeaders(text, title) {
	const lines = text.split('\n');
	const at = lines.findIndex(l => /^-+/.test(l) && l.replace(/^-+|-+$/g, '') === title);
	if (at < 0) return null;
	let i = at + 1;
	while (i < lines.length && !/^-+( +-+)*\s*$/.test(lines[i])) i++;
	const dash = lines[i], head = lines[i + 1] || '';
	const out = [];
	for (const m of dash.matchAll(/-+/g)) {
		const cell = head.slice(m.index, m.index + m[0].length + 1).trim();
		const parts = cell.split(' / ');
		if (parts.length === 5 && /(^| )Total$/.test(parts[0])) {
			const pre = parts[0].slice(0, parts[0].length - 'Total'.length);
			for (const p of ['Total', 'Avg', 'Max', 'Min', 'Ratio(%)']) out.push(pre + p);
		} else out.push(cell);
	}
	return out;
}

// "+12.345 ms" as ns (NaN when it does not read so); its last digit's size in ulp.
function parseRel(s) {
	const m = /^\+([0-9.]+) (s|ms|us|ns)$/.exec(s);
	if (!m) return [NaN, 0];
	const mult = { s: 1e9, ms: 1e6, us: 1e3, ns: 1 }[m[2]];
	return [Number(m[1]) * mult, m[2] === 'ns' ? 1 : mult / 1000];
}

// The sections the page should have, from the JSON alone (report.js's rules).
function expectedSections(d) {
	const has = (v, title) => d.tables.some(t => t.view === v && (!title || t.title === title) && t.rows && t.rows.length);
	const s = ['overview'];
	if (has('step') || has('perf') || has('gputime', 'GPU Time Breakdown')) s.push('steps');
	if (has('advice')) s.push('advice');
	if (['operator', 'userdefined', 'module', 'python', 'nvtx', 'memcpy'].some(v => has(v))) s.push('operators');
	if (['kernel', 'launch', 'nvprof', 'gpu', 'queue'].some(v => has(v))) s.push('kernels');
	if (has('flops', 'FLOPs per Operator') || has('flops', 'FLOPs by Category')) s.push('flops');
	if (has('samples')) s.push('samples');
	if (has('ranks', 'Ranks') || has('ranks', 'Rank Steps')) s.push('ranks');
	if (has('gpumem') || has('memory')) s.push('memory');
	if (has('step', 'Timeline') || has('step', 'Timeline: Steps')) s.push('timeline');
	return s;
}

async function main() {
	const exe = findChromium();
	if (!exe) { console.log('skip: no chromium (apt-get install chromium, or set CHROMIUM)'); process.exit(77); }
	const d = JSON.parse(fs.readFileSync(args.json, 'utf8'));
	const html = fs.readFileSync(args.page, 'utf8');
	const open = '<script type="application/json" id="opscope-data">';
	const at = html.indexOf(open);
	const emb = JSON.parse(html.slice(at + open.length, html.indexOf('</script>', at)));
	const shots = args.shots, name = args.name || 'page';
	fs.mkdirSync(shots, { recursive: true });
	const b = await Browser.launch(exe, 1280, 900);
	try {
		const url = 'file://' + path.resolve(args.page);
		const loadMs = await b.open(url, 60000);
		await b.eval('new Promise(r => { const f = () => document.body.getAttribute("data-ready") ? r() : setTimeout(f, 20); f(); })');
		const drawn = await b.eval('window.opscopeDrawnMs');
		console.log('# load ' + loadMs + ' ms, drawn at ' + Math.round(drawn) + ' ms after navigation');

		// keyboard: the first Tab after loading reaches the skip link first
		await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Tab', code: 'Tab', windowsVirtualKeyCode: 9 });
		const first = await b.eval('document.activeElement.className + " " + document.activeElement.getAttribute("href")');
		check('keyboard: Tab reaches the skip link first', first === 'skip #main', first);

		// sections
		const got = await b.eval('[...document.querySelectorAll("main > section")].map(s => s.id.replace(/^sec-/, "")).filter(s => s !== "more" && s !== "empty")');
		const want = expectedSections(emb); // the JSON report and the page's own tables
		check('sections are those the JSON has data for', JSON.stringify(got) === JSON.stringify(want), { got, want });

		// every table: row count and the first rows' cells against the JSON
		const pageTables = await b.eval(`[...document.querySelectorAll('.tbl')].map(w => ({
			view: w.getAttribute('data-view'), title: w.getAttribute('data-title'), group: w.getAttribute('data-group'),
			count: w.querySelector('.tools .note').textContent,
			rows: [...w.querySelectorAll('tbody tr')].slice(0, 12).map(tr => Object.fromEntries([...tr.children].map(td => [td.getAttribute('data-k'), td.getAttribute('data-v')])))
		}))`);
		let tablesChecked = 0, cellsChecked = 0;
		const bad = [];
		for (const t of d.tables) {
			if (!t.rows || !t.rows.length || t.title === 'Samples: Flame Graph') continue;
			const p = pageTables.find(x => x.view === t.view && x.title === t.title && x.group === (t.group || '') && !x.taken);
			if (!p) { bad.push('missing table ' + t.title); continue; }
			p.taken = true; // two tables of one title and group (one per file) pair in order
			tablesChecked++;
			const heads = t.rows.filter((r, i) => !r.level || !i).length; // a first row is a head whatever its level
			if (!p.count.endsWith(' of ' + heads + ' rows')) bad.push(t.title + ': count ' + p.count + ', want ' + heads);
			t.rows.slice(0, Math.min(12, p.rows.length)).forEach((r, i) => {
				for (const k in r) {
					if (k === 'level') continue;
					const want = r[k] === null ? '' : String(r[k]);
					cellsChecked++;
					if (p.rows[i][k] !== want) bad.push(t.title + ' row ' + i + ' ' + k + ': ' + p.rows[i][k] + ' != ' + want);
				}
			});
		}
		check('every table of the JSON is on the page with its values (' + tablesChecked + ' tables, ' + cellsChecked + ' cells)', bad.length === 0 && tablesChecked > 0, bad.slice(0, 5));

		// headers: the JSON's column titles, each with its key in the tooltip
		const heads = await b.eval(`[...document.querySelectorAll('.tbl')].map(w => ({ title: w.getAttribute('data-title'),
			ths: [...w.querySelectorAll('thead th')].map(th => [th.getAttribute('data-k'), th.querySelector('button').textContent, th.querySelector('button').getAttribute('title')]) }))`);
		const badh = [];
		let nh = 0;
		for (const t of emb.tables) {
			if (!t.rows || !t.rows.length || !t.columns) continue;
			const p = heads.find(x => x.title === t.title);
			if (!p) continue;
			for (const c of t.columns) {
				const th = p.ths.find(x => x[0] === c.key);
				nh++;
				if (!th || th[1] !== c.title || !th[2].startsWith(c.key + ' ')) badh.push([t.title, c.key, c.title, th]);
			}
		}
		check('headers: the JSON\'s column titles, the key in the tooltip (' + nh + ' headers)', badh.length === 0 && nh > 0, badh.slice(0, 5));
		// no table shows its title twice: a caption under a heading of the same text is hidden
		const caps = await b.eval(`[...document.querySelectorAll('.tbl')].filter(w => w.previousElementSibling && w.previousElementSibling.tagName === 'H3' &&
			w.previousElementSibling.textContent === w.querySelector('caption').textContent).map(w => [w.getAttribute('data-title'), w.querySelector('caption').getBoundingClientRect().height])`);
		check('captions: ' + caps.length + ' that repeat the heading above are hidden', caps.every(x => x[1] <= 1), caps.filter(x => x[1] > 1).slice(0, 5));
		if (args.text) {
			const text = fs.readFileSync(args.text, 'utf8');
			for (const title of TEXT_HEADERS) {
				const want = textHeaders(text, title), p = heads.find(x => x.title === title);
				if (!want || !p) continue;
				const gotT = p.ths.map(x => x[1]);
				check('headers: ' + title + ' has the text report\'s ' + want.length + ' headers', JSON.stringify(gotT) === JSON.stringify(want), { gotT, want });
			}
		}

		// times on the timeline's axis: from the trace's start (its first window or step)
		const tl = emb.tables.filter(t => t.view === 'step' && (t.title === 'Timeline' || t.title === 'Timeline: Steps') && t.rows && t.rows.length);
		if (tl.length) {
			const t0 = Math.min(...emb.tables.filter(t => t.view === 'step' && (t.title === 'Timeline' || t.title === 'Timeline: Steps')).flatMap(t => t.rows.map(r => r.start_ns)));
			const advT = d.tables.find(t => t.view === 'advice' && t.rows.some(r => typeof r.start_ns === 'number'));
			const badt = [];
			let nt = 0;
			for (const [title, key] of tl.map(t => [t.title, 'start_ns']).concat(advT ? [['Advice', 'start_ns'], ['Advice', 'end_ns']] : [])) {
				const cells = await b.eval(`[...document.querySelector('.tbl[data-title="${title}"]').querySelectorAll('tbody td[data-k="${key}"]')].slice(0, 50).map(td => [td.getAttribute('data-v'), td.textContent])`);
				for (const [v, txt] of cells) {
					if (v === '') continue;
					const [ns, ulp] = parseRel(txt);
					nt++;
					// the raw value and t0 are doubles near 1.6e18 (256 ns apart): the page rounds to the us
					if (!(Math.abs(ns - (Number(v) - t0)) <= ulp / 2 + 1000)) badt.push([title, key, v, txt, Number(v) - t0]);
				}
			}
			check('times: ' + nt + ' start times of the timeline tables and the advice read from the trace\'s start', badt.length === 0 && nt > 0, badt.slice(0, 5));
		}

		// the overview: the step breakdown's bars, one per step, each the sum of its roles
		const st0 = d.tables.find(t => t.view === 'step' && t.rows.length);
		if (st0) {
			const roles = ['kernel_ns', 'memcpy_ns', 'memset_ns', 'communication_ns', 'runtime_ns', 'dataloader_ns', 'cpu_exec_ns', 'other_ns'];
			const steps = st0.rows.filter(r => typeof r.total_ns === 'number');
			const want = steps.map(r => [String(r.step), roles.reduce((a, k) => a + (r[k] || 0), 0)]);
			const gotb = await b.eval('[...document.querySelectorAll("#sec-overview #overview-steps g[data-label]")].map(g => [g.getAttribute("data-label"), Number(g.getAttribute("data-total"))])');
			check('overview: the step breakdown, ' + want.length + ' bars, the sum of each step\'s roles', JSON.stringify(gotb) === JSON.stringify(want) && want.length > 0, { gotb, want });
			// its x labels: "#5" for ProfilerStep#5, the full name in the tooltip
			const labs = await b.eval('[...document.querySelectorAll("#overview-steps text.xl")].map(t => [t.lastChild.textContent, t.querySelector("title").textContent])');
			const wantl = steps.map(r => { const m = /#(\d+)$/.exec(String(r.step)); return [m ? '#' + m[1] : String(r.step), String(r.step)]; });
			// (a name that does not fit its bar is cut, with "\u2026"; "#N" always fits)
			const labOk = labs.length === wantl.length && labs.every((x, i) => x[1] === wantl[i][1] &&
				(x[0] === wantl[i][0] || (!/^#\d+$/.test(wantl[i][0]) && x[0].endsWith('\u2026') && wantl[i][0].startsWith(x[0].slice(0, -1)))));
			check('overview: the bars are labelled "#N", the full step name on hover', labOk, { labs: labs.slice(0, 4), wantl: wantl.slice(0, 4) });
		}

		// lost events and torn files: a warning box naming each file, none when all is read
		const files = d.tables.find(t => t.view === 'files');
		if (files) {
			const lossy = files.rows.filter(r => r.dropped || r.torn_tail_bytes || (r.status && r.status !== 'complete'));
			const w = await b.eval('(() => { const w = document.getElementById("overview-warn"); return w ? [w.getAttribute("role"), [...w.querySelectorAll("li")].map(li => li.textContent)] : null; })()');
			if (!lossy.length) check('overview: no warning box, every event was read', w === null, w);
			else {
				const ok = w && w[0] === 'alert' && lossy.every(r => w[1].some(li => li.startsWith(String(r.file) + ':'))) &&
					lossy.every(r => !r.torn_tail_bytes || w[1].some(li => li.includes('torn tail'))) && lossy.every(r => !r.dropped || w[1].some(li => li.includes(r.dropped.toLocaleString('en-US') + ' events dropped')));
				check('overview: a warning box names the ' + lossy.length + ' file(s) that lost events or end torn', ok, w);
			}
		}

		// advice: a box per finding, each link leading to a section of the page
		const adv = d.tables.find(t => t.view === 'advice' && t.rows.length);
		if (adv) {
			const a = await b.eval(`[document.querySelectorAll('#advice-list .advice').length,
				[...document.querySelectorAll('#advice-list a[href^="#"]')].map(x => x.getAttribute('href')).filter(h => !document.querySelector(h))]`);
			check('advice: ' + adv.rows.length + ' findings, every evidence link leads somewhere', a[0] === adv.rows.length && a[1].length === 0, a);
			// each box headed by its place in the list and its title ("1. Input-bound steps")
			const hs = await b.eval(`[...document.querySelectorAll('#advice-list .advice h3')].map(h => h.textContent)`);
			const wanth = adv.rows.map(r => (typeof r.rank === 'number' ? r.rank + '. ' : '') + String(r.title || r.rule));
			check('advice: each box headed "N. title", in the JSON\'s order', JSON.stringify(hs) === JSON.stringify(wanth), { hs, wanth });
		}

		// ranks: each step's straggler (the JSON's level-0 rank) is the one bar marked
		const rs = d.tables.find(t => t.title === 'Rank Steps');
		if (rs) {
			const want = [];
			let head = null;
			for (const r of rs.rows) { if (!r.level) head = r; else if (head && head.rank !== null && String(r.step).replace(/ \*$/, '') === 'rank ' + head.rank) want.push(head.step + ' ' + r.step + ' (straggler)'); }
			const gotm = await b.eval(`[...document.querySelectorAll('#sec-ranks g[data-label]')].filter(g => g.querySelector('[data-mark]')).map(g => g.getAttribute('data-label'))`);
			check('ranks: the stragglers\' bars are marked, ' + want.length, JSON.stringify(gotm) === JSON.stringify(want) && want.length > 0, { gotm, want });
		}

		// the overview's totals
		const ov = d.tables.find(t => t.view === 'overview');
		if (ov && ov.totals && 'total_ns' in ov.totals) {
			const v = await b.eval('document.querySelector("#overview-cards .card .v").getAttribute("data-v")');
			check('overview: total time is the JSON\'s total_ns', v === String(ov.totals.total_ns), v);
		}

		// the step breakdown sums to the JSON's roles per step
		const st = d.tables.find(t => t.view === 'step' && t.rows.length);
		if (st) {
			const roles = ['kernel_ns', 'memcpy_ns', 'memset_ns', 'communication_ns', 'runtime_ns', 'dataloader_ns', 'cpu_exec_ns', 'other_ns'];
			const want = st.rows.filter(r => typeof r.total_ns === 'number').map(r => [String(r.step), roles.reduce((a, k) => a + (r[k] || 0), 0)]);
			const gotb = await b.eval('[...document.querySelectorAll("#step-breakdown g[data-label]")].map(g => [g.getAttribute("data-label"), Number(g.getAttribute("data-total"))])');
			check('step breakdown: one bar per step, the sum of its roles', JSON.stringify(gotb) === JSON.stringify(want), { gotb, want });
		}

		// the step trace: gap + compute + tail + drain per step
		if (st && st.rows.some(r => r.gap_ns || r.compute_ns || r.tail_ns || r.drain_ns)) {
			const want = st.rows.filter(r => typeof r.total_ns === 'number').map(r => [String(r.step), ['gap_ns', 'compute_ns', 'tail_ns', 'drain_ns'].reduce((a, k) => a + (r[k] || 0), 0)]);
			const gott = await b.eval('[...document.querySelectorAll("#step-trace g[data-label]")].map(g => [g.getAttribute("data-label"), Number(g.getAttribute("data-total"))])');
			check('step trace: one bar per step, gap + compute + tail + drain', JSON.stringify(gott) === JSON.stringify(want), { gott, want });
		}

		// top-N bars: the first 10 kernels by GPU time, largest first, as the JSON has them
		const kt = d.tables.find(t => t.title === 'Kernel Summary' && t.rows.length);
		if (kt) {
			const want = kt.rows.slice().sort((x, y) => y.total_ns - x.total_ns).slice(0, 10).map(r => [r.display_name, r.total_ns]);
			const gotk = await b.eval(`[...document.querySelectorAll('#sec-kernels .hbars')][0] ? [...[...document.querySelectorAll('#sec-kernels .hbars')][0].querySelectorAll('g[data-label]')].map(g => [g.getAttribute('data-label'), Number(g.getAttribute('data-v'))]) : []`);
			check('kernels: top 10 bars by GPU time', JSON.stringify(gotk.map(x => x[1])) === JSON.stringify(want.map(x => x[1])) && gotk[0][0] === want[0][0], { gotk: gotk.slice(0, 3), want: want.slice(0, 3) });
		}

		// the roofline: a dot per operator row with FLOPs and bytes, a line per peak
		const fpo = d.tables.find(t => t.title === 'FLOPs per Operator' && t.rows.length);
		if (fpo) {
			const dots = fpo.rows.filter(r => r.flop_per_byte > 0 && r.tflops_per_s > 0).length;
			const ceil = d.tables.find(t => t.title === 'Roofline Ceilings' && t.rows.length);
			const peaks = ceil ? ['fp32_tflops', 'tf32_tflops', 'bf16_tflops', 'fp16_tflops', 'fp64_tflops', 'fp8_tflops'].filter(k => ceil.rows[0][k] > 0).length : 0;
			const gotr = await b.eval('document.getElementById("roofline") ? [document.querySelectorAll("#roofline circle").length, document.querySelectorAll("#roofline path[data-peak]").length] : [0, 0]');
			check('roofline: ' + dots + ' operator dots, ' + peaks + ' ceilings', gotr[0] === dots && gotr[1] === peaks, gotr);
		}

		// sorting: the kernel table (else the operator table) by a numeric column, both ways
		const sortT = ['Kernel Summary', 'Operator Summary', 'Step Summary', 'Samples: Top Functions'].find(x => d.tables.some(t => t.title === x && t.rows.filter(r => !r.level).length > 1));
		if (sortT) {
			const key = { 'Kernel Summary': 'calls', 'Operator Summary': 'calls', 'Step Summary': 'total_ns', 'Samples: Top Functions': 'cum' }[sortT];
			const col = `[...document.querySelector('.tbl[data-title="${sortT}"]').querySelectorAll('tbody tr:not(.sub) td[data-k="${key}"]')].map(td => td.getAttribute('data-v') === '' ? null : Number(td.getAttribute('data-v')))`;
			await b.eval(`document.querySelector('.tbl[data-title="${sortT}"] th[data-k="${key}"] button').click()`);
			const down = await b.eval(col);
			const aria1 = await b.eval(`document.querySelector('.tbl[data-title="${sortT}"] th[data-k="${key}"]').getAttribute('aria-sort')`);
			await b.eval(`document.querySelector('.tbl[data-title="${sortT}"] th[data-k="${key}"] button').click()`);
			const up = await b.eval(col);
			const nums = a => a.filter(x => x !== null);
			const desc = nums(down).every((x, i, a) => !i || a[i - 1] >= x), asc = nums(up).every((x, i, a) => !i || a[i - 1] <= x);
			check('sort: ' + sortT + ' by ' + key + ' descending, then ascending', desc && asc && aria1 === 'descending' && down.length > 1, { down: down.slice(0, 8), up: up.slice(0, 8), aria1 });
		}

		// search: a piece of a name of the kernel (or operator) table
		const searchT = d.tables.find(t => (t.title === 'Kernel Summary' || t.title === 'Operator Summary') && t.rows.length > 2);
		if (searchT) {
			const nameKey = searchT.title === 'Kernel Summary' ? 'display_name' : 'name';
			const heads = searchT.rows.filter(r => !r.level);
			const q = String(heads[Math.min(2, heads.length - 1)][nameKey]).slice(0, 12).toLowerCase();
			// groups whose head or sub-rows hold q in a text column
			const groups = [];
			for (const r of searchT.rows) { if (!r.level || !groups.length) groups.push([r]); else groups[groups.length - 1].push(r); }
			const want = groups.filter(g => g.some(r => Object.values(r).some(v => typeof v === 'string' && v.toLowerCase().includes(q)))).length;
			const got2 = await b.eval(`(() => { const w = document.querySelector('.tbl[data-title="${searchT.title}"]');
				const i = w.querySelector('input[data-role=search]'); i.value = ${JSON.stringify(q)}; i.dispatchEvent(new Event('input'));
				return [w.querySelectorAll('tbody tr:not(.sub)').length, w.querySelector('.tools .note').textContent]; })()`);
			check('search "' + q + '" in ' + searchT.title + ' keeps the ' + want + ' matching rows', got2[0] === Math.min(want, 200) && want > 0 && got2[1].includes('(' + want + ' match)'), got2);
			await b.eval(`(() => { const i = document.querySelector('.tbl[data-title="${searchT.title}"] input[data-role=search]'); i.value = ''; i.dispatchEvent(new Event('input')); })()`);
		}

		// the data embedded in the page: the JSON report, plus the page's own tables (parsed
		// above), the flame graph's self weights summing per function to the JSON's flat
		const fls = emb.tables.filter(t => t.title === 'Samples: Flame Graph');
		const fl = fls[0];
		const byShape = emb.tables.find(t => t.title === 'Operator Summary by Input Shape');
		const pageOnly = t => fls.includes(t) || t === byShape || t.title === 'Timeline' || t.title === 'Timeline: Steps';
		const same = JSON.stringify(emb.tables.filter(t => !pageOnly(t))) === JSON.stringify(d.tables) &&
			JSON.stringify(emb.inputs) === JSON.stringify(d.inputs);
		check('the page embeds the JSON report once, as it is' + (fl ? ', and a flame graph' : ''),
			same && html.split('id="opscope-data"').length === 2);
		if (byShape) { // the page's operators by input shape: per name, the calls of the JSON's operator table
			const op = d.tables.find(t => t.title === 'Operator Summary');
			const calls = {};
			for (const r of byShape.rows) calls[r.name] = (calls[r.name] || 0) + r.calls;
			const bado = op.rows.filter(r => !r.level && calls[r.name] !== r.calls).map(r => [r.name, r.calls, calls[r.name]]);
			const shown = await b.eval(`document.querySelectorAll('.tbl[data-title="Operator Summary by Input Shape"] tbody tr').length`);
			check('operators by input shape: per name, calls add up to the JSON operator table\'s', bado.length === 0 && shown === Math.min(200, byShape.rows.length), { bado: bado.slice(0, 5), shown });
		}
		if (fl) {
			const top = d.tables.find(t => t.title === 'Samples: Top Functions');
			const flat = {};
			for (const r of fl.rows) flat[r.name + '\0' + r.file] = (flat[r.name + '\0' + r.file] || 0) + r.self;
			const badf = top.rows.filter(r => (flat[r.name + '\0' + r.file] || 0) !== r.flat).map(r => [r.name, r.flat, flat[r.name + '\0' + r.file]]);
			check('flame graph: per function, self weights sum to the JSON\'s flat', badf.length === 0, badf);
		}
		if (fl) {
			const rows = fl.rows;
			const total = rows.filter(r => r.parent === null).reduce((a, r) => a + r.total, 0);
			const info0 = await b.eval('document.getElementById("flame-info").textContent');
			check('flame graph: all ' + total + ' samples', info0.startsWith('all ' + total + ' samples'), info0);
			// zoom on the widest non-root node with children
			let zi = -1;
			rows.forEach((r, i) => { if (r.parent !== null && (zi < 0 || r.total > rows[zi].total)) zi = i; });
			await b.eval(`document.querySelector('#flame .fr[data-i="${zi}"]').click()`);
			const z = await b.eval(`[document.getElementById('flame-info').textContent, document.querySelector('#flame .fr[data-i="${zi}"]:not(.dim)').style.width, document.getElementById('flame').clientWidth]`);
			check('flame graph: a click zooms to the frame (' + rows[zi].total + ' of ' + total + ' samples, full width)', z[0].startsWith('zoomed: ' + rows[zi].total + ' of ' + total) && Math.abs(parseFloat(z[1]) - z[2]) < 2, z);
			await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Escape', code: 'Escape', windowsVirtualKeyCode: 27 });
			await b.eval('document.querySelector("#flame .fr").focus()');
			await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Escape', code: 'Escape', windowsVirtualKeyCode: 27 });
			const reset = await b.eval('document.getElementById("flame-info").textContent');
			check('flame graph: Escape zooms out', reset.startsWith('all '), reset);
			// Enter on a focused root frame zooms to it
			const ri = rows.findIndex(r => r.parent === null);
			await b.eval(`document.querySelector('#flame .fr[data-i="${ri}"]').focus()`);
			await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: '\r' });
			const ent = await b.eval('document.getElementById("flame-info").textContent');
			check('flame graph: Enter on a focused frame zooms to it', ent.startsWith('zoomed: ' + rows[ri].total + ' of'), ent);
			await b.eval('document.getElementById("flame-reset").click()');
			// search: the samples under the first frames whose name holds q, each once
			const q = String(rows[zi].name).toLowerCase();
			const kids = rows.map(() => []);
			rows.forEach((r, i) => { if (r.parent !== null) kids[r.parent].push(i); });
			let want = 0;
			const walk = i => { if (String(rows[i].name).toLowerCase().includes(q)) { want += rows[i].total; return; } kids[i].forEach(walk); };
			rows.forEach((r, i) => { if (r.parent === null) walk(i); });
			const m = await b.eval(`(() => { const i = document.getElementById('flame-search'); i.value = ${JSON.stringify(q)}; i.dispatchEvent(new Event('input'));
				return [document.getElementById('flame-info').getAttribute('data-matched'), document.querySelectorAll('#flame .fr.hit').length]; })()`);
			check('flame graph: search "' + q.slice(0, 40) + '" matches ' + want + ' samples', m[0] === String(want) && m[1] > 0, m);
			await b.eval(`(() => { const i = document.getElementById('flame-search'); i.value = ''; i.dispatchEvent(new Event('input')); })()`);
			// the per-range filter: each other table is the samples inside one range name
			for (let k = 1; k < fls.length; k++) {
				const tot = fls[k].rows.filter(r => r.parent === null).reduce((a, r) => a + r.total, 0);
				const info = await b.eval(`(() => { const s = document.getElementById('flame-range'); s.value = '${k}'; s.dispatchEvent(new Event('change'));
					return [document.getElementById('flame-info').textContent, document.querySelectorAll('#flame .fr').length]; })()`);
				check('flame graph: ' + fls[k].group.slice(0, 40) + ' shows its ' + tot + ' samples', info[0].startsWith('all ' + tot + ' samples') && info[1] > 0, info);
			}
			if (fls.length > 1)
				await b.eval(`(() => { const s = document.getElementById('flame-range'); s.value = '0'; s.dispatchEvent(new Event('change')); })()`);
		}

		// the timeline's windows: one bar per window of each lane, its busy time as in the data
		const wins = emb.tables.find(t => t.title === 'Timeline');
		if (wins) {
			for (const ln of ['phases', 'operators', 'kernels']) {
				const want = wins.rows.filter(r => r.lane === ln).map(r => String(r.busy_ns));
				if (!want.length) continue;
				const gotw = await b.eval(`[...document.querySelectorAll('#timeline g[data-lane="${ln}"] rect')].map(r => r.getAttribute('data-v'))`);
				check('timeline: ' + ln + ': a bar per window, ' + want.length + ', with its busy time', JSON.stringify(gotw) === JSON.stringify(want), { got: gotw.slice(0, 5), want: want.slice(0, 5) });
			}
		}

		// the timeline zooms from the keyboard
		if (await b.eval('!!document.getElementById("timeline")')) {
			const r0 = await b.eval('document.getElementById("timeline-range").textContent');
			await b.eval('document.getElementById("timeline").focus()');
			await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: '+', code: 'Equal', text: '+' });
			const r1 = await b.eval('document.getElementById("timeline-range").textContent');
			check('timeline: + zooms in', r0 !== r1, [r0, r1]);
			await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: '0', code: 'Digit0', text: '0' });
			const r2 = await b.eval('document.getElementById("timeline-range").textContent');
			check('timeline: 0 resets', r2 === r0, [r0, r2]);
			// an advice range's link zooms the timeline to it (a tenth more on each side)
			const link = await b.eval(`(() => { const a = document.querySelector('#advice-list a[data-start]'); if (!a) return null;
				a.click(); return [Number(a.getAttribute('data-start')), Number(a.getAttribute('data-end')), document.getElementById('timeline-range').textContent]; })()`);
			if (link) {
				const span = await b.eval('window.opscopeTimeline.span()');
				const want = [link[0] - (link[1] - link[0]) * 0.1, link[1] + (link[1] - link[0]) * 0.1];
				check('timeline: an advice link shows its range', span[0] <= link[0] && span[1] >= link[1] && (span[1] - span[0]) <= (want[1] - want[0]) * 1.001 + 1, { link, span });
				await b.page('Input.dispatchKeyEvent', { type: 'keyDown', key: '0', code: 'Digit0', text: '0' });
			}
		}


		if (args.hostile) {
			check('hostile names: no script of theirs ran (window.__pwned unset)', await b.eval('typeof window.__pwned') === 'undefined');
			check('hostile names: no <img> made, two <script> in all', JSON.stringify(await b.eval('[document.images.length, document.scripts.length]')) === '[0,2]');
			for (const title of ['Operator Summary', 'Kernel Summary']) {
				const t = d.tables.find(x => x.title === title);
				const key = title === 'Kernel Summary' ? 'name' : 'name';
				const want = t.rows.filter(r => !r.level).map(r => r[key]);
				const gotn = await b.eval(`[...document.querySelectorAll('.tbl[data-title="${title}"] tbody tr:not(.sub) td[data-k="${key}"]')].map(td => td.textContent)`);
				check('hostile names: ' + title + ' shows every name as text, exactly', JSON.stringify(gotn) === JSON.stringify(want), { got: gotn.map(x => x.slice(0, 50)), want: want.map(x => x.slice(0, 50)) });
			}
			const long = await b.eval('Math.max(...[...document.querySelectorAll("td")].map(td => td.textContent.length))');
			check('hostile names: the 10,000-character kernel name is there whole', long === 10003, long);
		}

		// screenshots, light and dark; the theme button flips
		await b.eval('window.scrollTo(0, 0)');
		await b.screenshot(path.join(shots, name + '-light.png'), 5000);
		await b.screenshot(path.join(shots, name + '-top.png'), 1300); // docs/html-report.png
		await b.eval('document.getElementById("theme").click()');
		const th = await b.eval('document.documentElement.getAttribute("data-theme")');
		check('theme button: light to dark', th === 'dark', th);
		await b.screenshot(path.join(shots, name + '-dark.png'), 5000);

		// nothing but the page itself was asked for, and nothing complained
		const others = b.requests.filter(u => u !== url);
		check('no network request but the page (' + b.requests.length + ' seen)', others.length === 0 && b.requests.length >= 1, others.slice(0, 5));
		const errs = b.console.filter(m => m.type === 'error' || m.type === 'warning' || m.type === 'assert');
		check('no console error or warning', errs.length === 0, errs.slice(0, 5));
		check('no exception', b.exceptions.length === 0, b.exceptions.slice(0, 5));
	} finally {
		await b.close();
	}
	console.log('1..' + n);
	process.exit(failed ? 1 : 0);
}
main().catch(e => { console.log('not ok - ' + (e && e.stack || e)); process.exit(1); });
