package crash

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/tests/e2e"
)

// randomCrashPoints returns n points, before and after a commit in turn,
// at commits drawn from 1 to most.
func randomCrashPoints(rng *rand.Rand, n, most int) []e2e.CrashPoint {
	out := make([]e2e.CrashPoint, n)
	for i := range out {
		out[i] = e2e.CrashPoint{After: i%2 == 1, Commit: 1 + rng.IntN(most)}
	}
	return out
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
func writeAcked(tb testing.TB, s *e2e.Server, m *crashModel, prefix string, writers, n int, rng *rand.Rand) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	target := m.acked() + n
	wait := startCrashWriters(ctx, tb, s, m, prefix, writers, rng)
	e2e.Eventually(tb, 5*time.Minute, func() (bool, string) {
		return m.acked() >= target || tb.Failed(), fmt.Sprintf("%d of %d writes acknowledged", m.acked(), target)
	})
	cancel()
	wait()
}

// TestCrashInsideCompaction kills the server (SIGKILL, from its crash
// point) at commits of a physical compaction of about 3 batches
// (CrashCompactionBatch) of revisions,
// restarts it, and checks the whole readable history against what the
// writers sent: every acknowledged write at its revision, every revision
// one whole request, no gap; the compact revision is the new one if the
// compaction was acknowledged, and reads at it see every key's newest
// version; and the compaction finishes: the data file then holds, at or
// below the compact revision, exactly one record per key.
//
// In the quiet rounds nothing else writes, so the N-th commit is the
// compaction's own: 1 schedules it, the next ones delete up to
// CrashCompactionBatch revisions each, the last records its end; the kill lands before one or
// once it is durable. In the busy rounds writers go on writing and the
// kill lands where it falls.
func TestCrashInsideCompaction(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it crashes the embedded store inside its compaction")
	rng := e2e.TestRand(t, "HTTPKV_CRASH_POINT_SEED")
	s := e2e.StartServer(t, "--unsafe-no-fsync=false")
	dataFile := filepath.Join(s.DataDir, "httpkv.db")
	arm := filepath.Join(t.TempDir(), "arm")
	m := newCrashModel()
	rounds := []struct {
		busy  bool
		point e2e.CrashPoint
	}{
		{false, e2e.CrashPoint{After: true, Commit: 1}},
		{false, e2e.CrashPoint{After: false, Commit: 3}},
		{true, randomCrashPoints(rng, 1, 6)[0]},
		{false, e2e.CrashPoint{After: true, Commit: 3}},
		{false, e2e.CrashPoint{After: false, Commit: 5}},
		{true, randomCrashPoints(rng, 2, 6)[1]},
	}
	inProgress := 0 // rounds killed with the compaction scheduled and history left to delete
	for i, round := range rounds {
		writeAcked(t, s, m, fmt.Sprintf("c%d", i), 8, 3*e2e.CrashCompactionBatch, rng)
		m.sync(t, s)
		compactAt := m.top
		before := s.Status(t).CompactRevision
		kept := 0
		for _, n := range m.keptAt(compactAt) {
			kept += n
		}

		s.RestartAt(round.point, arm)
		touch(t, arm)
		ctx, cancel := context.WithCancel(context.Background())
		wait := func() {}
		if round.busy {
			wait = startCrashWriters(ctx, t, s, m, fmt.Sprintf("c%d/during", i), 2, rng)
		}
		compacted := make(chan int, 1)
		go func() {
			r, err := s.Send(ctx, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, compactAt)))
			if err != nil {
				compacted <- 0
				return
			}
			compacted <- r.Status
		}()
		answer := -1
		select {
		case answer = <-compacted:
			if !round.busy {
				// The compaction took fewer commits than the point: the
				// crash lands on the writes that follow it.
				wait = startCrashWriters(ctx, t, s, m, fmt.Sprintf("c%d/after", i), 2, rng)
			}
		case <-s.Exited:
		}
		s.WaitCrashed(2 * time.Minute)
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

		s.RestartAt(e2e.CrashPoint{}, "")
		got := s.Status(t).CompactRevision
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
		s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, m.top))).Want(t, http.StatusOK)
		s.Stop()
		checkKeptRecords(t, dataFile, m.top, m.keptAt(m.top))
		s.RestartAt(e2e.CrashPoint{}, "")
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
