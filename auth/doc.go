// Package auth holds httpkv's users, roles, permissions and tokens.
//
// The model is etcd's: a user has a bcrypt-hashed password and roles; a
// role has permissions, each a key range ([key, range_end), a single key,
// or every key from key on when range_end is "\x00") with read, write or
// readwrite access. The root role may do everything, including the
// administrative operations; auth can be enabled only when a root user
// holds it.
//
// The policy is decided here, on key ranges (policy.go): the API collects
// what a request can touch as a Need (the keyrange.Ranges it reads and
// writes, and whether it is administrative) and asks Authorize; a stream
// asks Recheck whenever Changed fires. A request is allowed only when the
// union of its user's permissions covers every key it can touch: coverage
// of the whole requested range, not overlap. A watch from a key with range
// end "\x00" therefore needs a permission reaching to the end of the key
// space, not one on the key.
//
// Users, roles and the enabled flag live in bbolt buckets of their own,
// written in the store's write transaction (Bucket) so each change is
// atomic and durable; memory follows only once the write is (Bucket.Stage,
// the store's one rule for memory that mirrors the file). Key ranges are
// keyrange's. Tokens are random, held in memory only: they do not survive a
// restart, and a restart asks every client to authenticate again. A token
// stops working when it expires, when its user is deleted or changes
// password, and when auth is disabled (enabling again starts afresh).
// Passwords are checked (bcrypt) only when a token is requested, never per
// request, and failed attempts are rate-limited per user and per client
// address.
package auth
