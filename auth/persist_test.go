package auth_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// The store's transactions fit what auth writes and reads through.
var (
	_ auth.Bucket      = (*mvcc.WriteTxn)(nil)
	_ auth.ForEachFunc = (*mvcc.ReadTxn)(nil).UnsafeForEach
)

// openPersistent opens the mvcc store at path and an auth.Store writing
// through it, restored from it, as the server wires them. The mvcc store
// is closed on cleanup if the test has not closed it.
func openPersistent(tb testing.TB, path string) (*auth.Store, *mvcc.Store) {
	tb.Helper()
	return openPersistentWith(tb, path, nil)
}

// openPersistentWith is openPersistent with the store's commits going
// through c.
func openPersistentWith(tb testing.TB, path string, c mvcc.Committer) (*auth.Store, *mvcc.Store) {
	tb.Helper()
	kv, err := mvcc.Open(path, nil, c, mvcc.Options{NoFsync: true})
	if err != nil {
		tb.Fatalf("mvcc.Open(%q) = %v", path, err)
	}
	tb.Cleanup(func() { _ = kv.Close() })
	s := auth.New(auth.WriteFunc(func(fn func(auth.Bucket) error) error {
		_, err := kv.Write(func(tx *mvcc.WriteTxn) error { return fn(tx) })
		return err
	}), nil, auth.Config{BcryptCost: bcrypt.MinCost, TokenTTL: testTTL})
	rt, err := kv.Read()
	if err != nil {
		tb.Fatalf("Read() = %v", err)
	}
	err = s.Restore(rt.UnsafeForEach)
	rt.End()
	if err != nil {
		tb.Fatalf("Restore() = %v", err)
	}
	return s, kv
}

func TestPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "httpkv.db")
	s, kv := openPersistent(t, path)
	rev := kv.Rev()
	withRoot(t, s)
	mustDo(t, "AddUser(u)", s.AddUser("u", "pw1"))
	mustDo(t, "ChangePassword(u)", s.ChangePassword("u", "pw2"))
	mustDo(t, "AddUser(gone)", s.AddUser("gone", "pw"))
	mustDo(t, "DeleteUser(gone)", s.DeleteUser("gone"))
	mustDo(t, "AddRole(r)", s.AddRole("r"))
	mustDo(t, "AddRole(gone)", s.AddRole("gone"))
	mustDo(t, "DeleteRole(gone)", s.DeleteRole("gone"))
	mustDo(t, "GrantPermission(r)", s.GrantPermission("r", auth.Permission{Key: []byte("app/"), End: []byte("app0"), Access: auth.Read}))
	mustDo(t, "GrantPermission(r)", s.GrantPermission("r", auth.Permission{Key: []byte("log/"), End: []byte{0}, Access: auth.Write}))
	mustDo(t, "GrantRole(u, r)", s.GrantRole("u", "r"))
	tok := login(t, s, "u", "pw2")
	if got := kv.Rev(); got != rev {
		t.Errorf("auth changes moved the store's revision from %d to %d, want no revision", rev, got)
	}
	if err := kv.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}

	s, kv = openPersistent(t, path)
	if !s.Enabled() {
		t.Error("Enabled() = false after reopening, want true")
	}
	if got := s.Users(); !slices.Equal(got, []string{"root", "u"}) {
		t.Errorf("Users() after reopening = %q, want [root u]", got)
	}
	if got := s.Roles(); !slices.Equal(got, []string{"r"}) {
		t.Errorf("Roles() after reopening = %q, want [r]", got)
	}
	if u, err := s.GetUser("u"); err != nil || !slices.Equal(u.Roles, []string{"r"}) {
		t.Errorf("GetUser(u) after reopening = (%+v, %v), want roles [r]", u, err)
	}
	if !s.IsRoot("root") {
		t.Error(`IsRoot("root") = false after reopening`)
	}
	for _, c := range []struct {
		a        auth.Access
		key, end string
		want     bool
	}{
		{auth.Read, "app/x", "", true},
		{auth.Write, "app/x", "", false},
		{auth.Write, "log/", "\x00", true},
		{auth.Read, "log/x", "", false},
	} {
		var end []byte
		if c.end != "" {
			end = []byte(c.end)
		}
		if got := s.Allowed("u", c.a, []byte(c.key), end); got != c.want {
			t.Errorf("after reopening, Allowed(u, %d, %q, %q) = %v, want %v", c.a, c.key, c.end, got, c.want)
		}
	}
	// Tokens live in memory only: a restart asks everyone to log in again.
	wantNoUser(t, s, tok, "issued before the restart")
	if _, _, err := s.Authenticate("u", "pw1", "a"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("Authenticate(u, old password) after reopening = %v, want ErrBadCredentials", err)
	}
	wantUser(t, s, login(t, s, "u", "pw2"), "u")

	// Disabling is kept too.
	mustDo(t, "SetEnabled(false)", s.SetEnabled(false))
	if err := kv.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	s, _ = openPersistent(t, path)
	if s.Enabled() {
		t.Error("Enabled() = true after disabling and reopening")
	}
}

func TestRestoreCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "httpkv.db")
	_, kv := openPersistent(t, path)
	// The users bucket's name is the one the server has always used.
	if _, err := kv.Write(func(tx *mvcc.WriteTxn) error {
		return tx.UnsafePut([]byte("authUsers"), []byte("u"), []byte("{not json"))
	}); err != nil {
		t.Fatalf("Write() = %v", err)
	}
	rt, err := kv.Read()
	if err != nil {
		t.Fatalf("Read() = %v", err)
	}
	defer rt.End()
	s := auth.New(nil, nil, auth.Config{})
	if err := s.Restore(rt.UnsafeForEach); !errors.Is(err, auth.ErrCorrupt) {
		t.Fatalf("Restore() of a corrupt user = %v, want ErrCorrupt", err)
	}
}

// TestCommitFailureLeavesAuthAsOnDisk: a change whose commit fails
// changes nothing in memory either (the change is staged in the write and
// applied only once it is durable), and streams are not told of it.
func TestCommitFailureLeavesAuthAsOnDisk(t *testing.T) {
	var faults mvcctest.Committer
	s, _ := openPersistentWith(t, filepath.Join(t.TempDir(), "httpkv.db"), &faults)
	mustDo(t, "AddRole(kept)", s.AddRole("kept"))
	changed := s.Changed()
	faults.Set(mvcctest.After)
	if err := s.AddRole("lost"); !errors.Is(err, kv.ErrBackendFailed) {
		t.Fatalf("AddRole with a failing commit = %v, want kv.ErrBackendFailed", err)
	}
	if got := s.Roles(); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("Roles() after a failed commit = %q, want [kept]", got)
	}
	select {
	case <-changed:
		t.Error("Changed() fired for a change that was not committed")
	default:
	}
}
