package bench

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// grpcServer talks to etcd's gRPC API through clientv3, etcd's own client,
// as a Go service would: --grpc-conns clients, each one HTTP/2 connection
// that requests and watches are multiplexed on. Requests take the clients
// in turn; every watch of one client shares one gRPC watch stream, so
// --grpc-conns=1 serves all watchers over one stream on one connection.
type grpcServer struct {
	clients []*clientv3.Client
	next    atomic.Uint64
}

func newGRPCServer(cfg config) (*grpcServer, error) {
	s := &grpcServer{}
	for range cfg.grpcConns {
		c, err := clientv3.New(clientv3.Config{
			Endpoints:   []string{cfg.target},
			DialTimeout: 10 * time.Second,
			// Its logger would report each failed attempt on stderr;
			// the report counts them instead.
			Logger: zap.NewNop(),
		})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("etcd gRPC client of %s: %w", cfg.target, err)
		}
		s.clients = append(s.clients, c)
	}
	return s, nil
}

// client returns the next client in turn.
func (s *grpcServer) client() *clientv3.Client {
	return s.clients[(s.next.Add(1)-1)%uint64(len(s.clients))]
}

func (s *grpcServer) Close() error {
	for _, c := range s.clients {
		c.Close()
	}
	return nil
}

func (s *grpcServer) Put(ctx context.Context, key string, value []byte) (int64, error) {
	resp, err := s.client().Put(ctx, key, string(value))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

func (s *grpcServer) Get(ctx context.Context, key string) error {
	_, err := s.client().Get(ctx, key)
	return err
}

func (s *grpcServer) Range(ctx context.Context, prefix string, limit int, _ bool) (int, error) {
	resp, err := s.client().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(int64(limit)))
	if err != nil {
		return 0, err
	}
	return int(resp.Count), nil
}

func (s *grpcServer) CompareAndPut(ctx context.Context, key string, modRev int64, value []byte) (int64, bool, error) {
	resp, err := s.client().Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return 0, false, err
	}
	return resp.Header.Revision, resp.Succeeded, nil
}

// Watch reads one watch of the client's shared watch stream. A response
// that ends the watch (compacted, canceled) ends it with its error.
func (s *grpcServer) Watch(ctx context.Context, prefix string, from int64, w *watcher, created func()) error {
	for resp := range s.client().Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("%w: %v", errStreamEnded, err)
		}
		if resp.Created {
			created()
			continue
		}
		now := time.Now().UnixNano()
		n := 0
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			n++
			if sent, ok := parseStamp(ev.Kv.Value); ok {
				w.hist.Record(time.Duration(now - sent))
			}
		}
		w.count(now, n)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return io.EOF // the client closed the watch
}
