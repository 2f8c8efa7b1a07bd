package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

const (
	// dialTimeout bounds a client's first connection.
	dialTimeout = 5 * time.Second
	// probeTimeout bounds one health probe or status call; the callers
	// retry until their own deadline.
	probeTimeout = 2 * time.Second
	// pollInterval is the pause between probes.
	pollInterval = 50 * time.Millisecond
)

// Client returns a client over every member's endpoint, logged in as root
// if the cluster has auth on, and closes it when the test ends.
func (c *Cluster) Client(tb testing.TB) *clientv3.Client {
	tb.Helper()
	cli, err := c.newClient(c.Endpoints()...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

// MemberClient returns a client of member i's endpoint alone, as Client
// does: reads through it are served by that member.
func (c *Cluster) MemberClient(tb testing.TB, i int) *clientv3.Client {
	tb.Helper()
	c.checkIndex(i)
	cli, err := c.newClient(c.members[i].ClientURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

func (c *Cluster) newClient(endpoints ...string) (*clientv3.Client, error) {
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: dialTimeout,
		// The client logs every failed attempt while a member is down,
		// which the tests provoke on purpose.
		Logger: zap.NewNop(),
	}
	c.mu.Lock()
	if c.auth {
		cfg.Username, cfg.Password = "root", RootPassword
	}
	c.mu.Unlock()
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client of %v: %w", endpoints, err)
	}
	return cli, nil
}

// memberClient returns the harness's own client of member i, made on
// first use.
func (c *Cluster) memberClient(i int) (*clientv3.Client, error) {
	c.mu.Lock()
	cli := c.clients[i]
	c.mu.Unlock()
	if cli != nil {
		return cli, nil
	}
	cli, err := c.newClient(c.members[i].ClientURL)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.clients[i]; old != nil {
		cli.Close()
		return old, nil
	}
	c.clients[i] = cli
	return cli, nil
}

// status asks member i for its status.
func (c *Cluster) status(i int) (*clientv3.StatusResponse, error) {
	cli, err := c.memberClient(i)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return cli.Status(ctx, c.members[i].ClientURL)
}

// probe reports why member i is not healthy: it must know a leader and
// answer a linearizable read, which goes through the leader's read index.
func (c *Cluster) probe(i int) error {
	st, err := c.status(i)
	if err != nil {
		return err
	}
	if st.Leader == 0 {
		return errors.New("no leader")
	}
	cli, err := c.memberClient(i)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	_, err = cli.Get(ctx, "etcdtest-health")
	return err
}

// waitHealthy waits until member i passes probe, or fails when it exits
// or the timeout passes.
func (c *Cluster) waitHealthy(i int) error {
	m := c.members[i]
	p := m.current()
	deadline := time.Now().Add(healthyTimeout)
	for {
		err := c.probe(i)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd %s at %s not healthy after %v: %v", m.Name, m.ClientURL, healthyTimeout, err)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("etcd %s at %s exited before it was healthy: %v", m.Name, m.ClientURL, p.err)
		case <-time.After(pollInterval):
		}
	}
}

// Leader returns the index of the member that leads, waiting for an
// election if there is none yet: the running member that says it leads,
// with a majority of all members (itself included) agreeing.
func (c *Cluster) Leader() int {
	c.tb.Helper()
	deadline := time.Now().Add(healthyTimeout)
	for {
		if i, ok := c.leader(); ok {
			return i
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("no etcd leader agreed by a majority after %v", healthyTimeout)
		}
		time.Sleep(pollInterval)
	}
}

// leader asks every running member for its leader once.
func (c *Cluster) leader() (int, bool) {
	votes := map[uint64]int{}
	self := map[uint64]int{} // member ID to index, for members that answered
	for i, m := range c.members {
		if !m.Running() {
			continue
		}
		st, err := c.status(i)
		if err != nil || st.Leader == 0 {
			continue
		}
		votes[st.Leader]++
		self[st.Header.MemberId] = i
	}
	for id, n := range votes {
		if i, ok := self[id]; ok && n > len(c.members)/2 {
			return i, true
		}
	}
	return 0, false
}

// enableAuth adds root with the root role and turns auth on; from then on
// the harness's clients log in as root.
func (c *Cluster) enableAuth() {
	c.tb.Helper()
	cli, err := c.memberClient(0)
	if err != nil {
		c.tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), healthyTimeout)
	defer cancel()
	if _, err := cli.UserAdd(ctx, "root", RootPassword); err != nil {
		c.tb.Fatalf("etcd: add user root: %v", err)
	}
	if _, err := cli.UserGrantRole(ctx, "root", "root"); err != nil {
		c.tb.Fatalf("etcd: grant root the root role: %v", err)
	}
	if _, err := cli.AuthEnable(ctx); err != nil {
		c.tb.Fatalf("etcd: enable auth: %v", err)
	}
	c.mu.Lock()
	c.auth = true
	for i, cli := range c.clients { // made without credentials
		cli.Close()
		delete(c.clients, i)
	}
	c.mu.Unlock()
}
