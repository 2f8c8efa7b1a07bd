// Keys and values are byte strings. The console keeps them as Uint8Array
// from the wire to the screen, so that a key that is not UTF-8 is never
// mangled into text and back.

const encoder = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

export const EMPTY = new Uint8Array(0);

/** utf8 returns the UTF-8 bytes of a string. */
export function utf8(s) {
  return encoder.encode(s);
}

/** text returns the bytes as a string, or null when they are not UTF-8. */
export function text(b) {
  try {
    return strict.decode(b);
  } catch {
    return null;
  }
}

/** asText makes a value readable line by line: its text, or a hex dump of its first 64 KiB. */
export function asText(b) {
  const s = text(b);
  return s === null ? hexDump(b) : s;
}

/**
 * preview returns at most n characters of a value, reading only its
 * first bytes: its text, or a hex dump of its first bytes when they are
 * not UTF-8. oneLine (for a table cell) makes runs of white space one
 * space and takes one line of the hex dump. A value of any size costs
 * the same.
 */
export function preview(b, n = 80, oneLine = true) {
  const head = b.subarray(0, 4 * n);
  let s;
  try {
    // stream: a character cut at the end of head is not an error.
    s = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: head.length < b.length });
    if (oneLine) s = s.replace(/\s+/g, " ");
  } catch {
    s = hexDump(head, oneLine ? 16 : n >> 2);
    if (oneLine) s = s.split("\n")[0];
  }
  return s.length > n || head.length < b.length ? s.slice(0, n) + "…" : s;
}

/** fromWire reads field of a wire object: the UTF-8 field or its *_base64 twin. */
export function fromWire(obj, field) {
  if (!obj) return EMPTY;
  if (typeof obj[field] === "string") return utf8(obj[field]);
  if (typeof obj[field + "_base64"] === "string") return fromBase64(obj[field + "_base64"]);
  return EMPTY;
}

/** toBase64 encodes bytes in standard base64. */
export function toBase64(b) {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** fromBase64 decodes standard base64; it throws on anything else. */
export function fromBase64(s) {
  const bin = atob(s.replace(/\s+/g, ""));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** hex renders bytes as a hex dump: offset, 16 bytes, and their ASCII. */
export function hexDump(b, max = 64 * 1024) {
  const lines = [];
  const n = Math.min(b.length, max);
  for (let off = 0; off < n; off += 16) {
    const row = b.subarray(off, Math.min(off + 16, n));
    const hexes = Array.from(row, (x) => x.toString(16).padStart(2, "0"));
    const ascii = Array.from(row, (x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : ".")).join("");
    lines.push(off.toString(16).padStart(8, "0") + "  " + hexes.join(" ").padEnd(47) + "  " + ascii);
  }
  if (b.length > n) lines.push(`… ${b.length - n} more bytes`);
  return lines.join("\n");
}

/** display renders a key for people: text as is, with control bytes and bytes that are not UTF-8 escaped as \xNN. */
export function display(b) {
  const s = text(b);
  if (s !== null) {
    return s.replace(/[\u0000-\u001f\u007f]/g, (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
  }
  let out = "";
  for (const x of b) {
    out += x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : "\\x" + x.toString(16).padStart(2, "0");
  }
  return out;
}

/** id returns a string that identifies the bytes, for Map keys and data attributes. */
export function id(b) {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  }
  return s;
}

/** fromId inverts id. */
export function fromId(s) {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** compare orders byte strings as the store does. */
export function compare(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

export function equal(a, b) {
  return a.length === b.length && compare(a, b) === 0;
}

export function startsWith(b, prefix) {
  if (prefix.length > b.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (b[i] !== prefix[i]) return false;
  }
  return true;
}

/** indexOf finds needle in hay at or after from; -1 if absent. */
export function indexOf(hay, needle, from = 0) {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/**
 * prefixEnd returns the smallest key greater than every key with the
 * prefix p, as etcd's clientv3.GetPrefixRangeEnd: the prefix with its last
 * byte below 0xff incremented and the rest cut. For a prefix of only 0xff
 * bytes there is none, and it returns null (every key from p on).
 */
export function prefixEnd(p) {
  for (let i = p.length - 1; i >= 0; i--) {
    if (p[i] < 0xff) {
      const end = p.slice(0, i + 1);
      end[i]++;
      return end;
    }
  }
  return null;
}

/** pathOf returns the /v1/kv/ path of a key, every byte but the unreserved ones percent-encoded. */
export function pathOf(key) {
  return "/v1/kv/" + segment(key);
}

/**
 * segment percent-encodes bytes as one path segment: every byte but the
 * unreserved ones, a slash too (as %2F), so that the name of a lock or an
 * election stays one segment.
 */
export function segment(b) {
  let s = "";
  for (const x of b) {
    const c = String.fromCharCode(x);
    s += /[A-Za-z0-9\-._~]/.test(c) ? c : "%" + x.toString(16).toUpperCase().padStart(2, "0");
  }
  return s;
}
