// What a value looks like: text, JSON, YAML or bytes that are not text,
// its renderings (pretty JSON, YAML, base64, hex), and checking an edited
// value against a syntax.

import { dump, load } from "./vendor/js-yaml-5.5.0.mjs";
import { hexDump, text, toBase64 } from "./bytes.js";

const structured = (v) => v !== null && typeof v === "object";

/** detect says what the value most likely is: "binary", "json", "yaml" or "text". */
export function detect(bytes) {
  const s = text(bytes);
  if (s === null) return "binary";
  if (s.trim() === "") return "text";
  try {
    if (structured(JSON.parse(s))) return "json";
  } catch {
    // not JSON
  }
  try {
    if (structured(load(s)) && /[:\n-]/.test(s)) return "yaml";
  } catch {
    // not YAML either
  }
  return "text";
}

/** check parses s as the syntax: {ok, message} and the value when ok. */
export function check(syntax, s) {
  try {
    if (syntax === "json") return { ok: true, message: "valid JSON", value: JSON.parse(s) };
    if (syntax === "yaml") return { ok: true, message: "valid YAML", value: load(s) };
    return { ok: true, message: "" };
  } catch (e) {
    const where = e.mark ? ` (line ${e.mark.line + 1}, column ${e.mark.column + 1})` : "";
    const first = String(e.message).split("\n")[0];
    return { ok: false, message: `not valid ${syntax === "json" ? "JSON" : "YAML"}: ${first}${where}` };
  }
}

/** pretty reformats s in its syntax; it throws if s does not parse. */
export function pretty(syntax, s) {
  if (syntax === "json") return JSON.stringify(JSON.parse(s), null, 2);
  if (syntax === "yaml") return dump(load(s), { lineWidth: 100 });
  return s;
}

/**
 * renderings returns the ways to show a value, for the view tabs:
 * [{id, label, content, error}]; content is null where the value has no
 * such form, with error saying why.
 */
export function renderings(bytes) {
  const s = text(bytes);
  const out = [];
  out.push({ id: "text", label: "Text", content: s, error: s === null ? "not UTF-8 text: see base64 or hex" : "" });
  let parsed;
  let jsonError = "";
  let yamlError = "";
  if (s !== null) {
    const j = check("json", s);
    if (j.ok) parsed = j.value;
    else jsonError = j.message;
    if (!j.ok) {
      const y = check("yaml", s);
      if (y.ok && structured(y.value)) parsed = y.value;
      else yamlError = y.ok ? "a plain scalar, not a YAML document with structure" : y.message;
    }
  }
  const ok = parsed !== undefined;
  out.push({ id: "json", label: "JSON", content: ok ? JSON.stringify(parsed, null, 2) : null, error: ok ? "" : jsonError || "not UTF-8 text" });
  out.push({ id: "yaml", label: "YAML", content: ok ? dump(parsed, { lineWidth: 100 }) : null, error: ok ? "" : yamlError || jsonError || "not UTF-8 text" });
  out.push({ id: "base64", label: "Base64", content: toBase64(bytes), error: "" });
  out.push({ id: "hex", label: "Hex", content: hexDump(bytes), error: "" });
  return out;
}
