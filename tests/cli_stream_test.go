package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// watchedEvents returns the type and the events of a message a watch
// printed with -o json, checking it is the API's WatchMessage.
func watchedEvents(tb testing.TB, line string) (typ string, events []string) {
	tb.Helper()
	jsonLines(tb, "watch", line, "WatchMessage")
	var m struct {
		Type   string `json:"type"`
		Events []struct {
			Type string `json:"type"`
			KV   struct {
				Key         string `json:"key"`
				Value       string `json:"value"`
				ModRevision int64  `json:"mod_revision"`
			} `json:"kv"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		tb.Fatal(err)
	}
	for _, ev := range m.Events {
		events = append(events, fmt.Sprintf("%d %s %s %s", ev.KV.ModRevision, ev.Type, ev.KV.Key, ev.KV.Value))
	}
	return m.Type, events
}

// cliPuts puts keys prefix<from>..prefix<from+n-1> with the put command
// and returns the events a watch of them delivers.
func cliPuts(tb testing.TB, s *e2e.Server, prefix string, from, n int) []string {
	tb.Helper()
	var want []string
	for i := from; i < from+n; i++ {
		key, value := fmt.Sprintf("%s%03d", prefix, i), fmt.Sprintf("v%d", i)
		rev := strings.TrimSpace(cliOK(tb, s.URL, "", "put", key, value, "-o", "value"))
		want = append(want, fmt.Sprintf("%s put %s %s", rev, key, value))
	}
	return want
}

// TestCLIWatch: a watch prints each revision's events, goes on after
// the server is killed (kill -9) and restarted mid-stream without a gap
// or a duplicate, ends with status 0 on Ctrl-C, and exits 1 when the
// history it needs is compacted.
func TestCLIWatch(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	want := cliPuts(t, s, "w/", 0, 20)
	w := startCLI(t, s.URL, "watch", "w/", "--prefix", "--rev", "1", "-o", "json")
	if typ, _ := watchedEvents(t, w.Next()); typ != "created" {
		t.Fatalf("watch printed %s first, want created", typ)
	}
	var got []string
	read := func(n int) {
		for len(got) < n {
			typ, evs := watchedEvents(t, w.Next())
			if typ != "events" {
				t.Fatalf("watch printed a %s message mid-stream", typ)
			}
			got = append(got, evs...)
		}
	}
	read(5)
	s.Kill()
	s.Restart()
	want = append(want, cliPuts(t, s, "w/", 20, 10)...)
	read(len(want))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the watch across kill -9 printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	w.Signal(syscall.SIGINT)
	if st := w.Wait(); st != 0 {
		t.Errorf("watch ended by Ctrl-C exited %d, want 0; stderr:\n%s", st, w.Stderr.String())
	}
	if rest := w.Rest(); len(rest) != 0 {
		t.Errorf("watch printed more than the events: %q", rest)
	}
	if !strings.Contains(w.Stderr.String(), "reconnecting") {
		t.Errorf("watch said nothing on stderr of the lost connection: %q", w.Stderr.String())
	}

	// People's format.
	p := startCLI(t, s.URL, "watch", "w/000", "--rev", "1")
	if line := p.Next(); !strings.HasPrefix(line, "PUT w/000 (revision ") || p.Next() != "v0" {
		t.Errorf("watch w/000 printed %q, want PUT w/000 and its value", line)
	}
	p.Signal(syscall.SIGTERM)
	p.Wait()

	// Compacted: exits 1, saying so.
	rev := strings.TrimSpace(cliOK(t, s.URL, "", "status", "-o", "value"))
	cliOK(t, s.URL, "", "compact", rev)
	r := runCLI(t, s.URL, "", "watch", "w/", "--prefix", "--rev", "2")
	if r.status != 1 || !strings.Contains(r.stderr, "httpkv: compacted: ") {
		t.Errorf("watch from below the compact revision exited %d with stderr %q, want 1 and compacted", r.status, r.stderr)
	}
}

// TestCLIElect: a candidate leads and resigns on Ctrl-C; an observer
// prints each leader, and nobody leading.
func TestCLIElect(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	obs := startCLI(t, s.URL, "elect", "db", "--observe", "-o", "json")
	if line := obs.Next(); !strings.Contains(line, `"type":"no_leader"`) {
		t.Fatalf("elect --observe printed %q first, want no_leader", line)
	}
	one := startCLI(t, s.URL, "elect", "db", "10.0.0.7")
	key := one.Next()
	if !strings.HasPrefix(key, "db/") || one.Next() != "10.0.0.7" {
		t.Fatalf("elect db 10.0.0.7 printed %q, want its key and value", key)
	}
	if line := obs.Next(); !strings.Contains(line, `"type":"leader"`) || !strings.Contains(line, `"value":"10.0.0.7"`) {
		t.Fatalf("elect --observe printed %q, want the leader 10.0.0.7", line)
	}
	two := startCLI(t, s.URL, "elect", "db", "10.0.0.8", "-o", "value")
	one.Signal(syscall.SIGINT) // resigns: two leads
	if st := one.Wait(); st != 0 {
		t.Errorf("elect ended by Ctrl-C exited %d; stderr:\n%s", st, one.Stderr)
	}
	if v := two.Next(); v != "10.0.0.8" {
		t.Errorf("the second candidate printed %q, want 10.0.0.8", v)
	}
	for {
		line := obs.Next()
		if strings.Contains(line, `"value":"10.0.0.8"`) {
			break
		}
		if !strings.Contains(line, `"type":"no_leader"`) {
			t.Fatalf("elect --observe printed %q, want no_leader or the leader 10.0.0.8", line)
		}
	}
	// The first candidate's key went when it resigned.
	cliFails(t, s.URL, 1, "key_not_found", "get", key)
	two.Signal(syscall.SIGTERM)
	two.Wait()
	if line := obs.Next(); !strings.Contains(line, `"type":"no_leader"`) {
		t.Errorf("elect --observe printed %q after the last resigned, want no_leader", line)
	}
}

// TestCLILockExclusive: ten `httpkv lock NAME -- sh -c ...` at once
// never hold the lock together: the times each command notes when it
// starts and ends, by its own clock, never overlap.
func TestCLILockExclusive(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	log := filepath.Join(t.TempDir(), "times")
	script := `echo "$$ start $(date +%s%N)" >> "$1"; sleep 0.05; echo "$$ end $(date +%s%N)" >> "$1"; test -n "$HTTPKV_LOCK_KEY"`
	const n = 10
	var wg sync.WaitGroup
	results := make([]cliResult, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runCLI(t, s.URL, "", "lock", "jobs", "--", "sh", "-c", script, "sh", log)
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.status != 0 {
			t.Fatalf("%s exited %d; stderr:\n%s", r, r.status, r.stderr)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ start, end int64 }
	spans := map[string]*span{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("the log has %q", line)
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if spans[f[0]] == nil {
			spans[f[0]] = &span{}
		}
		if f[1] == "start" {
			spans[f[0]].start = ns
		} else {
			spans[f[0]].end = ns
		}
	}
	if len(spans) != n {
		t.Fatalf("%d commands ran, want %d:\n%s", len(spans), n, b)
	}
	var all []span
	for _, sp := range spans {
		if sp.start == 0 || sp.end < sp.start {
			t.Fatalf("a command's times are incomplete: %+v\n%s", sp, b)
		}
		all = append(all, *sp)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].start < all[j].start })
	for i := 1; i < len(all); i++ {
		if all[i].start < all[i-1].end {
			t.Fatalf("two commands held the lock at once: %+v and %+v\n%s", all[i-1], all[i], b)
		}
	}
	// Nothing is left under the lock's prefix: every holder released it.
	if got := cliOK(t, s.URL, "", "get", "jobs/", "--prefix", "--count-only"); got != "0\n" {
		t.Errorf("after every holder ended, jobs/ holds %s keys, want 0", got)
	}
}

// TestCLILockPassesOn: the holder of a lock that is killed (kill -9)
// lets go when its lease expires, and the command it ran dies with it;
// a command's exit status is passed on, and a lock held until Ctrl-C is
// released at once.
func TestCLILockPassesOn(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	holder := startCLI(t, s.URL, "lock", "deploy", "--ttl", "2", "--", "sh", "-c", "echo $$; exec sleep 600")
	child, err := strconv.Atoi(holder.Next())
	if err != nil {
		t.Fatal(err)
	}
	waiter := startCLI(t, s.URL, "lock", "deploy", "--", "echo", "second")
	holder.Signal(syscall.SIGKILL)
	if st := holder.Wait(); st != -1 {
		t.Fatalf("the holder exited %d, want killed", st)
	}
	if line := waiter.Next(); line != "second" {
		t.Fatalf("the waiter printed %q, want second", line)
	}
	if st := waiter.Wait(); st != 0 {
		t.Errorf("the waiter exited %d; stderr:\n%s", st, waiter.Stderr)
	}
	// The killed holder's command died with it.
	deadline := time.Now().Add(e2e.CLITimeout)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the command of the killed holder (pid %d) still runs", child)
		}
		time.Sleep(20 * time.Millisecond)
	}

	r := runCLI(t, s.URL, "", "lock", "deploy", "--", "sh", "-c", "exit 7")
	if r.status != 7 {
		t.Errorf("%s exited %d, want COMMAND's 7", r, r.status)
	}
	r = runCLI(t, s.URL, "", "lock", "deploy", "--", "./no-such-command")
	if r.status != 127 {
		t.Errorf("%s exited %d, want 127", r, r.status)
	}

	held := startCLI(t, s.URL, "lock", "maintenance")
	if key := held.Next(); !strings.HasPrefix(key, "maintenance/") {
		t.Fatalf("lock maintenance printed %q, want its key", key)
	}
	cliFails(t, s.URL, 1, "lock_timeout", "lock", "maintenance", "--timeout", "100ms", "--", "true")
	held.Signal(syscall.SIGINT)
	if st := held.Wait(); st != 0 {
		t.Errorf("lock ended by Ctrl-C exited %d; stderr:\n%s", st, held.Stderr)
	}
	if got := cliOK(t, s.URL, "", "lock", "maintenance", "--timeout", "10s", "--", "echo", "free"); got != "free\n" {
		t.Errorf("after Ctrl-C, the lock was not free at once: %q", got)
	}
}

// TestCLIWatchInterruptedTwice: a watch interrupted again while it ends
// the first time (as timeout(1) does, signalling the command and then its
// process group) still ends cleanly, exit 0, not killed by the second.
func TestCLIWatchInterruptedTwice(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	w := startCLI(t, s.URL, "watch", "w/", "--prefix", "-o", "json")
	if typ, _ := watchedEvents(t, w.Next()); typ != "created" {
		t.Fatalf("watch printed %s first, want created", typ)
	}
	for ended := false; !ended; {
		w.Signal(syscall.SIGINT)
		select {
		case <-w.Done:
			ended = true
		default:
		}
	}
	if st := w.Wait(); st != 0 {
		t.Errorf("watch interrupted again while ending exited %d (-1: killed by a signal), want 0; stderr:\n%s", st, w.Stderr.String())
	}
}
