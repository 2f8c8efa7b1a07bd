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

	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/mvcc"
)

// The crash points of the end-to-end crash tests (tests/crash/crash_points_test.go),
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
//	HTTPKV_TEST_COMPACTION_BATCH=N         a compaction deletes at most N
//	                                       revisions a commit, not 1,000
//	                                       (mvcc.Options.CompactionBatchLimit)
//	HTTPKV_TEST_REVOKE_RATE=N              at most N expired leases a
//	                                       second are revoked, not 1,000
//	                                       (lease.Config.RevokeRate)
//
// The arm file lets a test prepare a store through the server (grant
// leases, write history) and then count only the commits of what it
// wants to interrupt: a compaction's batches, the revokes of a mass
// expiry. The smaller batches let it reach the same commits of those
// with a tenth of the history or leases to write first, which is most of
// a crash test's time. None of the variables is a flag, so none shows
// in --help, and the server's binary reads none of them.
const (
	envCrashAt         = "HTTPKV_TEST_CRASH_AT"
	envCrashArm        = "HTTPKV_TEST_CRASH_ARM"
	envCompactionBatch = "HTTPKV_TEST_COMPACTION_BATCH"
	envRevokeRate      = "HTTPKV_TEST_REVOKE_RATE"
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
// (an interface holding nothing) when none is set, and sets in cfg the
// batch sizes the test asks for.
func crashPoint(getenv func(string) string, stderr io.Writer, cfg *daemon.Config) (mvcc.Committer, error) {
	for _, b := range []struct {
		env string
		to  *int
	}{
		{envCompactionBatch, &cfg.Embedded.Store.CompactionBatchLimit},
		{envRevokeRate, &cfg.Embedded.Lease.RevokeRate},
	} {
		v := getenv(b.env)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a number of at least 1", b.env, v)
		}
		*b.to = n
		fmt.Fprintf(stderr, "httpkv: TEST BATCH SIZE %s=%d set\n", b.env, n)
	}
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
