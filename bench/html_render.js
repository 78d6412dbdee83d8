// html_render.js: how long headless chromium takes to show an HTML report (bench_html.sh).
//   node bench/html_render.js PAGE.html [RUNS]
// Prints, per run, the ms from navigation to the load event and to the end of drawing
// (window.opscopeDrawnMs, set by report.js when every section is drawn), then the best of each.
'use strict';
const path = require('path');
const { Browser, findChromium } = require('../tests/browser/cdp.js');
(async () => {
	const exe = findChromium();
	if (!exe) { console.log('no chromium'); process.exit(77); }
	const runs = Number(process.argv[3] || 3);
	let bestLoad = Infinity, bestDrawn = Infinity;
	for (let i = 0; i < runs; i++) {
		const b = await Browser.launch(exe, 1280, 900);
		try {
			const load = await b.open('file://' + path.resolve(process.argv[2]), 120000);
			const drawn = await b.eval('new Promise(r => { const f = () => document.body.getAttribute("data-ready") ? r(window.opscopeDrawnMs) : setTimeout(f, 10); f(); })');
			const errs = b.exceptions.length + b.console.filter(m => m.type === 'error').length;
			console.log('run ' + (i + 1) + ': load event ' + load + ' ms, drawn ' + Math.round(drawn) + ' ms' + (errs ? ', ' + errs + ' errors' : ''));
			bestLoad = Math.min(bestLoad, load);
			bestDrawn = Math.min(bestDrawn, drawn);
		} finally {
			await b.close();
		}
	}
	console.log('best: load event ' + bestLoad + ' ms, drawn ' + Math.round(bestDrawn) + ' ms');
})().catch(e => { console.error(e); process.exit(1); });
