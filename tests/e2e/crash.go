package e2e

import (
	"fmt"
	"strings"
	"time"

	"github.com/httpkv/httpkv/mvcc"
)

// The test crash point of the server built with -tags crashpoints
// (CrashBinary, cmd/httpkv/crashpoint.go): it kills itself with SIGKILL
// at the N-th commit made while the arm file exists.
const (
	envCrashAt  = "HTTPKV_TEST_CRASH_AT"
	envCrashArm = "HTTPKV_TEST_CRASH_ARM"
	crashLine   = "test crash point reached"
)

// The batch sizes of every server of that build, smaller than the
// server's own, so that a test reaches the same commits of a compaction
// or of a mass expiry with a tenth of the history or of the leases
// written first.
const (
	envCompactionBatch = "HTTPKV_TEST_COMPACTION_BATCH"
	envRevokeRate      = "HTTPKV_TEST_REVOKE_RATE"
	// CrashCompactionBatch is how many revisions one commit of a
	// compaction deletes: a tenth of mvcc.DefaultCompactionBatchLimit.
	CrashCompactionBatch = mvcc.DefaultCompactionBatchLimit / 10
	// CrashRevokeRate is how many expired leases a second are revoked
	// (lease.DefaultRevokeRate is 1,000).
	CrashRevokeRate = 32
)

// CrashPoint is where a server is told to kill itself.
type CrashPoint struct {
	After  bool // once the commit is durable, before it is answered
	Commit int  // the N-th armed commit
}

func (p CrashPoint) String() string {
	if p.After {
		return fmt.Sprintf("after-commit:%d", p.Commit)
	}
	return fmt.Sprintf("before-commit:%d", p.Commit)
}

// RestartAt restarts the server (SIGTERM) with its crash point at p,
// counting the commits made while arm exists: the binary with crash
// points built in. A zero p restarts the server's own binary, without
// one.
func (s *Server) RestartAt(p CrashPoint, arm string) {
	s.TB.Helper()
	s.Env, s.bin = nil, ""
	if p.Commit != 0 {
		s.Env = []string{
			envCrashAt + "=" + p.String(), envCrashArm + "=" + arm,
			fmt.Sprintf("%s=%d", envCompactionBatch, CrashCompactionBatch),
			fmt.Sprintf("%s=%d", envRevokeRate, CrashRevokeRate),
		}
		s.bin = CrashBinary(s.TB)
	}
	s.Restart()
}

// WaitCrashed waits for the server to kill itself at its crash point.
func (s *Server) WaitCrashed(timeout time.Duration) {
	s.TB.Helper()
	select {
	case <-s.Exited:
	case <-time.After(timeout):
		s.TB.Fatalf("httpkv did not reach its crash point (%v) within %v", s.Env, timeout)
	}
	if st := s.Cmd.ProcessState; st == nil || st.ExitCode() != -1 {
		s.TB.Fatalf("httpkv exited (%v), want killed by its crash point; stderr:\n%s", s.waitErr, s.Stderr)
	}
	if !strings.Contains(s.Stderr.String(), crashLine) {
		s.TB.Fatalf("httpkv was killed, but not by its crash point; stderr:\n%s", s.Stderr)
	}
	s.checkStderr()
}
