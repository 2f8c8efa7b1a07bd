package etcdtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest/etcdbin"
)

// Timeouts of the harness. They bound waits on processes, never assert
// how fast etcd is: a loaded machine only makes a test slower.
const (
	// buildTimeout bounds building etcd when it is not in the cache.
	buildTimeout = 10 * time.Minute
	// healthyTimeout bounds the wait for a started or restarted member
	// to have a leader and answer.
	healthyTimeout = 60 * time.Second
	// startAttempts is how often StartCluster tries fresh ports when a
	// member exits before the cluster is healthy (a port taken between
	// the pick and etcd's bind).
	startAttempts = 3
	// logTailBytes is how much of each member's log a failed test prints.
	logTailBytes = 32 << 10
)

// RootPassword is the password of etcd's root user in a cluster started
// WithAuth.
const RootPassword = "etcdtest-root"

// Option changes how StartCluster starts a cluster.
type Option func(*options)

type options struct {
	auth  bool
	fsync bool
	flags []string
}

// WithAuth enables etcd's authentication once the cluster is healthy, with
// a user "root" (password RootPassword) holding the root role. Clients
// from Client and the harness's own checks log in as root.
func WithAuth() Option { return func(o *options) { o.auth = true } }

// WithFsync keeps etcd's fsync of its WAL and database. By default members
// run with --unsafe-no-fsync: the tests kill processes, not the machine,
// and what a killed process wrote is in the page cache, so fsync changes
// nothing they can observe but their speed.
func WithFsync() Option { return func(o *options) { o.fsync = true } }

// WithFlags adds etcd command-line flags to every member, for example
// "--quota-backend-bytes=1048576" or "--auto-compaction-retention=1".
func WithFlags(flags ...string) Option {
	return func(o *options) { o.flags = append(o.flags, flags...) }
}

// Cluster is a running etcd cluster. Its methods fail the test on errors;
// call them from the test's goroutine.
type Cluster struct {
	tb      testing.TB
	bin     string
	opts    options
	members []*Member

	mu      sync.Mutex // guards clients and auth
	clients map[int]*clientv3.Client
	auth    bool // auth is enabled: clients log in as root
}

// StartCluster starts an n-member cluster, waits until every member has a
// leader and answers a linearizable read, and registers a cleanup that
// kills every member and waits for it. Member logs are printed if the
// test fails.
func StartCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	if n < 1 {
		tb.Fatalf("StartCluster(%d): want at least one member", n)
	}
	bin := binary(tb)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for attempt := 1; ; attempt++ {
		c, err := tryStart(tb, bin, n, o)
		if err == nil {
			return c
		}
		if attempt == startAttempts {
			tb.Fatal(err)
		}
		tb.Logf("etcd cluster did not come up, starting it again on other ports: %v", err)
	}
}

// binary returns the etcd to run, skipping or failing the test when there
// is none.
func binary(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	bin, err := etcdbin.Path(ctx)
	if err != nil {
		msg := fmt.Sprintf("no etcd to run (.ci/run builds it and sets %s): %v", etcdbin.EnvVar, err)
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return bin
}

// tryStart starts one cluster on fresh ports. If a member exits before
// the cluster is healthy it stops the others and returns an error, so that
// StartCluster can try again.
func tryStart(tb testing.TB, bin string, n int, o options) (*Cluster, error) {
	tb.Helper()
	dir := tb.TempDir()
	c := &Cluster{tb: tb, bin: bin, opts: o, clients: map[int]*clientv3.Client{}}
	ports := freePorts(tb, 2*n)
	var initial []string
	for i := range n {
		m := &Member{
			Name:      "m" + strconv.Itoa(i),
			ClientURL: loopbackURL(ports[2*i]),
			PeerURL:   loopbackURL(ports[2*i+1]),
		}
		m.DataDir = filepath.Join(dir, m.Name)
		m.LogPath = filepath.Join(dir, m.Name+".log")
		initial = append(initial, m.Name+"="+m.PeerURL)
		c.members = append(c.members, m)
	}
	token := make([]byte, 8)
	_, _ = rand.Read(token)
	for _, m := range c.members {
		m.args = []string{
			"--name", m.Name,
			"--data-dir", m.DataDir,
			"--listen-client-urls", m.ClientURL,
			"--advertise-client-urls", m.ClientURL,
			"--listen-peer-urls", m.PeerURL,
			"--initial-advertise-peer-urls", m.PeerURL,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new",
			// A token of its own, so that members of two clusters that
			// ever met on a reused port refuse each other.
			"--initial-cluster-token", "etcdtest-" + hex.EncodeToString(token),
			// Elections within half a second of a kill, and heartbeats
			// frequent enough for that on a loaded machine.
			"--heartbeat-interval", "50",
			"--election-timeout", "500",
			"--log-level", "info",
		}
		if !o.fsync {
			m.args = append(m.args, "--unsafe-no-fsync")
		}
		m.args = append(m.args, o.flags...)
	}
	// Registered after TempDir, so it runs before the directory goes.
	tb.Cleanup(c.cleanup)
	for _, m := range c.members {
		if err := m.start(bin); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range c.members {
		if err := c.waitHealthy(i); err != nil {
			c.killAll()
			return nil, fmt.Errorf("%w\n%s", err, c.logs())
		}
	}
	if o.auth {
		c.enableAuth()
	}
	return c, nil
}

// Endpoints returns every member's client URL, running or not, as
// clientv3.Config.Endpoints takes them.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.members))
	for i, m := range c.members {
		eps[i] = m.ClientURL
	}
	return eps
}

// Size returns the number of members.
func (c *Cluster) Size() int { return len(c.members) }

// Member returns member i.
func (c *Cluster) Member(i int) *Member {
	c.tb.Helper()
	c.checkIndex(i)
	return c.members[i]
}

// Kill sends SIGKILL to member i and waits until it has exited. A member
// that is not running is left alone.
func (c *Cluster) Kill(i int) {
	c.tb.Helper()
	c.checkIndex(i)
	c.members[i].signal(syscall.SIGKILL, 0)
}

// Stop sends SIGTERM to member i, so that it shuts down cleanly, and waits
// until it has exited (killing it if it takes too long).
func (c *Cluster) Stop(i int) {
	c.tb.Helper()
	c.checkIndex(i)
	c.members[i].signal(syscall.SIGTERM, stopGrace)
}

// Restart starts member i again on its data directory and ports, and
// waits until it has a leader and answers a linearizable read through its
// own endpoint, which it can only do once it has applied everything the
// cluster committed before the read: it has caught up.
func (c *Cluster) Restart(i int) {
	c.tb.Helper()
	c.checkIndex(i)
	if err := c.members[i].start(c.bin); err != nil {
		c.tb.Fatal(err)
	}
	if err := c.waitHealthy(i); err != nil {
		c.tb.Fatal(err)
	}
}

// RestartAll starts the members again at once, and waits until each has
// a leader and has caught up, as Restart does: members of a cluster that
// lost its quorum come back only together.
func (c *Cluster) RestartAll(members ...int) {
	c.tb.Helper()
	for _, i := range members {
		c.checkIndex(i)
		if err := c.members[i].start(c.bin); err != nil {
			c.tb.Fatal(err)
		}
	}
	for _, i := range members {
		if err := c.waitHealthy(i); err != nil {
			c.tb.Fatal(err)
		}
	}
}

func (c *Cluster) checkIndex(i int) {
	c.tb.Helper()
	if i < 0 || i >= len(c.members) {
		c.tb.Fatalf("member %d of a %d-member cluster", i, len(c.members))
	}
}

// killAll kills every member and waits for each.
func (c *Cluster) killAll() {
	for _, m := range c.members {
		m.signal(syscall.SIGKILL, 0)
	}
}

// cleanup closes the harness's clients, kills every member and, if the
// test failed, prints the members' logs.
func (c *Cluster) cleanup() {
	c.mu.Lock()
	for i, cli := range c.clients {
		cli.Close()
		delete(c.clients, i)
	}
	c.mu.Unlock()
	c.killAll()
	if c.tb.Failed() {
		c.tb.Log(c.logs())
	}
}

// logs returns the tail of every member's log.
func (c *Cluster) logs() string {
	var b strings.Builder
	for _, m := range c.members {
		fmt.Fprintf(&b, "--- etcd %s (%s), last %d KiB of %s:\n%s\n", m.Name, m.ClientURL, logTailBytes>>10, m.LogPath, m.logTail(logTailBytes))
	}
	return b.String()
}
