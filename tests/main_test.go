package tests

import (
	"os"
	"testing"
)

// TestMain runs a child role when the environment names one, and the tests
// otherwise.
func TestMain(m *testing.M) {
	if path := os.Getenv(envCrashChild); path != "" {
		os.Exit(runCrashChild(path, os.Getenv(envCrashPrefix), os.Stdout, os.Stderr))
	}
	code := m.Run()
	closeConsoleBrowser()
	os.Exit(code)
}
