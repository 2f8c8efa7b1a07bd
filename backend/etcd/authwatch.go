package etcd

import (
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// followAuth watches the auth prefix and loads the auth state again on
// every change, whichever gateway made it, until the gateway closes. A
// broken watch starts again after loading the state afresh, from the
// revision that load read: nothing in between is missed.
func (b *Backend) followAuth() {
	defer b.wg.Done()
	backoff := upstreamMinBackoff
	for b.ctx.Err() == nil {
		err := b.watchAuth()
		if b.ctx.Err() != nil {
			return
		}
		b.onError(fmt.Errorf("etcd: the watch of the auth state broke, resuming: %w", err))
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, upstreamMaxBackoff)
		if err := b.loadAuth(b.ctx); err != nil {
			b.onError(err)
		}
	}
}

// watchAuth watches the auth prefix from the revision after the last
// load, loading the state on each answer with events.
func (b *Backend) watchAuth() error {
	rev, _, _ := b.authState.read()
	ctx := clientv3.WithRequireLeader(b.ownStream(b.ctx))
	for resp := range b.cli.Watch(ctx, b.authPath(""), clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if err := b.watchFailure(&resp); err != nil {
			return err
		}
		if len(resp.Events) > 0 {
			if err := b.loadAuth(b.ctx); err != nil {
				return err
			}
		}
	}
	return b.ctx.Err()
}
