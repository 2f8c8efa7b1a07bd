package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/backend/etcd"
	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/snapshot"
)

// TestMigrate loads an embedded store's snapshot into a real etcd
// cluster with `httpkv migrate`, then reads it through a gateway on the
// same namespace: every live key with its value and lease, every lease
// with its ID and TTL, the users (who log in with their passwords), the
// roles with their permissions, and the auth switch. Deleted keys and
// history stay behind. Keys and leases of the cluster outside the
// namespace do not matter (before, any lease of the cluster refused the
// migrate). A second migrate into the now used namespace is refused,
// saying what it found there, and changes nothing, as is one into a
// namespace that overlaps another deployment's; a damaged snapshot is
// refused before etcd is touched.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	src, wantKeys := embeddedSource(t)
	c := etcdtest.StartCluster(t, 1)
	endpoints := strings.Join(c.Endpoints(), ",")
	// Another deployment of the cluster, with keys and leases.
	other, err := etcd.Open(ctx, nil, etcd.Options{Endpoints: c.Endpoints(), Namespace: "other/", Auth: auth.Config{BcryptCost: bcrypt.MinCost}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for range 3 {
		l, err := other.Grant(ctx, 0, 600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Put(ctx, kv.PutRequest{Key: []byte(fmt.Sprint(l.ID)), Lease: l.ID}, nil); err != nil {
			t.Fatal(err)
		}
	}

	var out, errOut bytes.Buffer
	err = runMigrate(ctx, []string{"--from", src, "--etcd-endpoints", endpoints, "--etcd-namespace", "prod/", "--max-txn-ops", "7"}, os.Getenv, &out, &errOut)
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut.String())
	}
	t.Logf("migrate:\n%s", out.String())
	printed := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"keys 250 leases 2 auth records", "(3 users, 2 roles, auth enabled)"} {
		if !strings.Contains(printed, want) {
			t.Errorf("migrate printed\n%s\nwant %q in it", out.String(), want)
		}
	}

	g, err := etcd.Open(ctx, nil, etcd.Options{Endpoints: c.Endpoints(), Namespace: "prod/", Auth: auth.Config{BcryptCost: bcrypt.MinCost}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	all := keyrange.All()
	got, err := g.Range(ctx, kv.RangeRequest{Key: all.Key, End: all.End})
	if err != nil {
		t.Fatal(err)
	}
	var gotKeys []string
	for _, k := range got.KVs {
		gotKeys = append(gotKeys, fmt.Sprintf("%s=%d bytes lease %d", k.Key, len(k.Value), k.Lease))
	}
	if !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("the gateway has %d keys:\n%q\nwant %d:\n%q", len(gotKeys), gotKeys, len(wantKeys), wantKeys)
	}
	ids, _, err := g.Leases(ctx, 0, 10)
	if err != nil || !slices.Equal(ids, []int64{0x10, 0x20}) {
		t.Fatalf("the gateway's leases: %v, %v; want [16 32]", ids, err)
	}
	st, err := g.TimeToLive(ctx, 0x20, true)
	if err != nil || st.GrantedTTL != 600 || len(st.Keys) != 50 {
		t.Errorf("lease 0x20: granted %d s with %d keys, %v; want 600 s with 50 keys", st.GrantedTTL, len(st.Keys), err)
	}
	a := g.Auth()
	if !a.Enabled() || len(a.Users()) != 3 || len(a.Roles()) != 2 {
		t.Errorf("auth: enabled %v, users %v, roles %v; want enabled, 3 users, 2 roles", a.Enabled(), a.Users(), a.Roles())
	}
	if _, _, err := a.Authenticate("alice", "alice-secret", "127.0.0.1"); err != nil {
		t.Errorf("alice logs in with her password: %v", err)
	}
	role, err := a.GetRole("app")
	if err != nil || len(role.Permissions) != 1 {
		t.Errorf("role app: %+v, %v; want its one permission", role, err)
	}

	// The namespace is in use now: nothing more is written.
	rev := g.Rev()
	err = runMigrate(ctx, []string{"--from", src, "--etcd-endpoints", endpoints, "--etcd-namespace", "prod/"}, os.Getenv, &out, &errOut)
	if !errors.Is(err, etcd.ErrNotEmpty) || !strings.Contains(err.Error(), `"prod/" holds 250 keys, 2 leases, 3 users, 2 roles, auth enabled`) ||
		!strings.Contains(err.Error(), "migrate into an empty namespace (--etcd-namespace)") {
		t.Errorf("a second migrate into the same namespace: %v, want ErrNotEmpty saying what prod/ holds, and to name another --etcd-namespace", err)
	}
	if after := status(t, g); after != rev {
		t.Errorf("the refused migrate moved the revision from %d to %d", rev, after)
	}

	// A namespace inside another deployment's, or around one, is
	// refused, naming it, and nothing is written.
	for _, tc := range []struct{ ns, other string }{{"prod/kv/", `"prod/"`}, {"other", `"other/"`}, {"", `"other/"`}} {
		err = runMigrate(ctx, []string{"--from", src, "--etcd-endpoints", endpoints, "--etcd-namespace", tc.ns}, os.Getenv, &out, &errOut)
		if !errors.Is(err, etcd.ErrOverlap) || !strings.Contains(err.Error(), tc.other) {
			t.Errorf("migrate into %q: %v, want ErrOverlap naming %s", tc.ns, err, tc.other)
		}
	}
	if after := status(t, g); after != rev {
		t.Errorf("the refused migrates moved the revision from %d to %d", rev, after)
	}

	// A damaged snapshot is refused whole.
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(bad, data, 0o600); err != nil {
		t.Fatal(err)
	}
	err = runMigrate(ctx, []string{"--from", bad, "--etcd-endpoints", endpoints, "--etcd-namespace", "other/"}, os.Getenv, &out, &errOut)
	if !errors.Is(err, snapshot.ErrCorrupt) {
		t.Errorf("migrate of a damaged snapshot: %v, want ErrCorrupt", err)
	}
}

// status reads the cluster's revision through g.
func status(t *testing.T, g *etcd.Backend) int64 {
	t.Helper()
	st, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Revision
}

// embeddedSource writes an embedded store with 300 keys (50 of them
// deleted, 50 on lease 0x20, 1 on lease 0x10, some updated several
// times), 3 users, 2 roles, and auth on, and saves its snapshot. It
// returns the snapshot's path and the keys it holds, as
// "key=N bytes lease L".
func embeddedSource(t *testing.T) (string, []string) {
	t.Helper()
	ctx := context.Background()
	b, err := embedded.Open(t.TempDir(), nil, nil, embedded.Options{Auth: auth.Config{BcryptCost: bcrypt.MinCost}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []kv.Lease{{ID: 0x10, TTL: 60}, {ID: 0x20, TTL: 600}} {
		_, err := b.Grant(ctx, l.ID, l.TTL)
		must(err)
	}
	var want []string
	for i := range 300 {
		key := fmt.Sprintf("k%03d", i)
		lease := int64(0)
		switch {
		case i%6 == 1:
			lease = 0x20
		case i == 299:
			lease = 0x10
		}
		for v := range i%3 + 1 {
			_, err := b.Put(ctx, kv.PutRequest{Key: []byte(key), Value: bytes.Repeat([]byte{'v'}, i+v), Lease: lease}, nil)
			must(err)
		}
		if i%6 == 3 {
			_, err := b.Delete(ctx, kv.DeleteRequest{Key: []byte(key)})
			must(err)
			continue
		}
		want = append(want, fmt.Sprintf("%s=%d bytes lease %d", key, i+i%3, lease))
	}
	a := b.Auth()
	for _, u := range []string{auth.RootUser, "alice", "bob"} {
		must(a.AddUser(u, u+"-secret"))
	}
	must(a.AddRole(auth.RootRole))
	must(a.AddRole("app"))
	must(a.GrantPermission("app", auth.Permission{Key: []byte("app/"), End: []byte("app0"), Access: auth.Read}))
	must(a.GrantRole(auth.RootUser, auth.RootRole))
	must(a.GrantRole("alice", "app"))
	must(a.SetEnabled(true))

	sn, err := b.Snapshot(ctx)
	must(err)
	defer sn.Close()
	path := filepath.Join(t.TempDir(), "source.snap")
	f, err := os.Create(path)
	must(err)
	_, err = snapshot.Write(f, sn)
	must(err)
	must(f.Close())
	return path, want
}
