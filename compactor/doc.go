// Package compactor compacts a store's history automatically, as etcd's
// --auto-compaction-mode and --auto-compaction-retention do.
//
// In periodic mode the retention is a duration: the compactor samples the
// store's revision every tenth of the retention (at most every hour) and
// compacts at the newest sample that is at least the retention old, so
// history older than the retention goes away. In revision mode the
// retention is a number of revisions: every five minutes it compacts at
// the current revision minus the retention.
package compactor
