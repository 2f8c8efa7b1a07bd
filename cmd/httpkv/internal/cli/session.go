package cli

import (
	"context"
	"time"

	"github.com/httpkv/httpkv/client"
)

// session is a lease kept alive for as long as a lock or a candidacy
// holds it. Its goroutine, which renews the lease, is stopped by close.
type session struct {
	api  *client.Client
	id   int64
	stop context.CancelFunc
	done chan struct{} // closed when the lease is lost, or close stopped it
	err  error         // why the renewals ended; read after done
}

// startSession grants a lease of ttl seconds and keeps it alive.
func startSession(ctx context.Context, api *client.Client, ttl int64) (*session, error) {
	l, err := api.Grant(ctx, ttl, 0)
	if err != nil {
		return nil, err
	}
	kctx, stop := context.WithCancel(context.Background())
	s := &session{api: api, id: l.ID, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = keepAlive(kctx, api, l.ID, l.TTL, nil)
	}()
	return s, nil
}

// lost is closed when the lease is lost: what it held is no longer held.
func (s *session) lost() <-chan struct{} { return s.done }

// releaseTimeout bounds the revoke that ends a session, which runs
// after Ctrl-C too.
const releaseTimeout = 10 * time.Second

// close stops the renewals and revokes the lease, which deletes the
// keys that held the lock or the candidacy at once, rather than when
// the lease would expire.
func (s *session) close() error {
	s.stop()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_, err := s.api.Revoke(ctx, s.id)
	if client.HasCode(err, client.CodeLeaseNotFound) {
		return nil
	}
	return err
}
