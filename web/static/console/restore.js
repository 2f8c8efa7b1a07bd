// Restoring a past value: written as a new version, only if the key is
// still as the user last saw it (If-Match its current mod revision), or
// still absent (If-None-Match), so a restore never overwrites a change
// made meanwhile.

import { display, preview } from "./bytes.js";
import { confirm, notify } from "./dialog.js";
import { h } from "./dom.js";

/**
 * restore asks, then puts value (bytes) as the key's new value; from says
 * where the value comes from, for the question. It resolves to the new
 * revision, or 0 when nothing was written.
 */
export async function restore(app, key, value, from) {
  const { store } = app;
  try {
    const now = await store.get(key);
    const ok = await confirm({
      title: `Restore ${display(key)}?`,
      body: [
        `Write the value ${from} as the key's new value${now ? `, replacing its current revision ${now.kv.mod_revision}` : " (the key does not exist now)"}.`,
        h("pre", { class: "code small" }, preview(value, 2000, false)),
      ],
      action: "Restore",
    });
    if (!ok) return 0;
    const res = await store.put(key, value, now ? { ifMatch: now.kv.mod_revision, verb: "restore" } : { ifNoneMatch: true, verb: "restore" });
    notify(`Restored ${display(key)} as revision ${res.header.revision}.`);
    return res.header.revision;
  } catch (e) {
    notify(e.status === 412 ? `${display(key)} changed meanwhile: nothing was restored. Look again and retry.` : e.explain(), "error");
    return 0;
  }
}
