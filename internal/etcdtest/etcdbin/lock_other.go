//go:build !unix

package etcdbin

// lockFile does nothing where flock is missing: concurrent builds then
// each rename a complete binary into place, the last one winning.
func lockFile(string) (func(), error) { return func() {}, nil }
