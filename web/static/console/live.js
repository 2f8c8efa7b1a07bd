// Live updates: one Server-Sent Events stream for everything the page
// shows. Views subscribe to a range from a revision; the feed keeps one
// EventSource open on the smallest range covering every subscription and
// hands each subscriber the events of its range, from its revision on.
//
// Only this module knows how the stream is made. Today it is one
// GET /v1/watch over the cover; with /v1/watch/streams each subscription
// becomes a watcher of one stream and open() and dispatch() change, not
// the views.
//
// Resuming: the browser reconnects by itself after a dropped connection
// (a server restart) and sends Last-Event-ID, the last revision it saw,
// so nothing is lost. When it gives up (the request was refused, say an
// expired token in the URL) the feed opens a new EventSource from the
// revision after the last one delivered, with the current token.

import { fromWire } from "./bytes.js";
import { contains, cover, sameRange } from "./range.js";

const MAX_BACKOFF = 30000;

export class Live {
  /**
   * url(range, startRevision) gives the stream's URL with the current
   * token; probe(range) makes a plain call over the range and rejects
   * with its ApiError, to learn why a stream was refused.
   */
  constructor({ url, probe }) {
    this.url = url;
    this.probe = probe;
    this.subs = new Set();
    this.es = null;
    this.range = null;
    this.lastId = 0; // the last revision the stream delivered
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
    const sub = { range, next: from, handlers };
    this.subs.add(sub);
    this.plan();
    return {
      close: () => {
        if (this.subs.delete(sub)) this.plan();
      },
    };
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

  /** restart reopens a stopped feed, from where it was. */
  restart() {
    this.stop();
    this.plan();
  }

  // Subscriptions change in bursts (a view closes one and opens another):
  // the stream is re-planned once the burst is over.
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
    const want = cover([...this.subs].map((s) => s.range));
    const start = Math.min(...[...this.subs].map((s) => s.next));
    // An open stream that covers every range and has not gone past any
    // subscriber's start serves them all.
    if (this.es && sameRange(want, this.range) && start > this.lastId) return;
    this.open(want, start, "connecting");
  }

  stop() {
    clearTimeout(this.retryTimer);
    if (this.es) this.es.close();
    this.es = null;
  }

  // open starts a stream over range from revision start; state says why:
  // "connecting" to follow other ranges, "reconnecting" after a failure.
  open(range, start, state) {
    this.stop();
    this.range = range;
    this.lastId = start - 1;
    const es = new EventSource(this.url(range, start));
    this.es = es;
    this.setState(state);
    const mine = (fn) => (e) => {
      if (this.es === es) fn(e);
    };
    es.addEventListener("created", mine((e) => {
      const h = safeParse(e.data).header;
      this.backoff = 1000;
      if (h) this.state.revision = Math.max(this.state.revision, h.revision);
      this.setState("live");
    }));
    es.addEventListener("message", mine((e) => this.dispatch(Number(e.lastEventId), JSON.parse(e.data))));
    es.addEventListener("progress", mine((e) => this.advance(Number(e.lastEventId))));
    es.addEventListener("compacted", mine(() => this.compacted()));
    es.addEventListener("canceled", mine((e) => {
      const reason = safeParse(e.data).reason || "canceled";
      if (/shutting down/i.test(reason)) {
        // The server comes back; the browser reconnects by itself.
        this.setState("reconnecting", "the server restarts");
      } else if (/permission denied/i.test(reason)) {
        this.stop();
        this.setState("stopped", reason);
      } else {
        // The stream ended with its token (expired, revoked, auth turned
        // on or off): go on from where it was with the session's token,
        // or find out why not.
        this.retry();
      }
    }));
    es.addEventListener("error", mine(() => {
      if (es.readyState === EventSource.CLOSED) this.retry();
      else this.setState("reconnecting");
    }));
  }

  dispatch(rev, msg) {
    this.lastId = rev;
    this.state.revision = msg.header ? msg.header.revision : rev;
    const events = (msg.events || []).map((ev) => ({ ...ev, key: fromWire(ev.kv, "key") }));
    for (const s of [...this.subs]) {
      if (rev < s.next) continue;
      s.next = rev + 1;
      const mine = events.filter((ev) => contains(s.range, ev.key));
      if (mine.length) s.handlers.events(mine, rev);
    }
    this.setState("live");
  }

  advance(rev) {
    this.lastId = Math.max(this.lastId, rev);
    this.state.revision = Math.max(this.state.revision, rev);
    for (const s of this.subs) s.next = Math.max(s.next, rev + 1);
    this.setState("live");
  }

  // The history a subscriber needs is gone: every subscription ends, and
  // the views list again at a new revision and subscribe from there.
  compacted() {
    const subs = [...this.subs];
    this.subs.clear();
    this.stop();
    this.setState("reloading", "history was compacted");
    for (const s of subs) s.handlers.reset("compacted");
    if (this.subs.size === 0) this.setState("idle");
  }

  // The browser gave up on the stream: find out why, then open a new one
  // from where the last one stopped, or stop for good if refused.
  retry() {
    if (this.es) this.es.close();
    const range = this.range;
    this.setState("reconnecting");
    this.retryTimer = setTimeout(async () => {
      try {
        await this.probe(range);
      } catch (e) {
        // Refused for good; a 401 instead has the session get a new
        // token (or sign out, which ends every subscription), so try again.
        if (e.status === 403) {
          this.stop();
          this.setState("stopped", e.explain());
          return;
        }
        if (e.status === 401) {
          this.retry();
          return;
        }
      }
      if (this.subs.size === 0) return;
      const start = Math.min(this.lastId + 1, ...[...this.subs].map((s) => s.next));
      this.open(cover([...this.subs].map((s) => s.range)), start, "reconnecting");
    }, this.backoff);
    this.backoff = Math.min(MAX_BACKOFF, this.backoff * 2);
  }
}

function safeParse(s) {
  try {
    return JSON.parse(s);
  } catch {
    return {};
  }
}
