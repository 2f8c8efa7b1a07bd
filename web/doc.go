// Package web embeds httpkv's console: one page, served at /, that lists
// keys by prefix, reads, writes and deletes them, and shows a live watch
// of the prefix through the same HTTP API every client uses.
package web
