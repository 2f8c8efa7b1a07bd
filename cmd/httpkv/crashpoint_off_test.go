//go:build !crashpoints

package main

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/httpkv/httpkv/internal/daemon"
)

// TestNoCrashPoints: the server's binary ignores the crash tests'
// variables: it has no crash point to set and no batch size to change.
func TestNoCrashPoints(t *testing.T) {
	env := map[string]string{
		"HTTPKV_TEST_CRASH_AT":         "before-commit:1",
		"HTTPKV_TEST_CRASH_ARM":        "/nonexistent",
		"HTTPKV_TEST_COMPACTION_BATCH": "1",
		"HTTPKV_TEST_REVOKE_RATE":      "1",
	}
	var stderr bytes.Buffer
	var cfg daemon.Config
	c, err := crashPoint(func(k string) string { return env[k] }, &stderr, &cfg)
	if c != nil || err != nil || stderr.Len() != 0 {
		t.Errorf("crashPoint(%v) = %v, %v with stderr %q, want nothing: the server's binary has no crash points", env, c, err, stderr.String())
	}
	if !reflect.DeepEqual(cfg, daemon.Config{}) {
		t.Errorf("crashPoint(%v) changed the configuration to %+v: the server's binary has no test batch sizes", env, cfg)
	}
}
