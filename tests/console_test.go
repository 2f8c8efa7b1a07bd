package tests

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// consoleHarness runs web/static/console.js under node with just enough
// of a DOM for it: the page's elements, and fetch pointed at the server in
// HTTPKV_URL. It waits for the console's first list, then clicks the
// delete button of the row shown as CLICK_KEY = CLICK_VALUE, and waits for
// the request to finish. The console's error line is printed, so that a
// refused request shows.
const consoleHarness = `
"use strict";
const fs = require("fs");
const vm = require("vm");
const base = process.env.HTTPKV_URL;
const elements = new Map();
function node(tag) {
  return {
    tag, value: "", checked: false, hidden: false, textContent: "", className: "",
    dataset: {}, children: [],
    append(...c) { this.children.push(...c); },
    prepend(...c) { this.children.unshift(...c); },
    replaceChildren(...c) { this.children = c; },
    insertBefore(n, ref) { const i = this.children.indexOf(ref); i < 0 ? this.children.push(n) : this.children.splice(i, 0, n); },
    remove() {}, replaceWith() {},
  };
}
const document = {
  getElementById(id) { if (!elements.has(id)) elements.set(id, node(id)); return elements.get(id); },
  createElement: node,
};
class EventSource { constructor() { throw new Error("the harness does not watch"); } }
const ctx = { document, EventSource, URLSearchParams, console, Promise, Error, String, JSON,
  fetch: (path, opts) => fetch(base + path, opts) };
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(process.env.CONSOLE_JS, "utf8"), ctx);
(async () => {
  const rows = document.getElementById("keys");
  for (let i = 0; i < 500 && rows.children.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const row = rows.children.find((tr) => tr.children[0].textContent === process.env.CLICK_KEY && tr.children[1].textContent === process.env.CLICK_VALUE);
  if (!row) throw new Error("no row shows " + process.env.CLICK_KEY + " = " + process.env.CLICK_VALUE);
  await row.children[5].children[0].onclick();
  console.log("error line: " + document.getElementById("error").textContent);
})().catch((e) => { console.error(e); process.exit(1); });
`

// TestConsoleDeletesBinaryKey runs the web console's script against the
// server with two keys that the console shows alike: the bytes ff fe,
// which are not UTF-8 (shown as base64://4=), and the UTF-8 key
// "base64://4=". Deleting the first from the console deletes the bytes
// ff fe, not the other key. It needs node; without it, it is skipped, or
// fails on CI.
func TestConsoleDeletesBinaryKey(t *testing.T) {
	t.Parallel()
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the console test needs node: %v", err)
		}
		t.Skipf("the console test needs node: %v", err)
	}
	s := startServer(t)
	binary := "\xff\xfe"
	shown := "base64:" + base64.StdEncoding.EncodeToString([]byte(binary))
	s.put(t, binary, "bytes")
	s.put(t, shown, "text")

	dir := t.TempDir()
	harness := filepath.Join(dir, "harness.js")
	if err := os.WriteFile(harness, []byte(consoleHarness), 0o600); err != nil {
		t.Fatal(err)
	}
	consoleJS, err := filepath.Abs(filepath.Join("..", "web", "static", "console.js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, harness)
	cmd.Env = append(os.Environ(), "HTTPKV_URL="+s.URL, "CONSOLE_JS="+consoleJS, "CLICK_KEY="+shown, "CLICK_VALUE=bytes")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", harness, err, out)
	}
	t.Logf("node: %s", out)

	s.do(t, "GET", keyPath(binary), nil).wantError(t, http.StatusNotFound, "key_not_found")
	if kv := s.get(t, shown); kv.value() != "text" {
		t.Errorf("%q = %q after deleting the bytes ff fe, want it untouched", shown, kv.value())
	}
}
