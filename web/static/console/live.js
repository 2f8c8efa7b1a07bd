// Live updates: one stream of many watchers (/v1/watch/streams) for
// everything the page shows. Views subscribe to a range from a revision;
// each subscription is one watcher of the page's stream, added and
// canceled as views come and go, and gets the events of its range, from
// its revision on, once each.
//
// Only this module knows how the stream is made: the views see
// subscribe() and the state.
//
// Resuming: the browser reconnects by itself after a dropped connection
// and sends Last-Event-ID, the stream's cursor, so every watcher resumes
// exactly. When it gives up (the server restarted and forgot the stream,
// or the token in the URL expired) the feed makes a new stream, each
// watcher starting right after the last revision its subscription
// received, with the current token.

import { fromWire } from "./bytes.js";

const MAX_BACKOFF = 30000;

export class Live {
  /**
   * streams makes and changes streams: create(ranges with revisions) to
   * {stream, watches}, add(stream, range, revision) to {watch_id},
   * cancel(stream, id), drop(stream); each rejects with an ApiError.
   * url(stream) gives the stream's URL with the current token.
   */
  constructor({ streams, url }) {
    this.streams = streams;
    this.url = url;
    this.subs = new Set();
    this.byWatch = new Map(); // watch_id -> subscription, on this.stream
    this.stream = null; // the stream's id, once made
    this.making = null; // the promise of the stream being made
    this.adding = 0; // watches being added: their messages may come first
    this.early = []; // those messages
    this.es = null;
    this.planned = false;
    this.backoff = 1000;
    this.retryTimer = 0;
    this.state = { name: "idle", revision: 0, detail: "" };
    this.listeners = new Set();
  }

  /**
   * subscribe follows the range from revision from on: events(list, rev)
   * gets each revision's events in the range, in order, once; reset(why)
   * says the subscription has ended ("compacted": history is gone, list
   * again and subscribe anew). It returns {close()}.
   */
  subscribe(range, from, handlers) {
    const sub = { range, next: from, handlers, watchId: 0 };
    this.subs.add(sub);
    this.plan();
    return { close: () => this.unsubscribe(sub) };
  }

  unsubscribe(sub) {
    if (!this.subs.delete(sub)) return;
    if (sub.watchId && this.byWatch.get(sub.watchId) === sub) {
      this.byWatch.delete(sub.watchId);
      this.streams.cancel(this.stream, sub.watchId).catch(() => {});
    }
    this.plan();
  }

  onState(fn) {
    this.listeners.add(fn);
    fn(this.state);
    return () => this.listeners.delete(fn);
  }

  setState(name, detail = "") {
    this.state = { name, revision: this.state.revision, detail };
    for (const fn of this.listeners) fn(this.state);
  }

  /** restart reopens a stopped feed, from where each subscription was. */
  restart() {
    this.stop();
    this.plan();
  }

  // Subscriptions change in bursts (a view closes one and opens another):
  // the stream follows once the burst is over.
  plan() {
    if (this.planned) return;
    this.planned = true;
    queueMicrotask(() => {
      this.planned = false;
      this.apply();
    });
  }

  apply() {
    if (this.subs.size === 0) {
      this.stop();
      this.setState("idle");
      return;
    }
    if (this.making || this.retryTimer) return; // applied once that is done
    if (!this.es) {
      this.open("connecting");
      return;
    }
    for (const sub of this.subs) if (!sub.watchId) this.add(sub);
  }

  // stop closes the stream and forgets it; the subscriptions stay.
  stop() {
    clearTimeout(this.retryTimer);
    this.retryTimer = 0;
    if (this.es) this.es.close();
    this.es = null;
    if (this.stream) this.streams.drop(this.stream).catch(() => {});
    this.stream = null;
    this.byWatch.clear();
    this.early = [];
    for (const sub of this.subs) sub.watchId = 0;
  }

  // open makes a new stream with a watcher for every subscription, from
  // its next revision, and reads it; state says why: "connecting" or
  // "reconnecting".
  open(state) {
    this.stop();
    this.setState(state);
    const subs = [...this.subs];
    const making = this.streams.create(subs.map((s) => ({ range: s.range, from: s.next })));
    this.making = making;
    making.then((made) => {
      if (this.making !== making) return;
      this.making = null;
      this.stream = made.stream;
      made.watches.forEach((w, i) => {
        if (!this.subs.has(subs[i])) {
          this.streams.cancel(made.stream, w.watch_id).catch(() => {});
          return;
        }
        subs[i].watchId = w.watch_id;
        this.byWatch.set(w.watch_id, subs[i]);
      });
      this.read(made.stream);
      this.apply();
    }, (e) => {
      if (this.making !== making) return;
      this.making = null;
      this.refused(e);
    });
  }

  // add makes a watcher of the stream for sub.
  add(sub) {
    const stream = this.stream;
    sub.watchId = -1; // being added
    this.adding++;
    this.streams.add(stream, sub.range, sub.next).then((w) => {
      this.adding--;
      if (this.stream !== stream) return;
      if (!this.subs.has(sub)) {
        this.streams.cancel(stream, w.watch_id).catch(() => {});
      } else {
        sub.watchId = w.watch_id;
        this.byWatch.set(w.watch_id, sub);
      }
      const early = this.early;
      this.early = [];
      for (const [kind, m] of early) this.handle(kind, m);
    }, (e) => {
      this.adding--;
      if (this.stream !== stream) return;
      sub.watchId = 0;
      if (e.status === 404) this.retry(); // the stream is gone: make another
      else this.refused(e);
    });
  }

  read(stream) {
    const es = new EventSource(this.url(stream));
    this.es = es;
    const on = (kind) => es.addEventListener(kind, (e) => {
      if (this.es === es) this.handle(kind, JSON.parse(e.data));
    });
    for (const kind of ["created", "message", "progress", "compacted", "canceled"]) on(kind);
    es.addEventListener("error", () => {
      if (this.es !== es) return;
      if (es.readyState === EventSource.CLOSED) this.retry();
      else this.setState("reconnecting");
    });
  }

  // handle takes one message of the stream.
  handle(kind, m) {
    const sub = this.byWatch.get(m.watch_id);
    if (!sub) {
      if (this.adding > 0) this.early.push([kind, m]); // its watch_id is on its way
      return;
    }
    const rev = m.header ? m.header.revision : 0;
    switch (kind) {
      case "created":
        this.backoff = 1000;
        this.state.revision = Math.max(this.state.revision, rev);
        this.setState("live");
        return;
      case "message":
        this.dispatch(sub, rev, m);
        return;
      case "progress":
        sub.next = Math.max(sub.next, rev + 1);
        return;
      case "compacted":
        // The history this subscription needs is gone: it ends, and its
        // view lists again at a new revision and subscribes from there.
        this.byWatch.delete(m.watch_id);
        this.subs.delete(sub);
        this.setState("reloading", "history was compacted");
        sub.handlers.reset("compacted");
        if (this.subs.size === 0) this.setState("idle");
        return;
      case "canceled":
        this.canceled(sub, m.reason || "canceled");
    }
  }

  dispatch(sub, rev, m) {
    this.state.revision = Math.max(this.state.revision, rev);
    if (rev >= sub.next) {
      sub.next = rev + 1;
      const events = (m.events || []).map((ev) => ({ ...ev, key: fromWire(ev.kv, "key") }));
      sub.handlers.events(events, rev);
    }
    this.setState("live");
  }

  canceled(sub, reason) {
    this.byWatch.delete(sub.watchId);
    sub.watchId = 0;
    if (/permission denied/i.test(reason)) {
      this.stop();
      this.setState("stopped", reason);
    } else if (/shutting down/i.test(reason)) {
      // The server comes back, without the stream: the browser's
      // reconnect fails, and the feed makes another.
      this.setState("reconnecting", "the server restarts");
    } else {
      // The stream ended with its owner's credentials (user deleted, auth
      // turned on or off) or its cursor: go on with the session's token,
      // or find out why not.
      this.retry();
    }
  }

  // refused: making or changing the stream failed. A 401 has the session
  // get a new token (or sign out, which ends every subscription), so try
  // again; a 403 is for good; anything else is tried again.
  refused(e) {
    if (e.status === 403) {
      this.stop();
      this.setState("stopped", e.explain());
      return;
    }
    this.retry();
  }

  // retry makes a new stream after a while, from where each subscription
  // was.
  retry() {
    if (this.retryTimer) return;
    if (this.es) this.es.close();
    this.es = null;
    this.setState("reconnecting");
    this.retryTimer = setTimeout(() => {
      this.retryTimer = 0;
      if (this.subs.size > 0) this.open("reconnecting");
    }, this.backoff);
    this.backoff = Math.min(MAX_BACKOFF, this.backoff * 2);
  }
}
