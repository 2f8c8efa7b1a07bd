// Key ranges as etcd has them: [key, end), with end null for the single
// key and the one byte 0 for every key from key on. The empty key with
// end [0] is the whole key space.

import { EMPTY, compare, equal, prefixEnd, successor, text, toBase64 } from "./bytes.js";

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

/** cover returns the smallest range holding every range given. */
export function cover(ranges) {
  let lo = null;
  let hi = null; // null: no upper bound seen yet
  let open = false;
  for (const r of ranges) {
    if (lo === null || compare(r.key, lo) < 0) lo = r.key;
    if (r.end !== null && isToEnd(r.end)) open = true;
    const end = r.end === null ? successor(r.key) : r.end;
    if (hi === null || compare(end, hi) > 0) hi = end;
  }
  if (lo === null) return null;
  if (open) return { key: lo, end: TO_END };
  if (ranges.length === 1 && ranges[0].end === null) return ranges[0];
  return { key: lo, end: hi };
}

/** sameRange reports whether two ranges select the same keys, as written. */
export function sameRange(a, b) {
  if (!a || !b) return a === b;
  if (!equal(a.key, b.key)) return false;
  if (a.end === null || b.end === null) return a.end === b.end;
  return equal(a.end, b.end);
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
