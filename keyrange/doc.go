// Package keyrange is the one way httpkv names a set of keys: a single
// key, a prefix, every key from a key on, or an explicit [start, end).
//
// A Range is etcd's (key, range_end) pair, read the same way in every
// package that takes one (the API, the store, the watch scheduler, the
// authorization policy, the benchmarks):
//
//	End empty (nil or zero length)  the single key Key
//	End == "\x00"                   every key >= Key (FromKey)
//	Key == "\x00", End == "\x00"    every key (All)
//	otherwise                       every key k with Key <= k < End
//
// So nil End always means "one key", never "no upper bound": the upper
// bound is spelled "\x00", as on etcd's wire. A Range whose explicit End
// is at or below Key holds no key.
//
// Where code needs a plain half-open interval (an interval tree, a merged
// list of spans), Limit gives the exclusive upper bound, nil standing for
// +infinity, and CompareLimits orders such bounds.
package keyrange
