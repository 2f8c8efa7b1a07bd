package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/tests/e2e"
)

const (
	envCrashSeed = "HTTPKV_CRASH_SEED"
	crashRounds  = 3
	// crashMaxRounds bounds the rounds run until one kill leaves
	// acknowledged writes in the log only.
	crashMaxRounds = 12
	// The writer is killed this long after its first acknowledged write,
	// chosen at random in [crashMinDelay, crashMaxDelay).
	crashMinDelay = 200 * time.Millisecond
	crashMaxDelay = 1500 * time.Millisecond
)

// TestCrashRecovery kills a writer (runCrashChild) with SIGKILL at a random
// moment, reopens its store, and checks that every write the writer
// acknowledged is there at its exact revision and that the history has no
// gap. The rounds share one store, so each later round starts from a store
// recovered from a kill.
//
// SIGKILL ends the process, not the machine: the page cache survives. So
// this checks that a write is acknowledged only once its commit is done and
// that a commit cut short leaves nothing half applied; whether fsync
// reaches the disk it cannot tell.
//
// Writes are acknowledged from the write-ahead log and reach the bbolt
// file at checkpoints, 100 ms apart: the kills land between a log's
// fdatasync and the checkpoint that follows. The test checks that they
// did, in at least one round: the file alone (without its log) lacked
// acknowledged writes, which the reopened store then had. A kill can
// land just after a checkpoint, so it runs more rounds (up to
// crashMaxRounds) until one does.
func TestCrashRecovery(t *testing.T) {
	e2e.EmbeddedOnly(t, "it kills a writer of the store's file in the middle of its commits")
	rng := e2e.TestRand(t, envCrashSeed)
	path := filepath.Join(t.TempDir(), "db")
	var acks []crashAck
	logOnly := 0
	for round := 1; round <= crashRounds || logOnly == 0 && round <= crashMaxRounds; round++ {
		delay := crashMinDelay + time.Duration(rng.Int64N(int64(crashMaxDelay-crashMinDelay)))
		got := crashRound(t, path, fmt.Sprintf("r%d", round), delay, maxRev(acks))
		acks = append(acks, got...)
		fileRev := fileRevision(t, path)
		t.Logf("round %d: killed %v after the first acknowledged write, %d writes acknowledged, the newest at %d; the file alone at %d",
			round, delay, len(got), maxRev(acks), fileRev)
		if fileRev < maxRev(acks) {
			logOnly++
		}
		checkRecovered(t, path, acks)
	}
	if logOnly == 0 {
		t.Errorf("in no round did the kill leave acknowledged writes in the log only: the test did not reach the crash point between the log's fdatasync and the checkpoint")
	}
}

// fileRevision returns the revision of the bbolt file at path alone, as
// a copy of it without its write-ahead log opens.
func fileRevision(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := mvcc.Open(cp, nil, nil, mvcc.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("Open of the file alone after the kill: %v", err)
	}
	defer s.Close()
	return s.Rev()
}

// crashAck is one write the crash writer acknowledged.
type crashAck struct {
	line   string
	round  string // the key prefix of the round
	writer int
	rev    int64
	events []string // "put:<key>=<value>" or "del:<key>", in revision order
}

// crashRound runs the crash writer on the store at path, kills it delay
// after its first acknowledged write (so that, however slow the disk, every
// round has something to check), and returns the writes it acknowledged.
// The writer must open the store at revision minRev or later.
func crashRound(t *testing.T, path, prefix string, delay time.Duration, minRev int64) []crashAck {
	t.Helper()
	p := e2e.StartProcess(t, "crash writer "+prefix,
		e2e.TestExecutable(t, envCrashChild+"="+path, envCrashPrefix+"="+prefix))
	ready := p.WaitLine("ready ", 30*time.Second)
	rev, err := strconv.ParseInt(strings.TrimPrefix(ready, "ready "), 10, 64)
	if err != nil {
		t.Fatalf("crash writer printed %q: %v", ready, err)
	}
	if rev < minRev {
		t.Fatalf("crash writer opened the store at revision %d, want >= %d, the newest acknowledged", rev, minRev)
	}

	p.WaitLine("ack ", 30*time.Second)
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-p.Done:
		t.Fatalf("crash writer exited (%v) before the kill", p.WaitErr)
	}
	p.Kill()
	if s := p.Stderr.String(); s != "" {
		t.Fatalf("crash writer wrote to stderr:\n%s", s)
	}

	var acks []crashAck
	for _, l := range p.Lines() {
		if strings.HasPrefix(l, "ready ") {
			continue
		}
		a, err := parseCrashAck(l)
		if err != nil {
			t.Fatal(err)
		}
		a.round = prefix
		acks = append(acks, a)
	}
	return acks
}

// parseCrashAck parses "ack <writer> <rev> <event>...".
func parseCrashAck(line string) (crashAck, error) {
	f := strings.Fields(line)
	if len(f) < 4 || f[0] != "ack" {
		return crashAck{}, fmt.Errorf("crash writer printed %q, want an ack line", line)
	}
	a := crashAck{line: line, events: f[3:]}
	var err error
	if a.writer, err = strconv.Atoi(f[1]); err != nil {
		return crashAck{}, fmt.Errorf("ack line %q: writer: %w", line, err)
	}
	if a.rev, err = strconv.ParseInt(f[2], 10, 64); err != nil {
		return crashAck{}, fmt.Errorf("ack line %q: revision: %w", line, err)
	}
	return a, nil
}

func maxRev(acks []crashAck) int64 {
	var m int64
	for _, a := range acks {
		m = max(m, a.rev)
	}
	return m
}

// checkRecovered opens the store at path and checks it against acks: the
// current revision is at least every acknowledged one; every revision from
// 2 to the current one holds at least one event; an acknowledged revision
// holds exactly the acknowledged events, and a range at it sees them; and
// each writer's acknowledged revisions increase.
func checkRecovered(t *testing.T, path string, acks []crashAck) {
	t.Helper()
	s, err := mvcc.Open(path, nil, nil, mvcc.Options{})
	if err != nil {
		t.Fatalf("Open(%q) after the kill: %v", path, err)
	}
	defer s.Close()
	r, err := s.Read()
	if err != nil {
		t.Fatalf("Read() after the kill: %v", err)
	}
	defer r.End()
	cur := r.Rev()

	history := make(map[int64][]string)
	err = r.History(1, func(ev kv.Event) bool {
		history[ev.KV.ModRevision] = append(history[ev.KV.ModRevision], formatEvent(ev))
		return true
	})
	if err != nil {
		t.Fatalf("History(1): %v", err)
	}
	for rev := int64(2); rev <= cur; rev++ {
		if len(history[rev]) == 0 {
			t.Fatalf("History(1): no event at revision %d, current revision %d: the revisions have a gap", rev, cur)
		}
	}
	if n := int64(len(history)); n != cur-1 {
		t.Fatalf("History(1): events at %d revisions, want %d (2 to current %d)", n, cur-1, cur)
	}

	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
		if failures++; failures >= 20 {
			t.FailNow()
		}
	}
	last := make(map[string]int64) // writer in its round -> its newest revision
	for _, a := range acks {
		if a.rev > cur {
			fail("acknowledged %q, but the current revision after the kill is %d", a.line, cur)
			continue
		}
		writer := a.round + "/" + strconv.Itoa(a.writer)
		if a.rev <= last[writer] {
			fail("acknowledged %q after revision %d of the same writer", a.line, last[writer])
		}
		last[writer] = a.rev
		if got := history[a.rev]; !slices.Equal(got, a.events) {
			fail("History: revision %d holds %q, want %q, as acknowledged", a.rev, got, a.events)
			continue
		}
		for _, ev := range a.events {
			if err := checkEventVisible(r, a.rev, ev); err != nil {
				fail("acknowledged %q: %v", a.line, err)
			}
		}
	}
}

func formatEvent(ev kv.Event) string {
	if ev.Type == kv.EventDelete {
		return "del:" + string(ev.KV.Key)
	}
	return "put:" + string(ev.KV.Key) + "=" + string(ev.KV.Value)
}

// checkEventVisible checks that a range at rev sees ev, made at rev: a put
// of a fresh key as the key's first version, a delete as the key gone at
// rev and present just before it.
func checkEventVisible(r *mvcc.ReadTxn, rev int64, ev string) error {
	op, kval, _ := strings.Cut(ev, ":")
	key, value, _ := strings.Cut(kval, "=")
	got, err := r.Range([]byte(key), nil, kv.RangeOptions{Revision: rev})
	if err != nil {
		return fmt.Errorf("Range(%q, rev=%d): %w", key, rev, err)
	}
	if op == "del" {
		if len(got.KVs) != 0 {
			return fmt.Errorf("Range(%q, rev=%d) = %d keys, want 0", key, rev, len(got.KVs))
		}
		before, err := r.Range([]byte(key), nil, kv.RangeOptions{Revision: rev - 1})
		if err != nil {
			return fmt.Errorf("Range(%q, rev=%d): %w", key, rev-1, err)
		}
		if len(before.KVs) != 1 {
			return fmt.Errorf("Range(%q, rev=%d) = %d keys, want 1", key, rev-1, len(before.KVs))
		}
		return nil
	}
	want := kv.KeyValue{Key: []byte(key), Value: []byte(value), CreateRevision: rev, ModRevision: rev, Version: 1}
	if len(got.KVs) != 1 || formatKV(got.KVs[0]) != formatKV(want) {
		gotKVs := make([]string, len(got.KVs))
		for i, kval := range got.KVs {
			gotKVs[i] = formatKV(kval)
		}
		return fmt.Errorf("Range(%q, rev=%d) = %v, want [%s]", key, rev, gotKVs, formatKV(want))
	}
	return nil
}

func formatKV(kval kv.KeyValue) string {
	return fmt.Sprintf("{%q=%q create=%d mod=%d version=%d lease=%d}",
		kval.Key, kval.Value, kval.CreateRevision, kval.ModRevision, kval.Version, kval.Lease)
}
