//go:build crashpoints

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/httpkv/httpkv/mvcc"
)

// The crash points of the end-to-end crash tests (tests/crash_points_test.go),
// in the binary built with -tags crashpoints only (the tests build one);
// the server's binary has none (crashpoint_off.go). A server of that
// build given these variables kills itself.
//
//	HTTPKV_TEST_CRASH_AT=before-commit:N   SIGKILL at the N-th commit of a
//	                                       write batch, before it writes
//	HTTPKV_TEST_CRASH_AT=after-commit:N    SIGKILL once the N-th commit is
//	                                       durable, before its writes are
//	                                       answered or applied in memory
//	HTTPKV_TEST_CRASH_ARM=FILE             count only the commits made
//	                                       while FILE exists (optional)
//
// The arm file lets a test prepare a store through the server (grant
// leases, write history) and then count only the commits of what it
// wants to interrupt: a compaction's batches, the revokes of a mass
// expiry. Neither variable is a flag, so neither shows in --help.
const (
	envCrashAt  = "HTTPKV_TEST_CRASH_AT"
	envCrashArm = "HTTPKV_TEST_CRASH_ARM"
)

// crashCommitter is an mvcc.Committer that kills the process at one
// commit and commits normally otherwise.
type crashCommitter struct {
	at     int64 // the commit to die at, counted from 1
	after  bool  // die once it is durable rather than before it
	arm    string
	stderr io.Writer
	count  atomic.Int64 // commits counted so far; only the committer adds
}

// crashPoint returns the Committer the test crash point asks for, or nil
// (an interface holding nothing) when none is set.
func crashPoint(getenv func(string) string, stderr io.Writer) (mvcc.Committer, error) {
	spec := getenv(envCrashAt)
	if spec == "" {
		return nil, nil
	}
	when, n, _ := strings.Cut(spec, ":")
	at, err := strconv.ParseInt(n, 10, 64)
	if err != nil || at < 1 || (when != "before-commit" && when != "after-commit") {
		return nil, fmt.Errorf("%s=%q: want before-commit:N or after-commit:N, N >= 1", envCrashAt, spec)
	}
	fmt.Fprintf(stderr, "httpkv: TEST CRASH POINT %s set: this process will kill itself\n", spec)
	return &crashCommitter{at: at, after: when == "after-commit", arm: getenv(envCrashArm), stderr: stderr}, nil
}

func (c *crashCommitter) Commit(commit func() error) error {
	if c.arm != "" {
		if _, err := os.Stat(c.arm); errors.Is(err, os.ErrNotExist) {
			return commit()
		}
	}
	if c.count.Add(1) != c.at {
		return commit()
	}
	if c.after {
		err := commit()
		c.die(fmt.Sprintf("after commit %d (%v)", c.at, err))
	}
	c.die(fmt.Sprintf("before commit %d", c.at))
	return nil // not reached
}

// die kills the process as kill -9 would: no deferred function runs,
// nothing is flushed or closed.
func (c *crashCommitter) die(where string) {
	fmt.Fprintf(c.stderr, "httpkv: test crash point reached %s: SIGKILL\n", where)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill() // SIGKILL on Unix
	}
	select {} // the signal is on its way
}
