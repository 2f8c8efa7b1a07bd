// Package etcddiff compares a store with etcd itself: seeded random
// sequences of puts, deletes, txns, compactions and ranges (Gen), sent to
// both and compared answer by answer (Differ), the first difference
// failing the test. mvcc's TestEtcdDiff runs them against the embedded
// store; the end-to-end tests, through a gateway over an etcd cluster.
//
// Only _test.go files import this package: it takes a testing.TB and
// fails the test on transport errors.
//
// What the sequences leave out, and why:
//
//   - Leases: every put has lease 0 (lease compares are against 0).
//   - etcd's duplicate-key check reads a delete with range end "\x00" as an
//     empty interval, so it accepts a put of a key that delete removes; the
//     store rejects it. Such deletes are used in txns only when the txn has
//     no put at all. Likewise txn deletes never have an end at or below
//     their key, which etcd's interval tree was not written for.
//   - etcd answers a nested txn with an empty header; the store reports a
//     revision there, which is not compared.
//   - On a fresh etcd the compact revision is -1, so compacting at 0
//     succeeds once; the store's starts at 0. Compactions here are at 1 or
//     above.
//   - Negative limits and revisions, which etcd reads as 0 and the store
//     rejects as invalid, are not generated.
//   - etcd sorts with an unstable sort, so ties in the sort field may come
//     back in any order; those results are compared as the sequence of
//     sort-field values and the set of keys of each tie.
//
// The etcd is the release internal/etcdtest pins (3.6). etcd 3.4 and 3.5
// checked a write txn's puts (ignore_value and ignore_lease on missing
// keys) on its whole path before its ranges (compacted or future
// revisions); 3.6 and the store check op by op, so a txn here may get both
// kinds of failing op, and an older etcd fails some seeds (14, 30 and 37
// of the first 40 on 3.4).
//
// A tombstone at exactly the compact revision is kept by the store for
// watchers and dropped by etcd; ranges cannot tell, so nothing is left out
// for it.
package etcddiff
