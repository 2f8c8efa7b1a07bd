package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/auth"
)

// httpkv's users, roles and enabled flag live in etcd under
// Namespace+"auth/": the record of key K of auth's bucket B is the etcd
// key Namespace+"auth/"+B+"/"+K. No key of the API reaches there (the
// API's keys are under Namespace+"kv/"). Each change of auth is one etcd
// txn; the auth store changes its memory once that txn has succeeded.

// authKey is the etcd key of a record of auth's.
func (b *Backend) authKey(bucket, key []byte) string {
	return b.opts.Namespace + authPrefix + string(bucket) + "/" + string(key)
}

// openAuth makes the auth store and loads its state from etcd.
func (b *Backend) openAuth(ctx context.Context) error {
	cfg := b.opts.Auth
	cfg.Write = b.writeAuth
	b.auth = auth.New(cfg)
	return b.auth.Restore(func(bucket []byte, fn func(k, v []byte) error) error {
		prefix := b.authKey(bucket, nil)
		var kvs []*kvPair
		err := b.call(ctx, func(ctx context.Context) error {
			resp, err := b.cli.Get(ctx, prefix, clientv3.WithPrefix())
			if err != nil {
				return err
			}
			for _, p := range resp.Kvs {
				kvs = append(kvs, &kvPair{key: p.Key[len(prefix):], value: p.Value})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("etcd: read auth's %s: %w", bucket, err)
		}
		for _, p := range kvs {
			if err := fn(p.key, p.value); err != nil {
				return err
			}
		}
		return nil
	})
}

type kvPair struct{ key, value []byte }

// writeAuth runs fn on a bucket that collects its writes, then commits
// them as one etcd txn, and runs what fn staged once it has succeeded (or
// the undos if it has not).
func (b *Backend) writeAuth(fn func(auth.Bucket) error) error {
	t := &authTxn{b: b}
	if err := fn(t); err != nil {
		t.finish(false)
		return err
	}
	err := b.call(b.ctx, func(ctx context.Context) error {
		resp, err := b.cli.Txn(ctx).Then(t.ops...).Commit()
		if err == nil {
			b.saw(resp.Header.Revision)
		}
		return err
	})
	t.finish(err == nil)
	return err
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
