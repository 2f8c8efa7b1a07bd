package auth_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
)

// memBackend keeps the buckets auth writes in memory, standing in for the
// store's write transaction where persistence is not under test.
type memBackend struct {
	mu      sync.Mutex
	buckets map[string]map[string][]byte
	writes  int
}

func newMemBackend() *memBackend {
	return &memBackend{buckets: make(map[string]map[string][]byte)}
}

// memTxn is one write: changes are kept aside and applied only if the
// write function succeeds, as a store transaction would, and what it
// staged runs after them.
type memTxn struct {
	puts   map[[2]string][]byte // (bucket, key) -> value; nil value deletes
	stages []func()
}

func (t *memTxn) Stage(apply, _ func()) { t.stages = append(t.stages, apply) }

func (t *memTxn) UnsafePut(bucket, key, value []byte) error {
	t.puts[[2]string{string(bucket), string(key)}] = append([]byte{}, value...)
	return nil
}

func (t *memTxn) UnsafeDelete(bucket, key []byte) error {
	t.puts[[2]string{string(bucket), string(key)}] = nil
	return nil
}

func (m *memBackend) write(fn func(auth.Bucket) error) error {
	t := &memTxn{puts: make(map[[2]string][]byte)}
	if err := fn(t); err != nil {
		return err
	}
	m.mu.Lock()
	defer func() {
		m.mu.Unlock()
		for _, apply := range t.stages {
			apply()
		}
	}()
	m.writes++
	for bk, v := range t.puts {
		b := m.buckets[bk[0]]
		if b == nil {
			b = make(map[string][]byte)
			m.buckets[bk[0]] = b
		}
		if v == nil {
			delete(b, bk[1])
		} else {
			b[bk[1]] = v
		}
	}
	return nil
}

func (m *memBackend) forEach(bucket []byte, fn func(k, v []byte) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.buckets[string(bucket)] {
		if err := fn([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// clock is a settable time source for Config.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const testTTL = time.Minute

// newStore returns a Store on an in-memory backend with a settable clock
// and cheap password hashes.
func newStore(tb testing.TB) (*auth.Store, *clock, *memBackend) {
	tb.Helper()
	c, m := newClock(), newMemBackend()
	s := auth.New(auth.WriteFunc(m.write), nil, auth.Config{TokenTTL: testTTL, Now: c.Now, BcryptCost: bcrypt.MinCost})
	return s, c, m
}

// mustDo fails the test if err is not nil; what names the call.
func mustDo(tb testing.TB, what string, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s = %v, want nil", what, err)
	}
}

// withRoot adds the root user holding the root role and enables auth.
func withRoot(tb testing.TB, s *auth.Store) {
	tb.Helper()
	mustDo(tb, `AddUser("root")`, s.AddUser(auth.RootUser, "rootpw"))
	mustDo(tb, `GrantRole("root", "root")`, s.GrantRole(auth.RootUser, auth.RootRole))
	mustDo(tb, "SetEnabled(true)", s.SetEnabled(true))
}

// login returns a token for name, failing the test if there is none.
func login(tb testing.TB, s *auth.Store, name, password string) string {
	tb.Helper()
	tok, ttl, err := s.Authenticate(name, password, "127.0.0.1")
	if err != nil {
		tb.Fatalf("Authenticate(%q, %q) = %v, want a token", name, password, err)
	}
	if tok == "" || ttl != testTTL {
		tb.Fatalf("Authenticate(%q) = (%q, %v), want a token and ttl %v", name, tok, ttl, testTTL)
	}
	return tok
}

// wantUser fails unless the token belongs to name.
func wantUser(tb testing.TB, s *auth.Store, tok, name string) {
	tb.Helper()
	if got, err := s.UserOf(tok); err != nil || got != name {
		tb.Fatalf("UserOf(token of %s) = (%q, %v), want %q", name, got, err, name)
	}
}

// wantNoUser fails unless the token is refused as unauthenticated.
func wantNoUser(tb testing.TB, s *auth.Store, tok, why string) {
	tb.Helper()
	if got, err := s.UserOf(tok); !errors.Is(err, auth.ErrUnauthenticated) {
		tb.Fatalf("UserOf(token) %s = (%q, %v), want ErrUnauthenticated", why, got, err)
	}
}
