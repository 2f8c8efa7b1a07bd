package auth

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Bucket names and keys of the persisted state.
var (
	usersBucket = []byte("authUsers")
	rolesBucket = []byte("authRoles")
	metaBucket  = []byte("auth")
	enabledKey  = []byte("enabled")
	// generationKey counts the times auth was turned on or off: a token
	// names the generation it was issued in.
	generationKey = []byte("generation")
)

// RootUser and RootRole are the names etcd gives them.
const (
	RootUser = "root"
	RootRole = "root"
)

// Bucket is where changes are written: the store's write transaction
// (*mvcc.WriteTxn), so each change is atomic and durable.
type Bucket interface {
	UnsafePut(bucket, key, value []byte) error
	UnsafeDelete(bucket, key []byte) error
	// Stage registers apply, run once the write is durable, and undo, run
	// instead if it is not: the change of memory that mirrors the write
	// (see mvcc.WriteTxn.Stage).
	Stage(apply, undo func())
}

// ForEachFunc reads a bucket, as mvcc.ReadTxn.UnsafeForEach does.
type ForEachFunc func(bucket []byte, fn func(k, v []byte) error) error

// Writer keeps a Store's state: the store's write transaction.
type Writer interface {
	// Write runs fn in one durable write transaction of the store.
	Write(fn func(Bucket) error) error
}

// WriteFunc is a function that is a Writer.
type WriteFunc func(fn func(Bucket) error) error

// Write calls f.
func (f WriteFunc) Write(fn func(Bucket) error) error { return f(fn) }

// Shared is what a Store needs when other stores share its state
// (gateways in front of one etcd cluster).
type Shared interface {
	// Sync brings the state up to date (Reload) before a change is
	// checked, since it may be behind the others': a change is then
	// checked against what they wrote.
	Sync() error
	// TokenKey returns the key that signs tokens, the same for every
	// store of the deployment: tokens are then signed and held nowhere,
	// and any of the stores reads them (see signedTokens).
	TokenKey() ([]byte, error)
}

// TokenClockSkew is how far a token's expiry may lie beyond the store's
// own TokenTTL from now: what the clocks of the stores of one deployment
// (gateways over one cluster) may differ by. A token that expires later
// is refused.
const TokenClockSkew = 30 * time.Second

// Config tunes a Store.
type Config struct {
	// TokenTTL is the lifetime of a token. Zero means 5 minutes. A
	// token that has longer left (plus TokenClockSkew) is refused: the
	// stores of one deployment share it.
	TokenTTL time.Duration
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
	// BcryptCost is the cost of new password hashes; zero means
	// bcrypt.DefaultCost.
	BcryptCost int
}

// User is a user as reported to administrators: never the password.
type User struct {
	Name  string
	Roles []string
}

// Role is a named set of permissions.
type Role struct {
	Name        string
	Permissions []Permission
}

type userRecord struct {
	Name     string   `json:"name"`
	Hash     []byte   `json:"hash"`
	Roles    []string `json:"roles"`
	Password int64    `json:"password_revision"` // bumped on every password change
	// ID is drawn when the user is created, and never changes: a token
	// names it, so a user deleted and created again under the same name
	// takes none of the tokens of the one before, whose password
	// revision it may well have. Users created before IDs were drawn
	// have none, which reads as the zero ID.
	ID []byte `json:"id,omitempty"`
}

// userID tells apart users that had the same name at different times.
type userID [16]byte

// id returns the user's ID; the zero ID for a user that has none.
func (u *userRecord) id() (id userID) {
	copy(id[:], u.ID)
	return id
}

// newUserID draws the ID of a new user.
func newUserID() []byte {
	id := make([]byte, len(userID{}))
	_, _ = rand.Read(id) // crypto/rand.Read never fails
	return id
}

type roleRecord struct {
	Name        string       `json:"name"`
	Permissions []Permission `json:"permissions"`
}

// Store holds the auth state. All methods are safe for concurrent use.
type Store struct {
	cfg    Config
	w      Writer
	shared Shared // nil for a state of its own
	// catchUp syncs the shared state for tokens it does not know yet.
	catchUp *catchUp

	// writeMu serialises changes so each is validated against the state
	// it replaces. Lock order: writeMu, then mu.
	writeMu sync.Mutex
	// mu guards the state below.
	mu      sync.RWMutex
	enabled bool
	// generation counts the times auth was turned on or off.
	generation int64
	users      map[string]*userRecord
	roles      map[string]*roleRecord
	// grants caches each user's merged permissions; cleared on any change.
	grants  map[string]*grants
	changed chan struct{}

	tokens  tokenIssuer
	limiter *limiter

	// dummy is the hash checked for unknown users; see dummyHash.
	dummyOnce sync.Once
	dummy     []byte
}

// grants are a user's merged read and write coverage.
type grants struct {
	root        bool
	read, write coverage
}

// New returns an empty Store; call Restore to load the persisted state.
// Changes are written through w (nil for a store that is only read). sh,
// if not nil, is the state's share with other stores; without it tokens
// are random, held in memory by the store that issued them.
func New(w Writer, sh Shared, cfg Config) *Store {
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BcryptCost == 0 {
		cfg.BcryptCost = bcrypt.DefaultCost
	}
	var issuer tokenIssuer = newTokens(cfg.Now)
	if sh != nil {
		issuer = signedTokens{now: cfg.Now, key: sh.TokenKey}
	}
	s := &Store{
		cfg:     cfg,
		w:       w,
		shared:  sh,
		users:   make(map[string]*userRecord),
		roles:   make(map[string]*roleRecord),
		grants:  make(map[string]*grants),
		changed: make(chan struct{}),
		tokens:  issuer,
		limiter: newLimiter(cfg.Now, limiterEntries),
	}
	if sh != nil {
		s.catchUp = &catchUp{sync: sh.Sync}
	}
	return s
}

// Restore loads users, roles and the enabled flag.
func (s *Store) Restore(forEach ForEachFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := forEach(usersBucket, func(k, v []byte) error {
		var u userRecord
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("%w: user %q: %v", ErrCorrupt, k, err)
		}
		s.users[u.Name] = &u
		return nil
	})
	if err != nil {
		return err
	}
	err = forEach(rolesBucket, func(k, v []byte) error {
		var r roleRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("%w: role %q: %v", ErrCorrupt, k, err)
		}
		s.roles[r.Name] = &r
		return nil
	})
	if err != nil {
		return err
	}
	return forEach(metaBucket, func(k, v []byte) error {
		switch string(k) {
		case string(enabledKey):
			s.enabled = len(v) == 1 && v[0] == 1
		case string(generationKey):
			if len(v) != 8 {
				return fmt.Errorf("%w: generation of %d bytes", ErrCorrupt, len(v))
			}
			s.generation = int64(binary.BigEndian.Uint64(v))
		}
		return nil
	})
}

// Changed returns a channel closed at the next change of users, roles,
// permissions or the enabled flag; streams use it to check again that
// they are still allowed.
func (s *Store) Changed() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changed
}

// Enabled reports whether auth is enabled.
func (s *Store) Enabled() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.enabled
}

// change makes one change: check validates it against the current state
// (under the read lock), write persists it in one durable transaction,
// and apply updates memory, staged in that transaction so that it runs
// only once the write is durable, and never if it is not. Changes are
// serialised, so what check saw is still true when apply runs.
//
// A Write that finds the state changed elsewhere since it was read (by
// another gateway) reloads it and returns ErrStale: the change is checked
// again against the new state, and written again.
func (s *Store) change(check func() error, write func(b Bucket) error, apply func()) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.shared != nil {
		if err := s.shared.Sync(); err != nil {
			return err
		}
	}
	for {
		s.mu.RLock()
		err := check()
		s.mu.RUnlock()
		if err != nil {
			return err
		}
		if err := s.write(write, apply); !errors.Is(err, ErrStale) {
			return err
		}
	}
}

// write writes one change and stages its apply.
func (s *Store) write(write func(b Bucket) error, apply func()) error {
	return s.w.Write(func(b Bucket) error {
		if err := write(b); err != nil {
			return err
		}
		b.Stage(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			apply()
			s.grants = make(map[string]*grants)
			close(s.changed)
			s.changed = make(chan struct{})
		}, nil)
		return nil
	})
}

// errUnchanged stops a change that would leave the state as it is.
var errUnchanged = errors.New("auth: unchanged")

// SetEnabled enables or disables auth. Enabling needs a root user holding
// the root role. Turning auth on or off ends every token issued so far;
// asking for the state it already has changes nothing (as in etcd), so a
// repeated enable does not log every client out.
func (s *Store) SetEnabled(on bool) error {
	v := []byte{0}
	if on {
		v[0] = 1
	}
	var generation int64
	err := s.change(func() error {
		if s.enabled == on {
			return errUnchanged
		}
		if root, ok := s.users[RootUser]; on && (!ok || !slices.Contains(root.Roles, RootRole)) {
			return ErrRootMissing
		}
		generation = s.generation + 1
		return nil
	}, func(b Bucket) error {
		if err := b.UnsafePut(metaBucket, enabledKey, v); err != nil {
			return err
		}
		return b.UnsafePut(metaBucket, generationKey, binary.BigEndian.AppendUint64(nil, uint64(generation)))
	}, func() {
		s.enabled, s.generation = on, generation
		s.tokens.clear()
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

func putJSON(b Bucket, bucket []byte, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.UnsafePut(bucket, []byte(key), raw)
}
