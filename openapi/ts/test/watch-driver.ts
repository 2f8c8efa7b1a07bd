// A driver of the watch helpers for go test ./tests/docs/ -run
// TestTypeScriptWatch: it watches the server at HTTPKV_URL and prints
// what it receives, a line each, while the test writes, kills and
// restarts the server. It stops when its stdin ends.
//
//   node build/test/watch-driver.js watch    a watch of w/ from revision 1
//   node build/test/watch-driver.js stream   a stream of a/ (from 1) and b/ (from now);
//                                            a line "add c/" on stdin adds a watch of c/ from 1
import { createInterface } from "node:readline";

import { watch, WatchStream } from "../src/index.js";

const url = process.env.HTTPKV_URL;
if (!url) throw new Error("HTTPKV_URL is not set: run this through go test ./tests/docs/ -run TestTypeScriptWatch");
const abort = new AbortController();
const out = (line: string) => process.stdout.write(line + "\n");
const options = { signal: abort.signal, onRetry: () => out("retry") };
const input = createInterface({ input: process.stdin });
input.on("close", () => abort.abort());

if (process.argv[2] === "watch") {
  for await (const m of watch(url, { key: "w/", prefix: true, start_revision: 1 }, options)) {
    if (m.type !== "events") {
      out(m.type);
      continue;
    }
    for (const ev of m.events) out(`${ev.kv.mod_revision} ${ev.type} ${ev.kv.key}`);
  }
} else {
  const { stream, ids } = await WatchStream.create(url, [{ key: "a/", prefix: true, start_revision: 1 }, { key: "b/", prefix: true }], options);
  out(`ids ${ids.join(" ")}`);
  input.on("line", (line) => {
    const [cmd, prefix] = line.split(" ");
    if (cmd === "add" && prefix) stream.add({ key: prefix, prefix: true, start_revision: 1 }).then((id) => out(`added ${id}`));
  });
  for await (const m of stream.messages()) {
    if (m.error) throw m.error;
    if (m.type === "events") {
      for (const ev of m.events) out(`${m.watch_id} ${ev.kv.mod_revision} ${ev.type} ${ev.kv.key}`);
    } else {
      out(`${m.watch_id} ${m.type}`);
    }
  }
}
out("end");
