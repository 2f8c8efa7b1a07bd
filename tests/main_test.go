package tests

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs a child role when the environment names one, and the tests
// otherwise.
func TestMain(m *testing.M) {
	if path := os.Getenv(envCrashChild); path != "" {
		os.Exit(runCrashChild(path, os.Getenv(envCrashPrefix), os.Stdout, os.Stderr))
	}
	flag.Parse()
	parallelByDefault()
	code := m.Run()
	closeConsoleBrowser()
	os.Exit(code)
}

// testsPerCore is how many tests run at once per core unless -parallel
// says otherwise.
const testsPerCore = 3

// parallelByDefault runs testsPerCore tests a core at once when -parallel
// was not given, over the embedded store. Its tests spend most of their
// time waiting on what they start (servers, Chromium, npm) and on the
// timeouts they check: with go test's default of one a core the cores
// sit half idle. Three a core took the package from 380 s to 280 s on
// two cores with no test failing. Over etcd (envTestBackend) each test
// starts a cluster of three members, which keep the cores busy: there
// three tests a core overloaded the members until they timed out, so
// the default stays.
func parallelByDefault() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && os.Getenv(envTestBackend) != "etcd" {
		_ = flag.Set("test.parallel", strconv.Itoa(testsPerCore*runtime.GOMAXPROCS(0)))
	}
}
