// Package waittest waits, in a test, for a condition that another
// goroutine makes true, by polling it up to a deadline: the generous
// deadline, not the pace of the machine, is what a test can fail on. It
// is for tests only.
package waittest

import "time"

// For polls cond until it holds or timeout passes; it reports whether it
// held.
func For(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
