package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// TestRevokeRaceWithRegrant: while /a/ revokes its lease X from several
// requests at once, /b/ grants X again the moment it is free and puts a
// key on it. Only /a/'s lease is revoked: /b/'s key and lease outlive
// every revoke of /a/'s. The last rounds revoke leases of etcd's least
// TTL, which have too little time left for a revoke to be certain to
// come before their expiry: they are left to expire, and the revoke
// answers once they have. Before, each revoke checked the lease's record,
// then revoked the ID as a second request: the revokes that checked
// before the first revoked X went on to revoke /b/'s X, and etcd deleted
// /b/'s key.
func TestRevokeRaceWithRegrant(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	a, b := openGateway(t, c, "/a/"), openGateway(t, c, "/b/")
	ctx := context.Background()
	const rounds, shortRounds, revokers = 40, 3, 8
	for round := range rounds + shortRounds {
		id, ttl := int64(1000+round), int64(600)
		if round >= rounds {
			ttl = 1 // etcd's least instead
		}
		if _, err := a.Grant(ctx, id, ttl); err != nil {
			t.Fatalf("round %d: /a/ Grant(%d) = %v", round, id, err)
		}
		if _, err := a.Put(ctx, kv.PutRequest{Key: []byte("a"), Value: []byte("v"), Lease: id}, nil); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		regranted := make(chan error, 1)
		go func() {
			<-start
			deadline := time.Now().Add(recvTimeout)
			for {
				_, err := b.Grant(ctx, id, 600)
				if errors.Is(err, kv.ErrLeaseExists) && time.Now().Before(deadline) {
					continue
				}
				if err == nil {
					_, err = b.Put(ctx, kv.PutRequest{Key: []byte("b"), Value: []byte(fmt.Sprint(round)), Lease: id}, nil)
				}
				regranted <- err
				return
			}
		}()
		var wg sync.WaitGroup
		revoked := make(chan error, revokers)
		for range revokers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := a.Revoke(ctx, id, nil)
				revoked <- err
			}()
		}
		close(start)
		wg.Wait()
		close(revoked)
		if err := <-regranted; err != nil {
			t.Fatalf("round %d: /b/ granting %d again and putting b on it = %v", round, id, err)
		}
		ok := 0
		for err := range revoked {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, kv.ErrLeaseNotFound):
				t.Errorf("round %d: /a/ Revoke(%d) = %v, want nil or ErrLeaseNotFound", round, id, err)
			}
		}
		if ok != 1 {
			t.Errorf("round %d: %d of /a/'s %d revokes of %d succeeded, want 1", round, ok, revokers, id)
		}
		if got, err := a.Range(ctx, kv.RangeRequest{Key: []byte("a")}); err != nil || len(got.KVs) != 0 {
			t.Errorf("round %d: /a/'s key a after its lease was revoked = %+v, %v; want it gone", round, got.KVs, err)
		}
		res, err := b.Range(ctx, kv.RangeRequest{Key: []byte("b")})
		if err != nil || len(res.KVs) != 1 || res.KVs[0].Lease != id || string(res.KVs[0].Value) != fmt.Sprint(round) {
			t.Fatalf("round %d: after /a/ revoked its lease %d while /b/ granted it again: /b/'s key b = %+v, %v; want it on lease %d", round, id, res.KVs, err, id)
		}
		if _, err := b.Revoke(ctx, id, nil); err != nil {
			t.Fatalf("round %d: /b/ Revoke(%d) = %v", round, id, err)
		}
	}
}
