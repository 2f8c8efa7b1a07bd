// What the signed-in user may change. Only root may read users and roles,
// so a user cannot read its own permissions; instead the console asks the
// server, without changing anything: a txn with no compares runs its
// (empty) success branch, but the server checks the permissions of both
// branches first, so a failure branch that deletes the range answers 403
// exactly when the user may not write it, and writes nothing otherwise
// (a txn without writes makes no revision).

import { id } from "./bytes.js";
import { selector } from "./store.js";

export class Permissions {
  constructor(session, store) {
    this.session = session;
    this.store = store;
    this.cache = new Map();
    session.onChange(() => this.cache.clear());
  }

  /** unlimited reports whether the user may do anything: auth off, or root. */
  unlimited() {
    return !this.session.enabled || this.session.root;
  }

  /** canWrite resolves to whether the user may write every key of the range. */
  canWrite(r) {
    if (this.unlimited()) return Promise.resolve(true);
    const k = id(r.key) + "\u0001" + (r.end === null ? "" : id(r.end));
    let p = this.cache.get(k);
    if (!p) {
      p = this.store
        .txn({ compare: [], success: [], failure: [{ delete: selector(r) }] })
        .then(() => true, (e) => (e.status === 403 ? false : true));
      this.cache.set(k, p);
    }
    return p;
  }
}
