package e2e

import (
	"flag"
	"os"
	"runtime"
	"strconv"
)

// UpdateDocs (-update) makes the tests of generated documents rewrite
// them rather than fail when they are out of date.
var UpdateDocs = flag.Bool("update", false, "rewrite generated docs: the console's screenshots in docs/console/, the table of docs/errors.md")

// ParallelByDefault runs perCore tests a core at once when -parallel was
// not given, over the embedded store; a package's TestMain calls it after
// flag.Parse. Tests that spend most of their time waiting on what they
// start (servers, npm) and on the timeouts they check leave the cores
// half idle at go test's default of one a core: three a core took the
// API tests from 380 s to 280 s on two cores with no test failing. Tests
// that keep a core busy (Chromium's renderer) gain nothing from more.
// Over etcd (EnvTestBackend) each test starts a cluster of three members,
// which keep the cores busy: there three tests a core overloaded the
// members until they timed out, so the default stays.
func ParallelByDefault(perCore int) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && os.Getenv(EnvTestBackend) != "etcd" {
		_ = flag.Set("test.parallel", strconv.Itoa(perCore*runtime.GOMAXPROCS(0)))
	}
}
