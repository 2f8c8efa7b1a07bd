// Line diffs, by Myers' O(ND) algorithm, for the CAS conflict and for
// comparing versions in history. The work is bounded whatever the texts:
// past MAX_EDITS differing lines, or when the lines left after the common
// head and tail number more than MAX_LINES, the diff gives up finding the
// shortest script and shows every such line as replaced (the script's
// gaveUp is then true); a table shows at most MAX_ROWS lines, each cut
// to MAX_LINE_CHARS.

import { h, num } from "./dom.js";

const MAX_EDITS = 2000;
const MAX_LINES = 20000;
const MAX_ROWS = 1000;
const MAX_LINE_CHARS = 2000;
const CONTEXT = 3;

/** diffLines returns the edit script from a to b: [{op: "=" | "-" | "+", text}]. */
export function diffLines(a, b) {
  const x = a === "" ? [] : a.split("\n");
  const y = b === "" ? [] : b.split("\n");
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const a1 = x.slice(pre, x.length - suf);
  const b1 = y.slice(pre, y.length - suf);
  const mid = a1.length + b1.length > MAX_LINES ? replaced(a1, b1) : myers(a1, b1);
  const script = [
    ...x.slice(0, pre).map((text) => ({ op: "=", text })),
    ...mid,
    ...x.slice(x.length - suf).map((text) => ({ op: "=", text })),
  ];
  script.gaveUp = mid.gaveUp === true;
  return script;
}

// replaced is the script that removes every line of a and adds every
// line of b: what is shown when the shortest one is too costly to find.
function replaced(a, b) {
  const out = [...a.map((text) => ({ op: "-", text })), ...b.map((text) => ({ op: "+", text }))];
  out.gaveUp = true;
  return out;
}

function myers(a, b) {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) {
    return [...a.map((text) => ({ op: "-", text })), ...b.map((text) => ({ op: "+", text }))];
  }
  const max = Math.min(n + m, MAX_EDITS);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= max; d++) {
    // Keep v as it was before step d, over the diagonals step d reads.
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let xx = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let yy = xx - k;
      while (xx < n && yy < m && a[xx] === b[yy]) {
        xx++;
        yy++;
      }
      v[off + k] = xx;
      if (xx >= n && yy >= m) return backtrack(a, b, trace);
    }
  }
  return replaced(a, b);
}

function backtrack(a, b, trace) {
  const out = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d];
    const at = (k) => v[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      out.push({ op: "=", text: a[x - 1] });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) out.push({ op: "+", text: b[y - 1] });
      else out.push({ op: "-", text: a[x - 1] });
    }
    x = prevX;
    y = prevY;
  }
  return out.reverse();
}

/**
 * renderDiff shows an edit script as a table of lines, unchanged runs cut
 * to CONTEXT lines around the changes. label names what is compared;
 * caption, when given, replaces the count of lines in the caption.
 */
export function renderDiff(script, label, caption) {
  const changed = script.filter((l) => l.op !== "=").length;
  const body = h("tbody");
  let oldNo = 0;
  let newNo = 0;
  const near = script.map(() => false);
  script.forEach((l, i) => {
    if (l.op === "=") return;
    for (let j = Math.max(0, i - CONTEXT); j <= Math.min(script.length - 1, i + CONTEXT); j++) near[j] = true;
  });
  let skipped = 0;
  let rows = 0;
  let unshown = 0;
  const flush = () => {
    if (skipped) body.append(h("tr", { class: "skip" }, h("td", { colspan: "4" }, `… ${num(skipped)} unchanged line${skipped > 1 ? "s" : ""}`)));
    skipped = 0;
  };
  script.forEach((l, i) => {
    if (l.op !== "+") oldNo++;
    if (l.op !== "-") newNo++;
    if (!near[i] && changed > 0) {
      skipped++;
      return;
    }
    if (rows >= MAX_ROWS) {
      unshown++;
      return;
    }
    flush();
    rows++;
    const cls = { "=": "same", "-": "del", "+": "ins" }[l.op];
    const sign = { "=": " ", "-": "−", "+": "+" }[l.op];
    const text = l.text.length > MAX_LINE_CHARS ? `${l.text.slice(0, MAX_LINE_CHARS)}… (${num(l.text.length - MAX_LINE_CHARS)} more characters)` : l.text;
    body.append(h("tr", { class: cls },
      h("td", { class: "ln" }, l.op === "+" ? "" : String(oldNo)),
      h("td", { class: "ln" }, l.op === "-" ? "" : String(newNo)),
      h("td", { class: "sign", "aria-label": { "=": "unchanged", "-": "removed", "+": "added" }[l.op] }, sign),
      h("td", { class: "code" }, text)));
  });
  if (unshown) {
    skipped = 0;
    body.append(h("tr", { class: "skip" }, h("td", { colspan: "4" }, `… ${num(unshown)} more lines not shown: the first ${num(MAX_ROWS)} are`)));
  } else flush();
  const counted = changed ? `${num(changed)} line${changed > 1 ? "s" : ""} differ${script.gaveUp ? " (too many to align: every line between the first and the last change is shown as replaced)" : ""}` : "no difference";
  return h("div", { class: "diff-wrap" },
    h("table", { class: "diff" },
      h("caption", {}, `${label}: ${caption || counted}`),
      h("thead", { class: "visually-hidden" }, h("tr", {}, h("th", {}, "old line"), h("th", {}, "new line"), h("th", {}, "change"), h("th", {}, "text"))),
      body));
}
