package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/httpkv/httpkv/kv"
)

// A gateway knows at every moment whether etcd serves, so that no request
// waits on a cluster that cannot answer it: a prober asks every member,
// every probeInterval, for a read under etcd's require-leader check,
// which a member answers only while it has a leader. While one answers,
// etcd serves, and a request may take up to Options.RequestTimeout. When
// none does, etcd does not serve: requests fail at once with why (503
// unavailable, "etcd cannot serve: of 3 members, 2 unreachable (...), 1
// without a leader (no quorum)"), and those waiting on etcd stop
// waiting. So a request answers within probeInterval + probeTimeout of
// etcd becoming unreachable, and of its members noticing they lost their
// quorum (etcd's --election-timeout, 1 s by default, to twice that: a
// leader steps down, and a follower stops following, once it has not
// heard from a quorum that long), /health included; and the gateway
// serves again within probeInterval of a member answering.
//
// A member that says nothing within probeTimeout is weaker evidence than
// one unreachable or without a leader: a member starved of CPU, or busy
// applying a burst of writes, is silent too. So when no member answered
// but some were only silent, etcd still counts as serving while it
// answered one of the gateway's own requests within the last
// heardWindow: a cluster that has stopped (its members stopped by a
// signal, or cut off without their connections failing) is then still
// found within 2 probeTimeout + probeInterval - heardWindow (2 s) of its
// last answer, while one that is slow is not taken for one that is gone.
//
// Each member is probed through a client of its own, with no retries and
// without waiting for a connection that failed: a member down or cut off
// answers "unreachable" at once, one without a leader "no leader" at once,
// and only one that says nothing costs the probe its timeout. The read is
// serializable, served by the member from its own state: a linearizable
// one waits for the member to apply what the cluster committed, which
// under a burst of large writes takes longer than the probe may wait,
// and would count a busy cluster as a silent one.

// Timing of the probes; see above.
const (
	probeInterval = 250 * time.Millisecond
	probeTimeout  = time.Second
	heardWindow   = probeTimeout - probeInterval
)

// reconnectParams make the gateway's connections to etcd try again
// within a second of a member coming back, however long it was away
// (gRPC's own backoff grows to two minutes).
var reconnectParams = grpc.WithConnectParams(grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: 5 * time.Second,
})

// outcome is what one member answered a probe.
type outcome int

const (
	answered outcome = iota
	unreachable
	leaderless
	silent // did not answer within probeTimeout
)

// memberProbe probes one member.
type memberProbe struct {
	endpoint string
	cli      *clientv3.Client // nil until it could connect
	last     outcome          // the last probe's outcome, for memberSizes
	err      error            // why the member was unreachable
}

// prober tracks whether etcd serves (see above). run owns members.
type prober struct {
	opts    Options
	key     string // the key probes read, which nothing writes
	members []*memberProbe
	conns   []*grpc.ClientConn // the gateway's own, reconnected at once while etcd is down
	// heard is when etcd last answered a request of the gateway; nil
	// when unknown.
	heard func() time.Time

	mu sync.Mutex
	// down is nil while etcd serves, else why it does not.
	down error
	// alive ends, with down as its cause, when etcd stops serving; a new
	// one begins when it serves again.
	alive context.Context
	kill  context.CancelCauseFunc
	// reachable are the endpoints that answered the last probe.
	reachable []string
}

func newProber(opts Options, key string, conns ...*grpc.ClientConn) *prober {
	p := &prober{opts: opts, key: key, conns: conns, reachable: opts.Endpoints}
	for _, ep := range opts.Endpoints {
		p.members = append(p.members, &memberProbe{endpoint: ep})
	}
	p.alive, p.kill = context.WithCancelCause(context.Background())
	return p
}

// serving returns a context that ends, with why, when etcd stops serving;
// or, while it does not serve, why.
func (p *prober) serving() (context.Context, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down != nil {
		return nil, p.down
	}
	return p.alive, nil
}

// reachableEndpoints returns the endpoints of the members that answered
// the last probe.
func (p *prober) reachableEndpoints() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reachable
}

// run probes until ctx ends, then closes the probes' clients.
func (p *prober) run(ctx context.Context) {
	defer func() {
		for _, m := range p.members {
			if m.cli != nil {
				m.cli.Close()
			}
		}
	}()
	for {
		p.set(p.probe(ctx))
		select {
		case <-ctx.Done():
			return
		case <-time.After(probeInterval):
		}
	}
}

// set records a probe's verdict: nil, etcd serves, or why it does not.
func (p *prober) set(down error) {
	var reachable []string
	for _, m := range p.members {
		if m.last != unreachable {
			reachable = append(reachable, m.endpoint)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reachable = reachable
	switch {
	case down != nil && p.down == nil:
		p.kill(down)
	case down == nil && p.down != nil:
		p.alive, p.kill = context.WithCancelCause(context.Background())
	}
	p.down = down
}

// probe asks every member at once, and returns nil if one answered, else
// why none did.
func (p *prober) probe(ctx context.Context) error {
	if p.down != nil {
		// Try every connection again now rather than after its backoff:
		// the gateway serves again as soon as a member answers.
		for _, c := range p.conns {
			c.ResetConnectBackoff()
		}
	}
	var wg sync.WaitGroup
	for _, m := range p.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.last, m.err = m.probe(ctx, p.opts, p.key)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return p.judge()
}

// judge is the verdict of the members' last probes, but for a cluster
// that was only silent while it answered the gateway (see above).
func (p *prober) judge() error {
	down := verdict(p.members)
	if down != nil && p.heard != nil && time.Since(p.heard()) < heardWindow &&
		slices.ContainsFunc(p.members, func(m *memberProbe) bool { return m.last == silent }) {
		return nil
	}
	return down
}

// probe asks the member for a serializable read of key, if it has a
// leader.
func (m *memberProbe) probe(ctx context.Context, opts Options, key string) (outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if m.cli == nil {
		// Without credentials: etcd with auth on answers the probe's read
		// "user name is empty", which is an answer (below), while logging
		// in costs a bcrypt hash on the member, which a loaded member took
		// longer than probeTimeout over, and the gateway then counted it
		// unreachable.
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: []string{m.endpoint}, DialTimeout: probeTimeout, TLS: opts.TLS,
			MaxUnaryRetries: 1, DialOptions: []grpc.DialOption{reconnectParams}, Logger: zap.NewNop(),
		})
		switch {
		case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
			// Not refused, only not connected yet: as silent as a read
			// that took too long.
			return silent, nil
		case err != nil:
			return unreachable, err
		}
		m.cli = cli
	}
	conn := m.cli.ActiveConnection()
	if conn.GetState() == connectivity.TransientFailure {
		conn.ResetConnectBackoff()
	}
	_, err := pb.NewKVClient(conn).Range(clientv3.WithRequireLeader(ctx),
		&pb.RangeRequest{Key: []byte(key), CountOnly: true, Serializable: true}, grpc.WaitForReady(false))
	var answer rpctypes.EtcdError
	switch {
	case err == nil:
		return answered, nil
	case errors.Is(rpctypes.Error(err), rpctypes.ErrNoLeader):
		return leaderless, nil
	case errors.As(rpctypes.Error(err), &answer):
		// etcd's own answer ("leader changed" in an election, "permission
		// denied"): the member is there and has a cluster behind it; the
		// next probe tells if that cluster lost its leader.
		return answered, nil
	case ctx.Err() != nil:
		return silent, nil
	case status.Code(err) == codes.Unavailable:
		return unreachable, err // the connection's failure, not etcd's
	}
	return answered, nil
}

// verdict is nil if a member answered, else the error that says why etcd
// cannot serve: "etcd cannot serve: of 3 members, 2 unreachable (dial
// tcp ...: connection refused), 1 without a leader (no quorum)".
func verdict(members []*memberProbe) error {
	var counts [silent + 1]int
	var why error
	for _, m := range members {
		counts[m.last]++
		if m.last == unreachable && why == nil {
			why = m.err
		}
	}
	if counts[answered] > 0 {
		return nil
	}
	var parts []string
	if n := counts[unreachable]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d unreachable (%s)", n, unreachableReason(why)))
	}
	if n := counts[leaderless]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d without a leader (no quorum)", n))
	}
	if n := counts[silent]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d did not answer within %v", n, probeTimeout))
	}
	noun := "members"
	if len(members) == 1 {
		noun = "member"
	}
	return kv.Errorf(kv.ErrUnavailable, "etcd cannot serve: of %d %s, %s; retry after Retry-After",
		len(members), noun, strings.Join(parts, ", "))
}

// unreachableReason is the useful part of a connection error: gRPC's
// "connection error: desc = \"transport: Error while dialing: dial tcp
// ...: connect: connection refused\"" is "dial tcp ...: connect:
// connection refused".
func unreachableReason(err error) string {
	if err == nil {
		return "no connection"
	}
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	if i := strings.Index(msg, "dial"); i >= 0 {
		msg = msg[i:]
	}
	return strings.TrimRight(msg, `"`)
}
