// Package web embeds httpkv's console: a page served at / whose ES
// modules browse the key space a level at a time, edit values with
// compare-and-swap, read and restore history, follow changes live over
// one Server-Sent Events stream, and administer leases, the cluster and
// users, all through the same HTTP API every client uses. There is no
// build step: the files under static/ are what the browser runs.
package web
