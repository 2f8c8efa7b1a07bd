package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// contender takes the lock, waiting as long as ctx lasts, and returns how
// to give it back.
type contender func(ctx context.Context) (release func() error, err error)

// BenchmarkLockHandover measures the hand-over of one lock: from the
// moment a holder starts its release to the moment the next holder has
// its answer, with 1 and 50 waiters queued, for httpkv's
// POST /v1/locks/{name}, for etcd's v3lock behind its HTTP/JSON gateway
// (the same service over the same kind of wire), and for clientv3's
// concurrency.Mutex over gRPC (what etcd's v3lock runs inside etcd),
// against the same run's etcd. Run it with
//
//	go test ./tests/ -run '^$' -bench LockHandover -benchtime 2000x
//
// The metrics: us/handover (mean), p50-us and p99-us.
func BenchmarkLockHandover(b *testing.B) {
	s := e2e.StartServer(b)
	c := etcdtest.StartCluster(b, 1)
	cli := c.Client(b)
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	b.Cleanup(httpClient.CloseIdleConnections)

	// Every run locks a name of its own: a contender that gives up just
	// as its turn comes may leave its key held until its lease expires.
	var runs atomic.Int64
	newName := func() string { return fmt.Sprintf("bench-%d", runs.Add(1)) }
	for _, waiters := range []int{1, 50} {
		b.Run(fmt.Sprintf("httpkv/waiters=%d", waiters), func(b *testing.B) {
			name := newName()
			benchHandover(b, waiters+1, func(int) contender { return httpkvContender(b, s, httpClient, name) })
		})
		b.Run(fmt.Sprintf("etcd-v3lock-gateway/waiters=%d", waiters), func(b *testing.B) {
			name := newName()
			benchHandover(b, waiters+1, func(int) contender { return gatewayContender(b, c.Member(0).ClientURL, httpClient, name) })
		})
		b.Run(fmt.Sprintf("etcd-mutex-grpc/waiters=%d", waiters), func(b *testing.B) {
			name := newName()
			benchHandover(b, waiters+1, func(int) contender {
				sess, err := concurrency.NewSession(cli, concurrency.WithTTL(600))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { sess.Close() })
				m := concurrency.NewMutex(sess, name)
				return func(ctx context.Context) (func() error, error) {
					if err := m.Lock(ctx); err != nil {
						return nil, err
					}
					return func() error {
						ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
						defer cancel()
						return m.Unlock(ctx)
					}, nil
				}
			})
		})
	}
}

// benchHandover runs n contenders taking one lock in turn until b.N
// hand-overs and reports their latency.
func benchHandover(b *testing.B, n int, newContender func(i int) contender) {
	cs := make([]contender, n)
	for i := range cs {
		cs[i] = newContender(i)
	}
	var (
		released atomic.Int64 // unix ns when the holder began to release
		count    atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ResetTimer()
	for _, take := range cs {
		wg.Go(func() {
			for ctx.Err() == nil {
				// A lock that does not come within a minute is a failure,
				// not a slow hand-over.
				tctx, tcancel := context.WithTimeout(ctx, time.Minute)
				release, err := take(tctx)
				tcancel()
				if err != nil {
					if ctx.Err() == nil {
						b.Errorf("lock: %v", err)
						cancel()
					}
					return
				}
				if prev := released.Load(); prev != 0 {
					d := time.Since(time.Unix(0, prev))
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
					if count.Add(1) >= int64(b.N) {
						cancel()
					}
				}
				released.Store(time.Now().UnixNano())
				if err := release(); err != nil {
					b.Errorf("release: %v", err)
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(sum/time.Duration(len(lat))), "us/handover")
	b.ReportMetric(us(lat[len(lat)/2]), "p50-us")
	b.ReportMetric(us(lat[len(lat)*99/100]), "p99-us")
	b.ReportMetric(0, "ns/op")
}

// releaseTimeout bounds a release.
const releaseTimeout = 30 * time.Second

// postJSON posts body to url and decodes a 200 answer into out.
func postJSON(ctx context.Context, client *http.Client, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("%s %s = %d %s", method, url, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// httpkvContender holds a lease of its own and locks name through the API.
func httpkvContender(b *testing.B, s *e2e.Server, hc *http.Client, name string) contender {
	var l client.LeaseResponse
	if err := postJSON(context.Background(), hc, "POST", s.URL+"/v1/leases", map[string]int{"ttl": 600}, &l); err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context) (func() error, error) {
		var held client.LockResponse
		if err := postJSON(ctx, hc, "POST", s.URL+"/v1/locks/"+name+"?timeout=5m", map[string]int64{"lease": l.Id}, &held); err != nil {
			return nil, err
		}
		return func() error {
			ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			defer cancel()
			return postJSON(ctx, hc, "DELETE", s.URL+"/v1/locks/"+name+"?key="+e2e.Deref(held.Key), nil, nil)
		}, nil
	}
}

// gatewayContender holds a lease of its own and locks name through
// etcd's v3lock service behind its HTTP/JSON gateway: bytes travel in
// base64, int64 as strings.
func gatewayContender(b *testing.B, url string, client *http.Client, name string) contender {
	var l struct {
		ID string `json:"ID"`
	}
	if err := postJSON(context.Background(), client, "POST", url+"/v3/lease/grant", map[string]int{"TTL": 600}, &l); err != nil {
		b.Fatal(err)
	}
	lockBody := map[string]string{"name": base64.StdEncoding.EncodeToString([]byte(name)), "lease": l.ID}
	return func(ctx context.Context) (func() error, error) {
		var held struct {
			Key string `json:"key"`
		}
		if err := postJSON(ctx, client, "POST", url+"/v3/lock/lock", lockBody, &held); err != nil {
			return nil, err
		}
		return func() error {
			ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			defer cancel()
			return postJSON(ctx, client, "POST", url+"/v3/lock/unlock", map[string]string{"key": held.Key}, nil)
		}, nil
	}
}
