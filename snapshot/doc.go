// Package snapshot is httpkv's backup file: what GET /v1/snapshot sends
// and `httpkv snapshot save` keeps.
//
// A snapshot file is a backend's bbolt file, a consistent copy of the
// whole store at one revision (history down to the compact revision,
// leases, users, roles and the auth switch), followed by the SHA-256 of
// those bytes as its last HashSize bytes, as etcd's snapshot files are. A
// file therefore verifies on its own: a download cut short or damaged on
// the way fails its hash, whoever kept it and however long.
//
// The hash proves nothing of what is inside: anyone can recompute it. So
// Write produces the format from a backend's Source; Checker verifies it
// as it streams past, and Verify a file; Examine then checks the store
// inside (its pages, then every record, loaded as a server loads them)
// and reports what it holds; Restore writes a checked one into an empty
// data directory, where a server starts at the snapshot's revision.
package snapshot
