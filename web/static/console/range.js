// Key ranges as etcd has them: [key, end), with end null for the single
// key and the one byte 0 for every key from key on. The empty key with
// end [0] is the whole key space.

import { EMPTY, compare, equal, prefixEnd, text, toBase64 } from "./bytes.js";

export const TO_END = new Uint8Array([0]);

function isToEnd(end) {
  return end !== null && equal(end, TO_END);
}

/** single is the range of one key. */
export function single(key) {
  return { key, end: null };
}

/** prefix is every key starting with p; the empty prefix is every key. */
export function prefix(p) {
  return { key: p, end: prefixEnd(p) || TO_END };
}

/** between is [key, end). */
export function between(key, end) {
  return { key, end: end && end.length ? end : TO_END };
}

/** contains reports whether the range holds the key. */
export function contains(r, k) {
  if (r.end === null) return equal(r.key, k);
  if (compare(k, r.key) < 0) return false;
  return isToEnd(r.end) || compare(k, r.end) < 0;
}

/** param sets name (or its _base64 twin for bytes that are not UTF-8) on q. */
export function param(q, name, bytes) {
  const s = text(bytes);
  if (s !== null) q.set(name, s);
  else q.set(name + "_base64", toBase64(bytes));
}

/** rangeQuery adds the selectors of the range to q, as GET /v1/kv, /v1/watch and /v1/history read them. */
export function rangeQuery(r, q = new URLSearchParams()) {
  if (r.end === null) {
    param(q, "key", r.key);
  } else if (isToEnd(r.end)) {
    if (r.key.length > 0 && !equal(r.key, TO_END)) {
      param(q, "key", r.key);
      q.set("from_key", "true");
    }
  } else {
    param(q, "key", r.key.length ? r.key : TO_END);
    param(q, "range_end", r.end);
  }
  return q;
}

/** isPrefix reports whether the range is exactly the prefix of its key. */
export function isPrefix(r) {
  if (r.end === null) return false;
  const end = prefixEnd(r.key);
  return end ? equal(end, r.end) : isToEnd(r.end);
}

export { EMPTY };
