package tests

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/mvcc"
	bolt "go.etcd.io/bbolt"
)

// The test crash point of the server built with -tags crashpoints
// (crashBinary, cmd/httpkv/crashpoint.go): it kills itself with SIGKILL
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
	// crashCompactionBatch is how many revisions one commit of a
	// compaction deletes: a tenth of mvcc.DefaultCompactionBatchLimit.
	crashCompactionBatch = mvcc.DefaultCompactionBatchLimit / 10
	// crashRevokeRate is how many expired leases a second are revoked
	// (lease.DefaultRevokeRate is 1,000).
	crashRevokeRate = 32
)

// crashPoint is where a server is told to kill itself.
type crashPoint struct {
	after  bool // once the commit is durable, before it is answered
	commit int  // the N-th armed commit
}

func (p crashPoint) String() string {
	if p.after {
		return fmt.Sprintf("after-commit:%d", p.commit)
	}
	return fmt.Sprintf("before-commit:%d", p.commit)
}

// randomCrashPoints returns n points, before and after a commit in turn,
// at commits drawn from 1 to most.
func randomCrashPoints(rng *rand.Rand, n, most int) []crashPoint {
	out := make([]crashPoint, n)
	for i := range out {
		out[i] = crashPoint{after: i%2 == 1, commit: 1 + rng.IntN(most)}
	}
	return out
}

// restartAt restarts the server (SIGTERM) with its crash point at p,
// counting the commits made while arm exists: the binary with crash
// points built in. A zero p restarts the server's own binary, without
// one.
func (s *server) restartAt(p crashPoint, arm string) {
	s.tb.Helper()
	s.env, s.bin = nil, ""
	if p.commit != 0 {
		s.env = []string{
			envCrashAt + "=" + p.String(), envCrashArm + "=" + arm,
			fmt.Sprintf("%s=%d", envCompactionBatch, crashCompactionBatch),
			fmt.Sprintf("%s=%d", envRevokeRate, crashRevokeRate),
		}
		s.bin = crashBinary(s.tb)
	}
	s.Restart()
}

// waitCrashed waits for the server to kill itself at its crash point.
func (s *server) waitCrashed(timeout time.Duration) {
	s.tb.Helper()
	select {
	case <-s.exited:
	case <-time.After(timeout):
		s.tb.Fatalf("httpkv did not reach its crash point (%v) within %v", s.env, timeout)
	}
	if st := s.cmd.ProcessState; st == nil || st.ExitCode() != -1 {
		s.tb.Fatalf("httpkv exited (%v), want killed by its crash point; stderr:\n%s", s.waitErr, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), crashLine) {
		s.tb.Fatalf("httpkv was killed, but not by its crash point; stderr:\n%s", s.stderr)
	}
	s.checkStderr()
}

// touch creates the file at path.
func touch(tb testing.TB, path string) {
	tb.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// writeAcked runs writers under prefix until n more writes are
// acknowledged.
func writeAcked(tb testing.TB, s *server, m *crashModel, prefix string, writers, n int, rng *rand.Rand) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	target := m.acked() + n
	wait := startCrashWriters(ctx, tb, s, m, prefix, writers, rng)
	eventually(tb, 5*time.Minute, func() (bool, string) {
		return m.acked() >= target || tb.Failed(), fmt.Sprintf("%d of %d writes acknowledged", m.acked(), target)
	})
	cancel()
	wait()
}

// TestCrashInsideCompaction kills the server (SIGKILL, from its crash
// point) at commits of a physical compaction of about 3 batches
// (crashCompactionBatch) of revisions,
// restarts it, and checks the whole readable history against what the
// writers sent: every acknowledged write at its revision, every revision
// one whole request, no gap; the compact revision is the new one if the
// compaction was acknowledged, and reads at it see every key's newest
// version; and the compaction finishes: the data file then holds, at or
// below the compact revision, exactly one record per key.
//
// In the quiet rounds nothing else writes, so the N-th commit is the
// compaction's own: 1 schedules it, the next ones delete up to
// crashCompactionBatch revisions each, the last records its end; the kill lands before one or
// once it is durable. In the busy rounds writers go on writing and the
// kill lands where it falls.
func TestCrashInsideCompaction(t *testing.T) {
	t.Parallel()
	embeddedOnly(t, "it crashes the embedded store inside its compaction")
	rng := testRand(t, "HTTPKV_CRASH_POINT_SEED")
	s := startServer(t, "--unsafe-no-fsync=false")
	dataFile := filepath.Join(s.DataDir, "httpkv.db")
	arm := filepath.Join(t.TempDir(), "arm")
	m := newCrashModel()
	rounds := []struct {
		busy  bool
		point crashPoint
	}{
		{false, crashPoint{after: true, commit: 1}},
		{false, crashPoint{after: false, commit: 3}},
		{true, randomCrashPoints(rng, 1, 6)[0]},
		{false, crashPoint{after: true, commit: 3}},
		{false, crashPoint{after: false, commit: 5}},
		{true, randomCrashPoints(rng, 2, 6)[1]},
	}
	inProgress := 0 // rounds killed with the compaction scheduled and history left to delete
	for i, round := range rounds {
		writeAcked(t, s, m, fmt.Sprintf("c%d", i), 8, 3*crashCompactionBatch, rng)
		m.sync(t, s)
		compactAt := m.top
		before := s.status(t).CompactRevision
		kept := 0
		for _, n := range m.keptAt(compactAt) {
			kept += n
		}

		s.restartAt(round.point, arm)
		touch(t, arm)
		ctx, cancel := context.WithCancel(context.Background())
		wait := func() {}
		if round.busy {
			wait = startCrashWriters(ctx, t, s, m, fmt.Sprintf("c%d/during", i), 2, rng)
		}
		compacted := make(chan int, 1)
		go func() {
			r, err := s.send(ctx, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, compactAt)))
			if err != nil {
				compacted <- 0
				return
			}
			compacted <- r.status
		}()
		answer := -1
		select {
		case answer = <-compacted:
			if !round.busy {
				// The compaction took fewer commits than the point: the
				// crash lands on the writes that follow it.
				wait = startCrashWriters(ctx, t, s, m, fmt.Sprintf("c%d/after", i), 2, rng)
			}
		case <-s.exited:
		}
		s.waitCrashed(2 * time.Minute)
		cancel()
		wait()
		if answer == -1 {
			answer = <-compacted
		}
		os.Remove(arm)
		left := 0
		for _, n := range countRecords(t, dataFile, compactAt) {
			left += n
		}

		s.restartAt(crashPoint{}, "")
		got := s.status(t).CompactRevision
		t.Logf("round %d (busy %v): killed %v into a compaction at %d (answered %d): %d records at or below it, %d to keep; compact revision after restart %d",
			i, round.busy, round.point, compactAt, answer, left, kept, got)
		switch {
		case answer == http.StatusOK && got != compactAt:
			t.Fatalf("the compaction at %d was acknowledged, but the compact revision after the kill is %d", compactAt, got)
		case answer != http.StatusOK && answer != 0:
			t.Fatalf("POST /v1/compact at %d = %d, want 200 or no answer", compactAt, answer)
		case got != compactAt && got != before:
			t.Fatalf("compact revision %d after the kill, want %d (before) or %d (the compaction)", got, before, compactAt)
		}
		if got == compactAt && left > kept {
			inProgress++
		}
		m.sync(t, s)
		m.checkCompactedAt(t, s, got)
		if t.Failed() {
			return
		}

		// The compaction, resumed on start, and one more finish; the file
		// then holds one record per key at or below the compact revision.
		// One more needs a revision above the compact one: when nothing
		// was written after the compaction began, write some.
		if m.top <= got {
			writeAcked(t, s, m, fmt.Sprintf("c%d/more", i), 1, 1, rng)
			m.sync(t, s)
		}
		s.do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, m.top))).want(t, http.StatusOK)
		s.Stop()
		checkKeptRecords(t, dataFile, m.top, m.keptAt(m.top))
		s.restartAt(crashPoint{}, "")
		m.checkCompactedAt(t, s, m.top)
	}
	if inProgress == 0 {
		t.Errorf("no round killed the server with a compaction scheduled and history left to delete: the crash points missed the compaction")
	}
}

// countRecords opens the data file of a stopped server and counts its
// history records at or below rev, by revision. The records' keys are
// the revision, 8 bytes big-endian first (docs/design.md, Storage
// engine).
func countRecords(tb testing.TB, path string, rev int64) map[int64]int {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	got := make(map[int64]int)
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return fmt.Errorf("no bucket %q", "key")
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			main := int64(binary.BigEndian.Uint64(k[:8]))
			if main > rev {
				break
			}
			got[main]++
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

// checkKeptRecords checks that the history records at or below rev in the
// data file of a stopped server are exactly want, counted by revision.
func checkKeptRecords(tb testing.TB, path string, rev int64, want map[int64]int) {
	tb.Helper()
	got := countRecords(tb, path, rev)
	var extra, missing []string
	for r, n := range got {
		if n > want[r] {
			extra = append(extra, fmt.Sprintf("%d@%d", n-want[r], r))
		}
	}
	for r, n := range want {
		if n > got[r] {
			missing = append(missing, fmt.Sprintf("%d@%d", n-got[r], r))
		}
	}
	if len(extra)+len(missing) > 0 {
		tb.Fatalf("after a compaction at %d the data file holds %d records it should have removed (%v) and lacks %d it should keep (%v)",
			rev, len(extra), extra[:min(len(extra), 10)], len(missing), missing[:min(len(missing), 10)])
	}
}
