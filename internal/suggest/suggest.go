// Package suggest finds, for a name nobody knows, the known name its
// author most likely meant: the API's "did you mean" for a query
// parameter or a JSON field, and the command line's for a flag or a
// command.
package suggest

import "strings"

// Nearest returns the name of known nearest to name, if one is near
// enough to be a slip: within a third of name's length in edits (at
// least one), or name cut short by at least three bytes (prev for
// prev_kv). It returns "" when none is.
func Nearest(name string, known []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, k := range known {
		d := editDistance(name, k)
		if len(name) >= 3 && strings.HasPrefix(k, name) {
			d = 1
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the number of edits between a and b, in bytes: a
// byte inserted, deleted or replaced, or two next to each other swapped
// (gte for get), each one edit (the optimal string alignment distance).
func editDistance(a, b string) int {
	// Rows i-2, i-1 and i of the table of distances between a's and b's
	// prefixes.
	before := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}
