package etcd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// waitServing waits until the gateway's prober says etcd serves (want
// true) or does not, and returns why not.
func waitServing(tb testing.TB, b *Backend, want bool) error {
	tb.Helper()
	for deadline := time.Now().Add(recvTimeout); ; time.Sleep(20 * time.Millisecond) {
		_, err := b.avail.serving()
		if (err == nil) == want {
			return err
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the prober still says %v, want serving %v", err, want)
		}
	}
}

// TestProberStopsWaits: with its cluster gone, a gateway stops waiting on
// etcd: a request in flight when the members die ends with why, and the
// next ones fail at once with it; once a member answers again, requests
// are served. The request timeout is a minute, so that an answer that
// came from it would say so, not the prober's reason.
func TestProberStopsWaits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kill []int // members to kill, of 3
		want string
	}{
		{"every member", []int{0, 1, 2}, "3 unreachable"},
		{"a quorum", []int{0, 1}, "2 unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := etcdtest.StartCluster(t, 3)
			b := openGateway(t, c, "/probe/", func(o *Options) { o.RequestTimeout = time.Minute })
			put(t, b, "k", "before")
			waitServing(t, b, true)
			ctx := context.Background()
			for _, i := range tc.kill {
				c.Kill(i)
			}
			// A put sent now waits on etcd until the prober tells, unless
			// its member's connection broke under it first: either way,
			// not for the request timeout.
			_, err := b.Put(ctx, kv.PutRequest{Key: []byte("k"), Value: []byte("during")}, nil)
			if !errors.Is(err, kv.ErrUnavailable) || !strings.HasPrefix(err.Error(), "etcd cannot serve: ") {
				t.Fatalf("Put while %s died = %v, want unavailable saying why etcd cannot serve", tc.name, err)
			}
			why := waitServing(t, b, false)
			if !strings.Contains(why.Error(), tc.want) {
				t.Errorf("the prober says %q, want it to say %q", why, tc.want)
			}
			_, err = b.Range(ctx, kv.RangeRequest{Key: []byte("k")})
			if !errors.Is(err, kv.ErrUnavailable) || err.Error() != why.Error() {
				t.Errorf("Range while etcd cannot serve = %v, want %v", err, why)
			}
			if _, err := b.Alarms(ctx); err == nil || err.Error() != why.Error() {
				t.Errorf("Alarms (what /health reads) while etcd cannot serve = %v, want %v", err, why)
			}
			c.RestartAll(tc.kill...)
			waitServing(t, b, true)
			if res, err := b.Range(ctx, kv.RangeRequest{Key: []byte("k")}); err != nil || len(res.KVs) != 1 {
				t.Fatalf("Range once etcd serves again = %+v, %v", res, err)
			}
		})
	}
}

// TestProberSlowIsNotGone: members that only failed to answer a probe in
// time count as serving while etcd answered the gateway within
// heardWindow, and as not serving once it has been quiet longer; members
// unreachable or without a leader count as not serving whatever was
// heard.
func TestProberSlowIsNotGone(t *testing.T) {
	t.Parallel()
	var heard time.Time
	p := &prober{heard: func() time.Time { return heard }}
	members := func(outcomes ...outcome) {
		p.members = nil
		for _, o := range outcomes {
			p.members = append(p.members, &memberProbe{endpoint: "m", last: o, err: errors.New("connection refused")})
		}
	}
	members(silent, silent, silent)
	heard = time.Now()
	if err := p.judge(); err != nil {
		t.Fatalf("silent members of a cluster that just answered: %v, want serving", err)
	}
	heard = time.Now().Add(-2 * heardWindow)
	if err := p.judge(); err == nil || !strings.Contains(err.Error(), "3 did not answer within") {
		t.Fatalf("silent members of a cluster quiet for %v: %v, want not serving, saying so", 2*heardWindow, err)
	}
	heard = time.Now()
	members(unreachable, leaderless, leaderless)
	if err := p.judge(); err == nil || !strings.Contains(err.Error(), "2 without a leader") {
		t.Fatalf("members unreachable and leaderless: %v, want not serving whatever was heard", err)
	}
	members(silent, answered, unreachable)
	heard = time.Time{}
	if err := p.judge(); err != nil {
		t.Fatalf("a member answered: %v, want serving", err)
	}
}

// TestProbeNeedsNoLogin: a member with etcd's auth on is probed without
// logging in (its "user name is empty" is an answer): logging in costs the
// member a bcrypt hash, which on a loaded machine took longer than the
// probe may wait, and the gateway then refused every request with "1
// unreachable (context deadline exceeded)". Credentials the member would
// refuse do not make it unreachable either.
func TestProbeNeedsNoLogin(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1, etcdtest.WithAuth())
	for _, creds := range [][2]string{{"", ""}, {"root", "not the password"}} {
		m := &memberProbe{endpoint: c.Endpoints()[0]}
		got, err := m.probe(context.Background(), Options{Username: creds[0], Password: creds[1]}, "/probe/none")
		if m.cli != nil {
			m.cli.Close()
		}
		if got != answered || err != nil {
			t.Fatalf("probe with credentials %q = %v, %v; want answered", creds, got, err)
		}
	}
}
