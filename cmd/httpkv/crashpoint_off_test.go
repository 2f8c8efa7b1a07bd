//go:build !crashpoints

package main

import (
	"bytes"
	"testing"
)

// TestNoCrashPoints: the server's binary ignores the crash tests'
// variables: it has no crash point to set.
func TestNoCrashPoints(t *testing.T) {
	env := map[string]string{"HTTPKV_TEST_CRASH_AT": "before-commit:1", "HTTPKV_TEST_CRASH_ARM": "/nonexistent"}
	var stderr bytes.Buffer
	c, err := crashPoint(func(k string) string { return env[k] }, &stderr)
	if c != nil || err != nil || stderr.Len() != 0 {
		t.Errorf("crashPoint(HTTPKV_TEST_CRASH_AT=before-commit:1) = %v, %v with stderr %q, want nothing: the server's binary has no crash points", c, err, stderr.String())
	}
}
