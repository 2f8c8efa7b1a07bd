package concurrency_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
)

func (e *env) campaign(tb testing.TB, name string, lease int64, value string) (concurrency.LeaderKey, int64) {
	tb.Helper()
	l, rev, err := concurrency.Campaign(context.Background(), e.b, []byte(name), lease, []byte(value), time.Minute)
	if err != nil {
		tb.Fatalf("Campaign(%s, %x, %q): %v", name, lease, value, err)
	}
	return l, rev
}

// leader returns the election's leader, failing if there is none.
func (e *env) leader(tb testing.TB, name string) kv.KeyValue {
	tb.Helper()
	l, _, err := concurrency.Leader(context.Background(), e.b, []byte(name))
	if err != nil {
		tb.Fatalf("Leader(%s): %v", name, err)
	}
	return l
}

func TestElection(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, _, err := concurrency.Leader(ctx, e.b, []byte("db")); !errors.Is(err, concurrency.ErrNoLeader) {
		t.Fatalf("Leader of an empty election = %v, want ErrNoLeader", err)
	}
	a := e.grant(t, 60)
	la, rev := e.campaign(t, "db", a, "host-a")
	if want := fmt.Sprintf("db/%x", a); string(la.Key) != want || la.Lease != a || la.Revision != rev || string(la.Name) != "db" {
		t.Fatalf("Campaign = %+v at %d, want key %s, lease %x, created at %d", la, rev, want, a, rev)
	}
	if kv := e.leader(t, "db"); !bytes.Equal(kv.Key, la.Key) || string(kv.Value) != "host-a" {
		t.Fatalf("Leader = %+v, want %s = host-a", kv, la.Key)
	}

	b := e.grant(t, 60)
	won := async(func() (concurrency.LeaderKey, error) {
		l, _, err := concurrency.Campaign(ctx, e.b, []byte("db"), b, []byte("host-b"), time.Minute)
		return l, err
	})
	e.waitKeys(t, "db", 2)
	if _, err := concurrency.Proclaim(ctx, e.b, la, []byte("host-a2")); err != nil {
		t.Fatalf("Proclaim by the leader: %v", err)
	}
	if kv := e.leader(t, "db"); string(kv.Value) != "host-a2" {
		t.Fatalf("Leader after Proclaim = %+v, want host-a2", kv)
	}
	// Campaigning again while leading proclaims the new value at once.
	if again, _ := e.campaign(t, "db", a, "host-a3"); again.Revision != la.Revision {
		t.Fatalf("Campaign again by the leader = %+v, want the same candidacy %+v", again, la)
	}
	if kv := e.leader(t, "db"); string(kv.Value) != "host-a3" {
		t.Fatalf("Leader after campaigning again = %+v, want host-a3", kv)
	}

	resigned, err := concurrency.Resign(ctx, e.b, la)
	if err != nil {
		t.Fatalf("Resign by the leader: %v", err)
	}
	r := <-won
	if r.err != nil {
		t.Fatalf("Campaign of the second candidate: %v", r.err)
	}
	lb := r.v
	if kv := e.leader(t, "db"); !bytes.Equal(kv.Key, lb.Key) || string(kv.Value) != "host-b" || kv.CreateRevision >= resigned {
		t.Fatalf("Leader after the leader resigned at %d = %+v, want %s = host-b", resigned, kv, lb.Key)
	}
	// The resigned candidacy may neither proclaim nor resign again.
	if _, err := concurrency.Proclaim(ctx, e.b, la, []byte("x")); !errors.Is(err, concurrency.ErrNotLeader) {
		t.Errorf("Proclaim after resigning = %v, want ErrNotLeader", err)
	}
	if _, err := concurrency.Resign(ctx, e.b, la); !errors.Is(err, concurrency.ErrNotLeader) {
		t.Errorf("Resign after resigning = %v, want ErrNotLeader", err)
	}
	// Nor may a candidacy presented with another lease or revision.
	for _, bad := range []concurrency.LeaderKey{
		{Name: lb.Name, Key: lb.Key, Revision: lb.Revision, Lease: a},
		{Name: lb.Name, Key: lb.Key, Revision: lb.Revision + 1, Lease: b},
	} {
		if _, err := concurrency.Proclaim(ctx, e.b, bad, []byte("x")); !errors.Is(err, concurrency.ErrNotLeader) {
			t.Errorf("Proclaim(%+v) = %v, want ErrNotLeader", bad, err)
		}
	}
	if kv := e.leader(t, "db"); string(kv.Value) != "host-b" {
		t.Errorf("Leader after refused proclaims = %+v, want host-b unchanged", kv)
	}
}

func TestCampaignTimeout(t *testing.T) {
	e := newEnv(t)
	leader, _ := e.campaign(t, "c", e.grant(t, 60), "a")
	_, _, err := concurrency.Campaign(context.Background(), e.b, []byte("c"), e.grant(t, 60), []byte("b"), 10*time.Millisecond)
	if !errors.Is(err, concurrency.ErrTimeout) {
		t.Fatalf("Campaign while another leads, 10ms = %v, want ErrTimeout", err)
	}
	if kvs := e.keys(t, "c"); len(kvs) != 1 || !bytes.Equal(kvs[0].Key, leader.Key) {
		t.Fatalf("after a campaign timed out: keys %+v, want the leader's alone", kvs)
	}
}

func TestLeaderKeyInvalid(t *testing.T) {
	e := newEnv(t)
	for _, l := range []concurrency.LeaderKey{
		{Name: []byte("e"), Key: []byte("other/1"), Revision: 2, Lease: 1},
		{Name: []byte("e"), Key: []byte("e/1"), Revision: 0, Lease: 1},
		{Name: []byte("e"), Key: []byte("e/1"), Revision: 2, Lease: 0},
		{Key: []byte("e/1"), Revision: 2, Lease: 1},
	} {
		if _, err := concurrency.Resign(context.Background(), e.b, l); !errors.Is(err, concurrency.ErrInvalid) {
			t.Errorf("Resign(%+v) = %v, want ErrInvalid", l, err)
		}
	}
}

// TestOnlyTheLeaderProclaimsOrResigns: a candidate that waits presents
// its own candidacy (the key, create revision and lease it holds) to
// proclaim and to resign: both are refused with ErrNotLeader and change
// nothing, and once it leads, its value is the one it campaigned with.
func TestOnlyTheLeaderProclaimsOrResigns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	la, _ := e.campaign(t, "office", e.grant(t, 60), "first")
	waiter := e.grant(t, 60)
	won := async(func() (concurrency.LeaderKey, error) {
		l, _, err := concurrency.Campaign(ctx, e.b, []byte("office"), waiter, []byte("second"), time.Minute)
		return l, err
	})
	e.waitKeys(t, "office", 2)
	kvs := e.keys(t, "office")
	w := concurrency.LeaderKey{Name: []byte("office"), Key: kvs[1].Key, Revision: kvs[1].CreateRevision, Lease: waiter}
	if _, err := concurrency.Proclaim(ctx, e.b, w, []byte("usurper")); !errors.Is(err, concurrency.ErrNotLeader) {
		t.Errorf("Proclaim by a waiting candidate = %v, want ErrNotLeader", err)
	}
	if _, err := concurrency.Resign(ctx, e.b, w); !errors.Is(err, concurrency.ErrNotLeader) {
		t.Errorf("Resign by a waiting candidate = %v, want ErrNotLeader", err)
	}
	if after := e.keys(t, "office"); len(after) != 2 || string(after[1].Value) != "second" || after[1].ModRevision != kvs[1].ModRevision {
		t.Fatalf("after the waiting candidate's refused proclaim and resign: keys %s, want %s unchanged", keysString(after), keysString(kvs))
	}
	if _, err := concurrency.Resign(ctx, e.b, la); err != nil {
		t.Fatalf("Resign by the leader: %v", err)
	}
	r := <-won
	if r.err != nil || r.v.Revision != w.Revision {
		t.Fatalf("the waiting candidate's campaign = %+v, %v; want it leading as %+v", r.v, r.err, w)
	}
	if kv := e.leader(t, "office"); !bytes.Equal(kv.Key, w.Key) || string(kv.Value) != "second" {
		t.Fatalf("Leader once the waiting candidate leads = %s=%s, want %s=second", kv.Key, kv.Value, w.Key)
	}
	// Leading now, the same candidacy proclaims and resigns.
	if _, err := concurrency.Proclaim(ctx, e.b, w, []byte("second-b")); err != nil {
		t.Fatalf("Proclaim by the new leader: %v", err)
	}
	if _, err := concurrency.Resign(ctx, e.b, w); err != nil {
		t.Fatalf("Resign by the new leader: %v", err)
	}
}

// keysString shows keys as key=value@mod revision.
func keysString(kvs []kv.KeyValue) string {
	var b strings.Builder
	for _, kv := range kvs {
		fmt.Fprintf(&b, "%s=%s@%d ", kv.Key, kv.Value, kv.ModRevision)
	}
	return b.String()
}
