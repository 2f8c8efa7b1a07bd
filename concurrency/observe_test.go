package concurrency_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
)

// obsString shows an observation: its revision and the leader's key,
// value and mod revision, or "none".
func obsString(o concurrency.Observation) string {
	if o.Leader == nil {
		return fmt.Sprintf("%d: none", o.Revision)
	}
	return fmt.Sprintf("%d: %s=%s@%d", o.Revision, o.Leader.Key, o.Leader.Value, o.Leader.ModRevision)
}

// observe starts an observer of name after revision after, closed when
// the test ends, and returns it with its first observation.
func (e *env) observe(tb testing.TB, name string, after int64) (*concurrency.Observer, concurrency.Observation) {
	tb.Helper()
	o, first, err := concurrency.Observe(context.Background(), e.b, []byte(name), after)
	if err != nil {
		tb.Fatalf("Observe(%s, after %d): %v", name, after, err)
	}
	tb.Cleanup(o.Close)
	return o, first
}

// collect reads observations from o until it has n.
func collect(tb testing.TB, o *concurrency.Observer, n int) []string {
	tb.Helper()
	var got []string
	timeout := time.After(time.Minute)
	for len(got) < n {
		select {
		case <-o.Ready():
		case <-timeout:
			tb.Fatalf("observed %q, want %d observations", got, n)
		}
		obs, err := o.Next()
		if err != nil {
			tb.Fatalf("Next after %q: %v", got, err)
		}
		for _, ob := range obs {
			got = append(got, obsString(ob))
		}
	}
	return got
}

// model computes, revision by revision from the store's history, what an
// observer of name that knows the state at from should report up to to:
// one observation at each revision where the leader or its value changed.
func (e *env) model(tb testing.TB, name string, from, to int64) []string {
	tb.Helper()
	var want []string
	state := func(obs string) string { _, s, _ := strings.Cut(obs, ": "); return s }
	prev := e.leaderAt(tb, name, from)
	for rev := from + 1; rev <= to; rev++ {
		cur := e.leaderAt(tb, name, rev)
		if state(cur) != state(prev) {
			want = append(want, cur)
		}
		prev = cur
	}
	return want
}

// leaderAt reads the leader of name at rev by a plain range and shows it
// as obsString would.
func (e *env) leaderAt(tb testing.TB, name string, rev int64) string {
	tb.Helper()
	res, err := e.b.Range(context.Background(), kv.RangeRequest{
		Key: concurrency.Prefix([]byte(name)), End: concurrency.PrefixEnd([]byte(name)),
		Options: kv.RangeOptions{Revision: rev, Limit: 1, SortTarget: kv.SortByCreate, SortOrder: kv.SortAscend},
	})
	if err != nil {
		tb.Fatalf("Range at %d: %v", rev, err)
	}
	if len(res.KVs) == 0 {
		return obsString(concurrency.Observation{Revision: rev})
	}
	return obsString(concurrency.Observation{Revision: rev, Leader: &res.KVs[0]})
}

// churn runs an election through every kind of change, with unrelated
// writes between, and returns the revision after the last.
func (e *env) churn(tb testing.TB, name string) int64 {
	tb.Helper()
	ctx := context.Background()
	a, b, c, d := e.grant(tb, 60), e.grant(tb, 60), e.grant(tb, 60), e.grant(tb, 60)
	la, _ := e.campaign(tb, name, a, "a")
	e.put(tb, "unrelated")
	for i, id := range []int64{b, c} {
		go func() {
			_, _, _ = concurrency.Campaign(ctx, e.b, []byte(name), id, []byte(fmt.Sprint(id)), time.Minute)
		}()
		e.waitKeys(tb, name, 2+i)
	}
	if _, err := concurrency.Proclaim(ctx, e.b, la, []byte("a2")); err != nil {
		tb.Fatal(err)
	}
	if err := e.revoke(a); err != nil { // the leader crashes: b leads
		tb.Fatal(err)
	}
	e.put(tb, "unrelated")
	if err := e.revoke(b); err != nil { // c leads
		tb.Fatal(err)
	}
	if err := e.revoke(c); err != nil { // nobody leads
		tb.Fatal(err)
	}
	e.put(tb, "unrelated")
	_, rev := e.campaign(tb, name, d, "d")
	return rev
}

// TestObserveEveryChange lets an election go through every kind of
// change before the observer reads anything: it still reports each one,
// at its revision, as the history says.
func TestObserveEveryChange(t *testing.T) {
	e := newEnv(t)
	start := e.put(t, "before")
	o, first := e.observe(t, "ob", 0)
	if first.Leader != nil || first.Revision != start {
		t.Fatalf("first observation = %s, want none at %d", obsString(first), start)
	}
	end := e.churn(t, "ob")
	want := e.model(t, "ob", start, end)
	if len(want) != 6 {
		t.Fatalf("the model found %d changes (%q), want 6: the test's churn is wrong", len(want), want)
	}
	got := collect(t, o, len(want))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("observed\n%q\nwant\n%q", got, want)
	}
}

// TestObserveResume resumes after every revision of a churn, as a client
// reconnecting with Last-Event-ID does: each sees exactly the changes
// after it.
func TestObserveResume(t *testing.T) {
	e := newEnv(t)
	start := e.put(t, "before")
	end := e.churn(t, "re")
	for after := start; after <= end; after++ {
		o, first := e.observe(t, "re", after)
		if got, want := obsString(first), e.leaderAt(t, "re", after); got != want {
			t.Errorf("Observe(after %d) starts at %s, want %s", after, got, want)
		}
		want := e.model(t, "re", after, end)
		if got := collect(t, o, len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Observe(after %d) =\n%q\nwant\n%q", after, got, want)
		}
		o.Close()
	}
	if _, _, err := concurrency.Observe(context.Background(), e.b, []byte("re"), end+10); err == nil {
		t.Errorf("Observe(after a future revision) succeeded, want an error")
	}
}

func TestObserveCompacted(t *testing.T) {
	e := newEnv(t)
	e.put(t, "a")
	compactAt := e.put(t, "b")
	if err := e.kv.Compact(context.Background(), compactAt, true); err != nil {
		t.Fatal(err)
	}
	_, _, err := concurrency.Observe(context.Background(), e.b, []byte("x"), compactAt-1)
	var ce *kv.CompactedError
	if !errors.Is(err, kv.ErrCompacted) || !errors.As(err, &ce) || ce.CompactRevision != compactAt {
		t.Fatalf("Observe(after %d) below the compact revision %d = %v, want a kv.CompactedError", compactAt-1, compactAt, err)
	}
	if _, first := e.observe(t, "x", compactAt); first.Leader != nil || first.Revision != compactAt {
		t.Fatalf("Observe(after the compact revision) starts at %s, want none at %d", obsString(first), compactAt)
	}
}

// TestObserveLeaderExpires: the leader's lease expires (in the bubble's
// time), and the observer reports the next leader at the revision of the
// revoke, within the TTL plus one expiry tick.
func TestObserveLeaderExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		granted := time.Now()
		la, _ := e.campaign(t, "exp", e.grant(t, 5), "a")
		o, first := e.observe(t, "exp", 0)
		if first.Leader == nil || !bytes.Equal(first.Leader.Key, la.Key) {
			t.Fatalf("first observation = %s, want %s leading", obsString(first), la.Key)
		}
		lb, _ := e.campaign(t, "exp", e.grant(t, 60), "b")
		got := collect(t, o, 1)
		if waited := time.Since(granted); waited > 5*time.Second+checkInterval {
			t.Errorf("the next leader was observed %v after the first's lease of 5s was granted, want within one tick of it", waited)
		}
		want := e.model(t, "exp", first.Revision, e.kv.Rev())
		if fmt.Sprint(got) != fmt.Sprint(want) || !strings.Contains(got[0], string(lb.Key)) {
			t.Fatalf("observed %q, want %q (%s leading)", got, want, lb.Key)
		}
	})
}
