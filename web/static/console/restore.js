// Restoring a past value: written as a new version, only if the key is
// still as the user last saw it (If-Match its current mod revision), or
// still absent (If-None-Match), so a restore never overwrites a change
// made meanwhile. And restoring a whole range as of a revision, with
// POST /v1/restore.

import { explain } from "./api.js";
import { display, preview } from "./bytes.js";
import { confirm, notify } from "./dialog.js";
import { h } from "./dom.js";
import { describe } from "./store.js";
import { changesText, renderChanges } from "./transfer.js";

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

/**
 * restoreAt makes the range r hold again what it held at revision (POST
 * /v1/restore): a dry run first, shown in the confirmation, then the
 * restore itself, one new revision. It resolves to that revision, or 0
 * when nothing was written. (The restore has no precondition: a change
 * made between the two is undone too, as the range is made equal to
 * revision; the answer counts what the restore did.)
 */
export async function restoreAt(app, r, revision) {
  const { store } = app;
  try {
    const dry = await store.restoreRange(r, revision, true);
    if (!dry.created && !dry.updated && !dry.deleted) {
      notify(`${capital(describe(r))} already holds what it held at revision ${revision}: nothing to restore.`);
      return 0;
    }
    const ok = await confirm({
      title: `Restore ${describe(r)} as of revision ${revision}?`,
      body: [
        `This makes ${describe(r)} hold exactly what it held at revision ${revision}, in one new revision. Restored keys have no lease.`,
        renderChanges(dry, true),
      ],
      action: "Restore",
    });
    if (!ok) return 0;
    const res = await store.restoreRange(r, revision, false);
    notify(`Restored ${describe(r)} as of revision ${revision} at revision ${res.header.revision}: ${changesText(res)}.`);
    return res.header.revision;
  } catch (e) {
    notify(explain(e), "error");
    return 0;
  }
}

function capital(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
