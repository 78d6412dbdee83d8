// cdp.js: a headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: requests on fd 3, answers and events on fd 4, each a JSON text
// ended by a NUL byte), so that the browser tests need Node and Debian's chromium and no
// package from npm. Only what the tests use: open a page, evaluate, screenshot, and every
// console message, exception and network request seen, for the tests to fail on.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

// Chromium's path: $CHROMIUM, else the first of the usual names on PATH; null when none.
function findChromium() {
	if (process.env.CHROMIUM) return fs.existsSync(process.env.CHROMIUM) ? process.env.CHROMIUM : null;
	for (const dir of (process.env.PATH || '').split(':'))
		for (const n of ['chromium', 'chromium-browser', 'google-chrome'])
			if (dir && fs.existsSync(path.join(dir, n))) return path.join(dir, n);
	return null;
}

class Browser {
	// Start Chromium headless with a throwaway profile and no background traffic.
	static async launch(exe, width, height) {
		const b = new Browser();
		b.profile = fs.mkdtempSync(path.join(os.tmpdir(), 'opscope-chromium-'));
		const args = ['--headless=new', '--remote-debugging-pipe', '--no-first-run',
			'--no-default-browser-check', '--disable-gpu', '--disable-extensions',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
			'--disable-default-apps', '--metrics-recording-only', '--mute-audio',
			'--disable-dev-shm-usage', '--user-data-dir=' + b.profile,
			'--window-size=' + width + ',' + height];
		if (process.getuid && process.getuid() === 0) args.push('--no-sandbox'); // root: no sandbox possible
		b.proc = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
		b.stderr = '';
		b.proc.stderr.on('data', d => { if (b.stderr.length < 20000) b.stderr += d; });
		b.out = b.proc.stdio[3];
		b.in = b.proc.stdio[4];
		b.id = 0;
		b.pending = new Map();
		b.listeners = [];
		let buf = Buffer.alloc(0);
		b.in.on('data', d => {
			buf = Buffer.concat([buf, d]);
			let z;
			while ((z = buf.indexOf(0)) >= 0) {
				const msg = JSON.parse(buf.subarray(0, z).toString('utf8'));
				buf = buf.subarray(z + 1);
				if (msg.id && b.pending.has(msg.id)) {
					const p = b.pending.get(msg.id);
					b.pending.delete(msg.id);
					if (msg.error) p.reject(new Error(p.method + ': ' + msg.error.message));
					else p.resolve(msg.result);
				} else if (msg.method) {
					for (const l of b.listeners) l(msg);
				}
			}
		});
		b.exited = new Promise(r => b.proc.on('exit', r));
		const t = await b.send('Target.createTarget', { url: 'about:blank' });
		const a = await b.send('Target.attachToTarget', { targetId: t.targetId, flatten: true });
		b.session = a.sessionId;
		b.console = [];
		b.exceptions = [];
		b.requests = [];
		b.on(m => {
			if (m.method === 'Runtime.consoleAPICalled')
				b.console.push({ type: m.params.type, text: m.params.args.map(x => x.value !== undefined ? String(x.value) : x.description || x.type).join(' ') });
			else if (m.method === 'Runtime.exceptionThrown')
				b.exceptions.push(m.params.exceptionDetails.exception ? m.params.exceptionDetails.exception.description : m.params.exceptionDetails.text);
			else if (m.method === 'Log.entryAdded')
				b.console.push({ type: m.params.entry.level, text: m.params.entry.source + ': ' + m.params.entry.text });
			else if (m.method === 'Network.requestWillBeSent')
				b.requests.push(m.params.request.url);
		});
		for (const d of ['Runtime.enable', 'Log.enable', 'Network.enable', 'Page.enable'])
			await b.send(d, {}, b.session);
		return b;
	}
	on(f) { this.listeners.push(f); }
	send(method, params, session) {
		const id = ++this.id;
		const msg = { id, method, params: params || {} };
		if (session) msg.sessionId = session;
		return new Promise((resolve, reject) => {
			this.pending.set(id, { resolve, reject, method });
			this.out.write(JSON.stringify(msg) + '\0');
		});
	}
	page(method, params) { return this.send(method, params, this.session); }
	// Navigate and wait for the load event; resolves with the ms it took.
	async open(url, timeoutMs) {
		const t0 = Date.now();
		const loaded = new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error('no load event in ' + timeoutMs + ' ms')), timeoutMs);
			this.on(m => { if (m.method === 'Page.loadEventFired') { clearTimeout(timer); resolve(); } });
		});
		await this.page('Page.navigate', { url });
		await loaded;
		return Date.now() - t0;
	}
	// The value of a JavaScript expression in the page (awaited when it is a promise).
	async eval(expr) {
		const r = await this.page('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true });
		if (r.exceptionDetails) throw new Error('evaluate: ' + (r.exceptionDetails.exception ? r.exceptionDetails.exception.description : r.exceptionDetails.text));
		return r.result.value;
	}
	// A PNG of the whole page (or its first maxHeight pixels) into file.
	async screenshot(file, maxHeight) {
		const m = await this.page('Page.getLayoutMetrics');
		const w = Math.ceil(m.cssContentSize.width), h = Math.min(maxHeight || 20000, Math.ceil(m.cssContentSize.height));
		const r = await this.page('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: w, height: h, scale: 1 } });
		fs.writeFileSync(file, Buffer.from(r.data, 'base64'));
	}
	async close() {
		try { await Promise.race([this.send('Browser.close'), new Promise(r => setTimeout(r, 3000))]); } catch (e) { /* gone already */ }
		await Promise.race([this.exited, new Promise(r => setTimeout(r, 3000))]);
		if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
		fs.rmSync(this.profile, { recursive: true, force: true });
	}
}

module.exports = { Browser, findChromium };
