// The console talks to the same /v1 API as any client.
"use strict";
const $ = (id) => document.getElementById(id);
let source = null;

function token() { return $("token").value.trim(); }
function headers() { return token() ? { Authorization: "Bearer " + token() } : {}; }
function show(err) { $("error").textContent = err ? String(err) : ""; }
// Keys and values arrive as strings, or as *_base64 when not UTF-8.
function text(obj, field) {
  if (obj[field] !== undefined) return obj[field];
  if (obj[field + "_base64"] !== undefined) return "base64:" + obj[field + "_base64"];
  return "";
}
// keyId names a key unambiguously: the key "base64:/w==" and the byte
// 0xff both show as "base64:/w==".
function keyId(kv) {
  return kv.key !== undefined ? "s:" + kv.key : "b:" + kv.key_base64;
}
// keyURL is where a key is deleted: its path, or, for bytes that are not
// UTF-8, the range selector given in base64.
function keyURL(kv) {
  if (kv.key !== undefined) return "/v1/kv/" + encodeURIComponent(kv.key);
  return "/v1/kv?" + new URLSearchParams({ key_base64: kv.key_base64 });
}

async function api(method, path, body) {
  const res = await fetch(path, { method, headers: headers(), body });
  const data = res.headers.get("Content-Type")?.includes("json") ? await res.json() : null;
  if (!res.ok) throw new Error(data?.error ? `${data.error.code}: ${data.error.message}` : res.statusText);
  return data;
}

function row(kv) {
  const tr = document.createElement("tr");
  tr.dataset.key = text(kv, "key");
  tr.dataset.id = keyId(kv);
  for (const v of [text(kv, "key"), text(kv, "value"), kv.mod_revision, kv.version, kv.lease || ""]) {
    const td = document.createElement("td");
    td.textContent = v;
    tr.append(td);
  }
  const del = document.createElement("button");
  del.className = "del";
  del.textContent = "delete";
  del.onclick = () => api("DELETE", keyURL(kv)).catch(show);
  const td = document.createElement("td");
  td.append(del);
  tr.append(td);
  return tr;
}

async function list() {
  show();
  const prefix = $("prefix").value;
  const q = new URLSearchParams(prefix ? { key: prefix, prefix: "true" } : {});
  q.set("limit", "500");
  try {
    const data = await api("GET", "/v1/kv?" + q);
    $("keys").replaceChildren(...data.kvs.map(row));
    $("more").hidden = !data.more;
    $("more").textContent = `showing ${data.kvs.length} of ${data.count} keys`;
    $("status").textContent = "revision " + data.header.revision;
    watch(prefix, data.header.revision + 1);
  } catch (e) { show(e); }
}

function watch(prefix, from) {
  if (source) source.close();
  if (!$("live").checked) return;
  const q = new URLSearchParams(prefix ? { key: prefix, prefix: "true" } : {});
  q.set("start_revision", from);
  if (token()) q.set("access_token", token());
  source = new EventSource("/v1/watch?" + q);
  source.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    $("status").textContent = "revision " + msg.header.revision;
    for (const ev of msg.events) apply(ev, e.lastEventId);
  };
  source.addEventListener("compacted", () => { source.close(); list(); });
  source.addEventListener("canceled", (e) => { source.close(); show("watch ended: " + JSON.parse(e.data).reason); });
  source.onerror = () => { $("status").textContent = "reconnecting…"; };
}

function apply(ev, rev) {
  const key = text(ev.kv, "key");
  const li = document.createElement("li");
  li.className = ev.type;
  li.textContent = `${rev} ${ev.type} ${key}` + (ev.type === "put" ? ` = ${text(ev.kv, "value")}` : "");
  $("events").prepend(li);
  const old = [...$("keys").children].find((tr) => tr.dataset.id === keyId(ev.kv));
  if (ev.type === "delete") { old?.remove(); return; }
  const tr = row(ev.kv);
  tr.className = "changed";
  if (old) { old.replaceWith(tr); return; }
  const next = [...$("keys").children].find((r) => r.dataset.key > key);
  $("keys").insertBefore(tr, next || null);
}

$("list-form").onsubmit = (e) => { e.preventDefault(); list(); };
$("live").onchange = list;
$("put-form").onsubmit = async (e) => {
  e.preventDefault();
  show();
  try {
    await api("PUT", "/v1/kv/" + encodeURIComponent($("put-key").value), $("put-value").value);
  } catch (err) { show(err); }
};
list();
