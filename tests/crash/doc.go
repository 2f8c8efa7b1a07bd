// Package crash tests what survives a crash: a writer killed mid-commit, the
// server killed at crash points inside compaction, defragmentation and lease
// expiry, and disks that fail or fill.
//
// A test that needs a child process other than the binary re-executes the
// test binary; TestMain picks the child's role from its environment.
package crash
