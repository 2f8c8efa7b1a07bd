package etcd

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/auth"
)

// httpkv's users, roles and enabled flag live in etcd under
// Namespace+"auth/", where no key of the API reaches (the API's keys are
// under Namespace+"kv/"):
//
//	auth/<bucket>/<key>   the record of auth's bucket and key
//	auth/rev              put by every change: its mod revision names the
//	                      state a gateway has read
//	auth/key              the key that signs tokens, drawn by the first
//	                      change
//
// Every gateway holds the state in its auth.Store and follows it with a
// watch of the prefix (authwatch.go), reloading it whole on any change:
// a change through one gateway reaches every gateway's decisions, and
// ends the streams it must, as fast as the watch delivers. A change is
// one etcd txn, guarded by auth/rev's mod revision: if another gateway
// changed the state since this one read it, the txn does nothing, the
// gateway reloads, and auth checks the change again (auth.ErrStale).
// Before a change is checked at all, the gateway makes sure it has read
// the latest state (Sync), so that what one gateway just did is what the
// next change through another is checked against.
//
// Tokens are signed with auth/key (auth.Config.TokenKey): any gateway
// reads the tokens another issued, and nothing per token is stored.

// Keys of the auth prefix that are not records.
const (
	authRevKey   = "rev"
	authTokenKey = "key"
)

// tokenKeyBytes is the size of the token signing key.
const tokenKeyBytes = 32

// authState is what the gateway knows of the auth state in etcd beside
// the auth store's own: which state it read, and the token key.
type authState struct {
	// loadMu serialises loads, so that an older read never replaces a
	// newer one.
	loadMu sync.Mutex
	mu     sync.Mutex // guards the fields below
	// rev is the etcd revision of the last load; mod, auth/rev's mod
	// revision then (0 while it does not exist).
	rev, mod int64
	key      []byte
}

func (a *authState) read() (rev, mod int64, key []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rev, a.mod, a.key
}

// authPath is the etcd key of name under the auth prefix.
func (b *Backend) authPath(name string) string { return b.opts.Namespace + authPrefix + name }

// authKey is the etcd key of a record of auth's.
func (b *Backend) authKey(bucket, key []byte) string {
	return b.authPath(string(bucket) + "/" + string(key))
}

// openAuth makes the auth store, loads its state and starts following it.
func (b *Backend) openAuth(ctx context.Context) error {
	b.auth = auth.New(authShare{b}, authShare{b}, b.opts.Auth)
	if err := b.loadAuth(ctx); err != nil {
		return err
	}
	b.wg.Add(1)
	go b.followAuth()
	return nil
}

// loadAuth reads the whole auth state from etcd and gives it to the auth
// store, unless a newer one was loaded meanwhile.
func (b *Backend) loadAuth(ctx context.Context) error {
	b.authState.loadMu.Lock()
	defer b.authState.loadMu.Unlock()
	var resp *clientv3.GetResponse
	err := b.call(ctx, func(ctx context.Context) error {
		var err error
		resp, err = b.cli.Get(ctx, b.authPath(""), clientv3.WithPrefix())
		return err
	})
	if err != nil {
		return fmt.Errorf("etcd: read the auth state: %w", err)
	}
	b.saw(resp.Header.Revision)
	if rev, _, _ := b.authState.read(); resp.Header.Revision < rev {
		return nil
	}
	prefix := b.authPath("")
	records := map[string][]kvPair{}
	var mod int64
	var key []byte
	for _, p := range resp.Kvs {
		name := string(p.Key[len(prefix):])
		switch name {
		case authRevKey:
			mod = p.ModRevision
		case authTokenKey:
			key = p.Value
		default:
			bucket, k, ok := strings.Cut(name, "/")
			if ok {
				records[bucket] = append(records[bucket], kvPair{key: []byte(k), value: p.Value})
			}
		}
	}
	err = b.auth.Reload(func(bucket []byte, fn func(k, v []byte) error) error {
		for _, r := range records[string(bucket)] {
			if err := fn(r.key, r.value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("etcd: load the auth state: %w", err)
	}
	b.authState.mu.Lock()
	b.authState.rev, b.authState.mod = resp.Header.Revision, mod
	if key != nil {
		b.authState.key = key
	}
	b.authState.mu.Unlock()
	return nil
}

type kvPair struct{ key, value []byte }

// syncAuth loads the auth state if another gateway changed it since this
// one read it: one read of auth/rev.
func (b *Backend) syncAuth() error {
	_, mod, _ := b.authState.read()
	var cur int64
	err := b.call(b.ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.authPath(authRevKey))
		if err == nil && len(resp.Kvs) == 1 {
			cur = resp.Kvs[0].ModRevision
		}
		return err
	})
	if err != nil || cur == mod {
		return err
	}
	return b.loadAuth(b.ctx)
}

// tokenKey returns the key that signs tokens. The first change of auth
// draws it; a deployment whose auth state came without one (written by
// an older gateway) gets one here.
func (b *Backend) tokenKey() ([]byte, error) {
	if _, _, key := b.authState.read(); key != nil {
		return key, nil
	}
	err := b.call(b.ctx, func(ctx context.Context) error {
		_, err := b.cli.Do(ctx, b.drawTokenKey())
		return err
	})
	if err == nil {
		err = b.loadAuth(b.ctx)
	}
	if _, _, key := b.authState.read(); key != nil {
		return key, nil
	}
	return nil, errors.Join(errors.New("etcd: no token key"), err)
}

// drawTokenKey is the op that puts a new token key if there is none.
func (b *Backend) drawTokenKey() clientv3.Op {
	key := make([]byte, tokenKeyBytes)
	_, _ = rand.Read(key) // never fails: it crashes the process instead
	path := b.authPath(authTokenKey)
	return clientv3.OpTxn(
		[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(path), "=", 0)},
		[]clientv3.Op{clientv3.OpPut(path, string(key))}, nil)
}

// writeAuth runs fn on a bucket that collects its writes, then commits
// them as one etcd txn guarded by auth/rev (and drawing the token key if
// there is none yet). It runs what fn staged once the txn has succeeded
// (or the undos if it has not), then loads the state from etcd, which
// holds the change and whatever came before it. A txn whose guard fails
// changes nothing: the state is loaded, and auth.ErrStale returned.
func (b *Backend) writeAuth(fn func(auth.Bucket) error) error {
	t := &authTxn{b: b}
	if err := fn(t); err != nil {
		t.finish(false)
		return err
	}
	_, mod, key := b.authState.read()
	revKey := b.authPath(authRevKey)
	ops := append(t.ops, clientv3.OpPut(revKey, ""))
	if key == nil {
		ops = append(ops, b.drawTokenKey())
	}
	var committed bool
	err := b.call(b.ctx, func(ctx context.Context) error {
		resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(revKey), "=", mod)).Then(ops...).Commit()
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		committed = resp.Succeeded
		return nil
	})
	t.finish(err == nil && committed)
	if err != nil {
		return err
	}
	if lerr := b.loadAuth(b.ctx); lerr != nil {
		b.onError(lerr) // the watch loads it again
	}
	if !committed {
		return auth.ErrStale
	}
	return nil
}

// authTxn is one change of auth's state, as etcd ops.
type authTxn struct {
	b      *Backend
	ops    []clientv3.Op
	staged []struct{ apply, undo func() }
}

func (t *authTxn) UnsafePut(bucket, key, value []byte) error {
	t.ops = append(t.ops, clientv3.OpPut(t.b.authKey(bucket, key), string(value)))
	return nil
}

func (t *authTxn) UnsafeDelete(bucket, key []byte) error {
	t.ops = append(t.ops, clientv3.OpDelete(t.b.authKey(bucket, key)))
	return nil
}

func (t *authTxn) Stage(apply, undo func()) {
	t.staged = append(t.staged, struct{ apply, undo func() }{apply, undo})
}

// finish runs the staged applies when the txn committed, the undos when
// it did not.
func (t *authTxn) finish(committed bool) {
	for _, s := range t.staged {
		f := s.undo
		if committed {
			f = s.apply
		}
		if f != nil {
			f()
		}
	}
}

// authShare is the gateway as the auth store takes it: where its state is
// written, and what the gateways of the deployment share.
type authShare struct{ b *Backend }

func (a authShare) Write(fn func(auth.Bucket) error) error { return a.b.writeAuth(fn) }
func (a authShare) Sync() error                            { return a.b.syncAuth() }
func (a authShare) TokenKey() ([]byte, error)              { return a.b.tokenKey() }
