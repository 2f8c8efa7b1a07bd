package console

import (
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// consoleModuleChecks runs in the console's page, importing its modules:
// LevelLister against a store that serves a random key space as GET
// /v1/kv does (page tokens, limits, counts), compared with the children
// computed from all keys; and diffLines, whose edit scripts must rebuild
// both sides with as few edits as a longest common subsequence allows.
// It resolves to a list of failures.
const consoleModuleChecks = `(async () => {
	const { LevelLister } = await import("/console/level.js");
	const { diffLines } = await import("/console/diff.js");
	const { utf8, compare, text, fromWire } = await import("/console/bytes.js");
	const bad = [];
	let seed = 7;
	const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };

	function fakeStore(keys) {
		const sorted = keys.map(utf8).sort(compare);
		return { reads: 0, list(r, o) {
			this.reads++;
			const lo = o.pageToken ? utf8(JSON.parse(o.pageToken)) : r.key;
			const toEnd = r.end.length === 1 && r.end[0] === 0;
			const inRange = sorted.filter((k) => compare(k, lo) >= 0 && (toEnd || compare(k, r.end) < 0));
			const page = inRange.slice(0, o.limit);
			const more = inRange.length > o.limit;
			return Promise.resolve({
				header: { revision: 9 }, count: inRange.length, more,
				kvs: page.map((k) => ({ key: text(k) })),
				next_page_token: more ? JSON.stringify(text(page[page.length - 1]) + "\u0000") : undefined,
			});
		} };
	}
	function expected(keys, folder) {
		const out = new Set();
		for (const k of keys) {
			if (!k.startsWith(folder)) continue;
			const i = k.indexOf("/", folder.length);
			out.add(i < 0 ? k : k.slice(0, i + 1));
		}
		return [...out].sort((a, b) => compare(utf8(a), utf8(b)));
	}
	for (let round = 0; round < 200; round++) {
		const keys = new Set();
		const n = rnd(300);
		for (let i = 0; i < n; i++) {
			let k = "";
			for (let d = 1 + rnd(3); d > 0; d--) k += (k ? "/" : "") + "abcde"[rnd(5)] + (rnd(2) ? "x" : "");
			keys.add(rnd(5) ? k : "a/" + k);
		}
		for (const folder of ["", "a/", "b/", "ax/"]) {
			const store = fakeStore([...keys]);
			const lister = new LevelLister(store, utf8(folder), utf8("/"));
			const got = [];
			while (!lister.done) {
				const batch = await lister.next(1 + rnd(20));
				got.push(...batch.children.map((c) => text(c.key)));
			}
			const want = expected([...keys], folder);
			if (JSON.stringify(got) !== JSON.stringify(want)) {
				bad.push("level " + JSON.stringify(folder) + " of " + JSON.stringify([...keys]) + ": got " + JSON.stringify(got) + ", want " + JSON.stringify(want));
			}
		}
	}
	// 100 folders of 1,000 keys and 1,000 plain keys: few reads, few keys.
	const big = [];
	for (let f = 0; f < 100; f++) for (let i = 0; i < 1000; i++) big.push("f" + String(f).padStart(3, "0") + "/" + i);
	for (let i = 0; i < 1000; i++) big.push("k" + String(i).padStart(4, "0"));
	const store = fakeStore(big);
	const lister = new LevelLister(store, utf8(""), utf8("/"));
	let children = 0;
	while (!lister.done) children += (await lister.next(100)).children.length;
	if (children !== 1100 || store.reads > 150) bad.push("level of 101,000 keys: " + children + " children in " + store.reads + " reads, want 1100 in at most 150");

	function lcs(a, b) {
		const d = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
		for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) d[i][j] = a[i] === b[j] ? d[i + 1][j + 1] + 1 : Math.max(d[i + 1][j], d[i][j + 1]);
		return d[0][0];
	}
	for (let round = 0; round < 500; round++) {
		const a = Array.from({ length: rnd(12) }, () => "xyz"[rnd(3)]);
		const b = Array.from({ length: rnd(12) }, () => "xyz"[rnd(3)]);
		const script = diffLines(a.join("\n"), b.join("\n"));
		const from = script.filter((l) => l.op !== "+").map((l) => l.text).join("\n");
		const to = script.filter((l) => l.op !== "-").map((l) => l.text).join("\n");
		const edits = script.filter((l) => l.op !== "=").length;
		if (from !== a.join("\n") || to !== b.join("\n") || edits !== a.length + b.length - 2 * lcs(a, b)) {
			bad.push("diff " + JSON.stringify(a) + " -> " + JSON.stringify(b) + ": " + JSON.stringify(script));
		}
	}
	return bad;
})()`

// TestConsoleModules checks the console's listing and diff algorithms in
// the browser that runs them, against brute force on random inputs.
func TestConsoleModules(t *testing.T) {
	t.Parallel()
	e2e.RunModuleChecks(t, consoleModuleChecks)
}

// consoleValueChecks runs in the console's page: measure() against the
// length of JSON.stringify on random values, some sharing nodes as YAML
// aliases do; jsonChanges(), whose paths, applied to the first value as
// JSON Patch would apply them, must give the second; and diffLines on
// texts too long to align, which must give up, still rebuilding both.
const consoleValueChecks = `(async () => {
	const { measure } = await import("/console/formats.js");
	const { jsonChanges, canonical } = await import("/console/compare.js");
	const { diffLines } = await import("/console/diff.js");
	const bad = [];
	let seed = 11;
	// mulberry32: every bit of it is random, unlike a power-of-two LCG's low bits.
	const rnd = (n) => {
		seed = (seed + 0x6d2b79f5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) % n;
	};
	const keys = ["a", "b", "c/d", "e~f", "", "__proto__", "10", "9"];
	function value(depth, pool) {
		const r = rnd(depth > 3 ? 4 : 7);
		if (r === 0) return null;
		if (r === 1) return rnd(2) === 0;
		if (r === 2) return rnd(1000) - 500 + (rnd(2) ? 0.5 : 0);
		if (r === 3) return ["", "x", "a\u0001\"b\\\\", "é𝄞", "y".repeat(70)][rnd(5)];
		if (pool && pool.length && rnd(3) === 0) return pool[rnd(pool.length)];
		let v;
		if (r === 4 || r === 5) v = Array.from({ length: rnd(4) }, () => value(depth + 1, pool));
		else {
			v = {};
			for (let i = rnd(4); i > 0; i--) Object.defineProperty(v, keys[rnd(keys.length)], { value: value(depth + 1, pool), enumerable: true, writable: true, configurable: true });
		}
		if (pool) pool.push(v);
		return v;
	}
	for (let round = 0; round < 500; round++) {
		const v = value(0, round % 2 ? [] : null);
		const m = measure(v, round % 2 === 1);
		const want = JSON.stringify(v, null, 2).length;
		if (m.chars !== want) bad.push("measure " + JSON.stringify(v) + ": " + m.chars + " characters, want " + want);
	}
	const unescape = (t) => t.replace(/~1/g, "/").replace(/~0/g, "~");
	function apply(doc, changes) {
		const root = { "": structuredClone(doc) };
		const removals = [];
		for (const c of changes) {
			const tokens = c.path === "" ? [] : c.path.slice(1).split("/").map(unescape);
			let parent = root;
			let last = "";
			for (const t of tokens) {
				parent = parent[last];
				last = t;
			}
			if (c.op === "removed") removals.push([parent, last]);
			else Object.defineProperty(parent, last, { value: c.after, enumerable: true, writable: true, configurable: true });
		}
		for (const [parent, last] of removals.reverse()) {
			if (Array.isArray(parent)) parent.splice(Number(last), 1);
			else delete parent[last];
		}
		return root[""];
	}
	for (let round = 0; round < 500; round++) {
		const a = value(0, null);
		const b = rnd(4) === 0 ? structuredClone(a) : value(0, null);
		const changes = jsonChanges(a, b);
		const got = apply(a, changes);
		if (canonical(got) !== canonical(b)) bad.push("jsonChanges " + JSON.stringify(a) + " -> " + JSON.stringify(b) + ": " + JSON.stringify(changes) + " gives " + JSON.stringify(got));
		if (canonical(a) === canonical(b) && changes.length) bad.push("jsonChanges of equal values " + JSON.stringify(a) + ": " + JSON.stringify(changes));
	}
	const one = jsonChanges({ "a/b": { "c~d": [1, 2] }, x: 1 }, { "a/b": { "c~d": [1, 3] }, x: 1 });
	if (JSON.stringify(one) !== JSON.stringify([{ op: "changed", path: "/a~1b/c~0d/1", before: 2, after: 3 }])) bad.push("jsonChanges of one element: " + JSON.stringify(one));

	const many = (n, tag) => Array.from({ length: n }, (_, i) => (i % 3 ? tag : "") + i).join("\n");
	const a = many(30000, "x"), b = many(30000, "y");
	const script = diffLines(a, b);
	const from = script.filter((l) => l.op !== "+").map((l) => l.text).join("\n");
	const to = script.filter((l) => l.op !== "-").map((l) => l.text).join("\n");
	if (!script.gaveUp || from !== a || to !== b) bad.push("diffLines of 30,000 lines each: gave up " + script.gaveUp + ", rebuilds the old side " + (from === a) + ", the new side " + (to === b));
	return bad;
})()`

// TestConsoleValueModules checks the console's measure of values, its
// JSON comparison and its bound on line diffs against brute force.
func TestConsoleValueModules(t *testing.T) {
	t.Parallel()
	e2e.RunModuleChecks(t, consoleValueChecks)
}

// consoleLeaseRefreshChecks mounts the Leases section on a store whose
// reads of a lease wait until the check lets them go, with the page's
// timers in the check's hands: a timed refresh while a page of reads is
// in flight must not start another (each overtaking the last, a server
// slower than the refresh period showed nothing, ever), and the page in
// flight must show once its reads end.
const consoleLeaseRefreshChecks = `(async () => {
	const { mountLeases } = await import("/console/leases.js");
	const bad = [];
	const timers = [];
	const realSetInterval = window.setInterval, realClearInterval = window.clearInterval;
	window.setInterval = (fn, ms) => { timers.push({ fn, ms }); return -timers.length; };
	window.clearInterval = (id) => { if (id > 0) realClearInterval(id); };
	let lists = 0;
	const held = [];
	const store = {
		leases: () => { lists++; return Promise.resolve({ leases: [{ id: 7 }], more: false }); },
		lease: (id) => new Promise((resolve) => held.push(() => resolve({ id, ttl: 50, granted_ttl: 60 }))),
	};
	const container = document.createElement("div");
	document.body.append(container);
	let view;
	try {
		view = mountLeases(container, { store }, new URLSearchParams());
	} finally {
		window.setInterval = realSetInterval;
		window.clearInterval = realClearInterval;
	}
	const settle = () => new Promise((r) => setTimeout(r, 0));
	await settle();
	const refresh = timers.find((t) => t.ms >= 5000);
	if (!refresh) bad.push("no timed refresh: " + JSON.stringify(timers.map((t) => t.ms)));
	else {
		for (let i = 0; i < 3; i++) refresh.fn();
		await settle();
		if (lists !== 1) bad.push("timed refreshes while a page was in flight read the list " + lists + " times, want once");
	}
	for (const go of held.splice(0)) go();
	for (let i = 0; i < 5; i++) await settle();
	const summary = container.querySelector(".leases .summary").textContent;
	if (!summary.includes("Leases 1 to 1")) bad.push("after the slow page ended the summary says " + JSON.stringify(summary));
	if (refresh) {
		refresh.fn();
		await settle();
		if (lists !== 2) bad.push("a timed refresh after the page ended read the list " + lists + " times in all, want 2");
	}
	for (const go of held.splice(0)) go();
	view.dispose();
	container.remove();
	return bad;
})()`

// TestConsoleLeasesRefreshSlowServer checks that the Leases section shows
// a page whose reads take longer than its refresh period.
func TestConsoleLeasesRefreshSlowServer(t *testing.T) {
	t.Parallel()
	e2e.RunModuleChecks(t, consoleLeaseRefreshChecks)
}
