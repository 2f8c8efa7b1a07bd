// What a value looks like: text, JSON, YAML or bytes that are not text,
// its renderings (pretty JSON, YAML, base64, hex), and checking an edited
// value against a syntax.
//
// Any value is written by whoever may write its key, so what it may cost
// the page is bounded here, and nothing here throws: a value that is too
// large, too deep, or that expands too far through YAML aliases is shown
// as its text with a note saying why (LIMITS). A YAML "billion laughs" of
// a few hundred bytes parses into a small graph that shares its nodes, but
// JSON.stringify or any walk that follows every alias expands it to
// gigabytes; measure() sizes the expanded form over the shared graph, each
// node once, before anything expands it.

import { dump, load } from "./vendor/js-yaml-5.5.0.mjs";
import { hexDump, text, toBase64 } from "./bytes.js";
import { bytesSize, num } from "./dom.js";

export const LIMITS = Object.freeze({
  jsonBytes: 2 << 20, // parsed as JSON up to this size (JSON.parse is fast)
  yamlBytes: 256 << 10, // parsed as YAML up to this size (a parser in script is not)
  aliases: 1000, // YAML aliases in one value (js-yaml's maxAliases)
  depth: 100, // nesting of a structured value (js-yaml's maxDepth)
  prettyChars: 2 << 20, // a pretty rendering, every alias expanded, at most this long
  viewChars: 2 << 20, // the text and base64 views show at most this much
});

const structured = (v) => v !== null && typeof v === "object";
const syntaxName = { json: "JSON", yaml: "YAML" };

/**
 * parse reads s in the syntax ("json" or "yaml") within LIMITS:
 * {ok: true, value} or {ok: false, message, limit}; limit is true when s
 * was not read because of its size, not because of its syntax.
 */
export function parse(syntax, s) {
  const max = syntax === "json" ? LIMITS.jsonBytes : LIMITS.yamlBytes;
  if (s.length > max) {
    return { ok: false, limit: true, message: `not checked as ${syntaxName[syntax]}: longer than ${bytesSize(max)}` };
  }
  try {
    const value = syntax === "json" ? JSON.parse(s) : load(s, { maxAliases: LIMITS.aliases, maxDepth: LIMITS.depth });
    return { ok: true, value };
  } catch (e) {
    const where = e && e.mark ? ` (line ${e.mark.line + 1}, column ${e.mark.column + 1})` : "";
    const first = String(e && e.message !== undefined ? e.message : e).split("\n")[0];
    return { ok: false, limit: false, message: `not valid ${syntaxName[syntax]}: ${first}${where}` };
  }
}

/**
 * measure returns how long JSON.stringify(value, null, 2) would be, and
 * how deep value nests, without building it: {chars, depth}. With shared
 * (a YAML value, whose aliases share nodes) each node is measured once
 * and counted at every place it appears, so the cost is the size of the
 * parsed graph, not of its expansion, and a cycle (an alias inside its
 * own anchor) measures Infinity; a JSON value is a tree and needs no
 * such bookkeeping. Past LIMITS.depth it stops, with depth Infinity.
 */
export function measure(value, shared = true) {
  const memo = shared ? new Map() : null; // object -> its measure; null while being measured
  const strings = new Map(); // long string -> its JSON length, for strings met again
  const quoted = (s) => {
    if (s.length < 64) return JSON.stringify(s).length;
    let n = strings.get(s);
    if (n === undefined) strings.set(s, (n = JSON.stringify(s).length));
    return n;
  };
  const cycle = { c: Infinity, l: 1, i: 0, d: 0 };
  const deep = { c: 0, l: 1, i: 0, d: Infinity };
  const scalar = { c: 0, l: 1, i: 0, d: 0 }; // reused: read before the next walk
  // A node's pretty form at depth 0 has c characters other than newlines
  // and indentation, l lines, i indentation levels summed over its
  // lines, and nests d deep.
  function walk(v, depth) {
    if (v !== null && typeof v === "object" && typeof v.toJSON === "function") v = v.toJSON();
    if (v === null || typeof v !== "object") {
      scalar.c = typeof v === "string" ? quoted(v) : v === undefined || typeof v === "function" ? 4 : String(JSON.stringify(v)).length;
      return scalar;
    }
    if (memo && memo.has(v)) return memo.get(v) || cycle;
    if (depth >= LIMITS.depth) return deep;
    if (memo) memo.set(v, null);
    const arr = Array.isArray(v);
    const keys = arr ? null : Object.keys(v);
    const n = arr ? v.length : keys.length;
    const m = { c: 2, l: n ? 2 : 1, i: 0, d: 1 };
    for (let k = 0; k < n && m.c !== Infinity && m.d !== Infinity; k++) {
      const child = walk(arr ? v[k] : v[keys[k]], depth + 1);
      m.c += child.c + (k ? 1 : 0) + (arr ? 0 : quoted(keys[k]) + 2);
      m.l += child.l;
      m.i += child.i + child.l;
      m.d = Math.max(m.d, child.d + 1);
    }
    if (memo) memo.set(v, m);
    return m;
  }
  const m = walk(value, 0);
  return { chars: m.c + (m.l - 1) + 2 * m.i, depth: m.d };
}

/** tooLarge says why a structured value gets no pretty rendering, or "" when it may. */
function tooLarge(value, syntax) {
  const m = measure(value, syntax === "yaml");
  if (m.chars === Infinity) return "it contains itself through an alias";
  if (m.depth > LIMITS.depth) return `nested deeper than ${LIMITS.depth} levels`;
  if (m.chars > LIMITS.prettyChars) {
    return syntax === "yaml"
      ? `its aliases expand it to ${bytesSize(m.chars)} as JSON, more than ${bytesSize(LIMITS.prettyChars)}`
      : `pretty-printed it is ${bytesSize(m.chars)}, more than ${bytesSize(LIMITS.prettyChars)}`;
  }
  return "";
}

/**
 * analyze reads a value once for everything the key pane shows:
 * {text (null when not UTF-8), kind ("binary" | "json" | "yaml" |
 * "text"), syntax (the syntax it parsed in, or null), value (the parsed
 * value, only when it may be rendered pretty), errors ({json, yaml}: why
 * it has no such rendering, "" when it has), note (why it is shown as
 * text only although it may be structured: "" when nothing to say)}.
 */
export function analyze(bytes) {
  const s = text(bytes);
  const out = { text: s, kind: s === null ? "binary" : "text", syntax: null, value: undefined, errors: { json: "", yaml: "" }, note: "" };
  const set = (why) => {
    out.errors = { json: why, yaml: why };
  };
  if (s === null) {
    set("not UTF-8 text");
    return out;
  }
  if (s.trim() === "") {
    set("empty");
    return out;
  }
  const scalar = "a plain scalar, not a document with structure";
  const j = parse("json", s);
  let parsed = j.ok && structured(j.value) ? { syntax: "json", value: j.value } : null;
  if (!parsed) {
    const y = parse("yaml", s);
    if (y.ok && structured(y.value)) {
      parsed = { syntax: "yaml", value: y.value };
    } else {
      out.errors = { json: j.ok ? scalar : j.message, yaml: y.ok ? scalar : y.message };
      if (y.limit) out.note = `Shown as text only: ${j.limit ? j.message : y.message}.`;
      return out;
    }
  }
  // Detected YAML must look like it: a word alone parses as a string.
  out.kind = parsed.syntax === "json" || /[:\n-]/.test(s) ? parsed.syntax : "text";
  out.syntax = parsed.syntax;
  const why = tooLarge(parsed.value, parsed.syntax);
  if (why) {
    set(why);
    out.note = `Shown as text only: ${why}.`;
  } else {
    out.value = parsed.value;
  }
  return out;
}

/** detect says what the value most likely is: "binary", "json", "yaml" or "text". */
export function detect(bytes) {
  return analyze(bytes).kind;
}

/** check parses s as the syntax: {ok, message} and the value when ok. */
export function check(syntax, s) {
  if (syntax !== "json" && syntax !== "yaml") return { ok: true, message: "" };
  const r = parse(syntax, s);
  if (!r.ok) return { ok: r.limit, message: r.message };
  return { ok: true, message: `valid ${syntaxName[syntax]}`, value: r.value };
}

/**
 * format reformats s in its syntax within LIMITS: {ok: true, text} or
 * {ok: false, message}.
 */
export function format(syntax, s) {
  if (syntax !== "json" && syntax !== "yaml") return { ok: true, text: s };
  const r = parse(syntax, s);
  if (!r.ok) return { ok: false, message: r.message };
  const why = tooLarge(r.value, syntax);
  if (why) return { ok: false, message: `not pretty-printed: ${why}` };
  return safely(() => syntax === "json" ? JSON.stringify(r.value, null, 2) : dump(r.value, { lineWidth: 100 }));
}

// safely runs a renderer that should not throw, and says so if it does.
function safely(fn) {
  try {
    return { ok: true, text: fn() };
  } catch (e) {
    return { ok: false, message: `cannot be shown: ${String(e && e.message !== undefined ? e.message : e).split("\n")[0]}` };
  }
}

/**
 * cut returns s cut to LIMITS.viewChars: {text, note}; note says what was
 * left out, or is "".
 */
export function cut(s, what = "characters") {
  if (s.length <= LIMITS.viewChars) return { text: s, note: "" };
  return { text: s.slice(0, LIMITS.viewChars), note: `The first ${num(LIMITS.viewChars)} of ${num(s.length)} ${what} are shown.` };
}

/**
 * renderings returns the ways to show a value, for the view tabs:
 * [{id, label, error, show()}]; error says why the value has no such
 * form (""), and show() returns {content, note}: content is the text to
 * show, or null where there is none, with note saying why, or what part
 * is shown. Each form is built when first shown, once.
 */
export function renderings(bytes, info = analyze(bytes)) {
  const s = info.text;
  const once = (fn) => {
    let r = null;
    return () => r || (r = fn());
  };
  const asTextView = () => (s === null ? { content: null, note: "not UTF-8 text: see base64 or hex" } : { content: cut(s).text, note: [info.note, cut(s).note].filter(Boolean).join(" ") });
  const pretty = (syntax) => () => {
    if (info.value === undefined) {
      // Too large or too deep for a pretty view: the text, with why.
      return info.note ? asTextView() : { content: null, note: info.errors[syntax] };
    }
    const r = safely(() => syntax === "json" ? JSON.stringify(info.value, null, 2) : dump(info.value, { lineWidth: 100 }));
    return r.ok ? { content: r.text, note: "" } : { content: null, note: r.message };
  };
  const base64 = () => {
    // Only the bytes shown are encoded.
    const n = Math.floor(LIMITS.viewChars / 4) * 3;
    const shown = toBase64(bytes.length > n ? bytes.subarray(0, n) : bytes);
    return { content: shown, note: bytes.length > n ? `The first ${num(n)} of ${num(bytes.length)} bytes are shown.` : "" };
  };
  return [
    { id: "text", label: "Text", error: s === null ? "not UTF-8 text: see base64 or hex" : "", show: once(asTextView) },
    { id: "json", label: "JSON", error: info.errors.json, show: once(pretty("json")) },
    { id: "yaml", label: "YAML", error: info.errors.yaml, show: once(pretty("yaml")) },
    { id: "base64", label: "Base64", error: "", show: once(base64) },
    { id: "hex", label: "Hex", error: "", show: once(() => ({ content: hexDump(bytes), note: "" })) },
  ];
}
