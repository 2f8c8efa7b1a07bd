package concurrency

import (
	"bytes"
	"context"
	"strconv"
	"time"
)

// cleanupTimeout bounds the write that removes a waiter's key after its
// request ended: that write runs on a context of its own, since the
// request's is done by then.
const cleanupTimeout = 10 * time.Second

// Prefix returns the key prefix a lock or an election called name lives
// under: name and a slash. Every holder's or candidate's key is in it.
func Prefix(name []byte) []byte {
	p := make([]byte, 0, len(name)+1)
	return append(append(p, name...), '/')
}

// PrefixEnd returns the end of the range of keys under Prefix(name):
// name and "0", the byte after "/".
func PrefixEnd(name []byte) []byte {
	p := make([]byte, 0, len(name)+1)
	return append(append(p, name...), '/'+1)
}

// OwnerKey returns the key a lease owns in a lock or an election: the
// prefix and the lease ID in lowercase hexadecimal, as etcd names it
// (fmt's %x of the ID): lease 1234 owns "jobs/4d2" in the lock "jobs".
func OwnerKey(name []byte, lease int64) []byte {
	return strconv.AppendInt(Prefix(name), lease, 16)
}

func checkName(name []byte) error {
	if len(name) == 0 {
		return invalidf("the name must not be empty")
	}
	return nil
}

func checkLease(lease int64) error {
	if lease <= 0 {
		return invalidf("a lease is required (a positive ID), not %d", lease)
	}
	return nil
}

// checkOwnerKey checks that key is a key of the lock or election called
// name: the name's prefix and something after it. Releasing any other key
// would delete outside what the caller was allowed to touch.
func checkOwnerKey(name, key []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	p := Prefix(name)
	if len(key) <= len(p) || !bytes.HasPrefix(key, p) {
		return invalidf("key %q is not a key of %q (it must start with %q)", key, name, p)
	}
	return nil
}

// cleanupContext is a context for a write that must happen although ctx
// is done: it keeps ctx's values, not its cancellation.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
