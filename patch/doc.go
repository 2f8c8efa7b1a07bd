// Package patch changes part of a key's JSON value: a JSON Merge Patch
// (RFC 7396) or a JSON Patch (RFC 6902) applied to the value as it is,
// and written back only if the key has not changed meanwhile.
//
// The patch algebra is github.com/evanphx/json-patch's (the library
// Kubernetes applies its patches with); this package bounds what a patch
// may cost (its operations, what its copies add, the size of the result),
// decides what a missing key means (a merge patch applies to null, a JSON
// Patch needs the key) and turns the library's failures into package
// kv's errors: a body that is no patch is ErrInvalidArgument, a patch
// that cannot apply to the value is ErrPatchFailed.
//
// Update is the read-modify-write around it: it reads the key, computes
// the new value, and writes it in a txn that compares the key's mod
// revision with the one read, keeping the key's lease; when the key
// changed in between it starts over, a bounded number of times. It knows
// nothing of HTTP.
package patch
