package e2e

import (
	"os"
	"testing"
)

// NeedPrograms skips the test when err says that a program it needs is
// missing (what says which), or fails it on CI (CI set), where every
// program must be there.
func NeedPrograms(tb testing.TB, what string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s: %v", what, err)
	}
	tb.Skipf("%s: %v", what, err)
}
