package etcd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// TestPrefixRange: a replay's range under a prefix is the one clientv3's
// namespace package makes: a key alone, a range, and every key from a key
// to the end of the prefix (or of the key space, with none).
func TestPrefixRange(t *testing.T) {
	for _, c := range []struct {
		prefix, key, end string
		wantKey, wantEnd string
	}{
		{"/ns/kv/", "a", "", "/ns/kv/a", ""},
		{"/ns/kv/", "a", "b", "/ns/kv/a", "/ns/kv/b"},
		{"/ns/kv/", "a", "\x00", "/ns/kv/a", "/ns/kv0"},
		{"", "a", "\x00", "a", "\x00"},
		{"", "a", "", "a", ""},
	} {
		k, e := prefixRange(c.prefix, []byte(c.key), []byte(c.end))
		if string(k) != c.wantKey || string(e) != c.wantEnd {
			t.Errorf("prefixRange(%q, %q, %q) = %q, %q, want %q, %q", c.prefix, c.key, c.end, k, e, c.wantKey, c.wantEnd)
		}
	}
}

// TestHistoryWithEtcdAuth: history pages read etcd's gRPC watch directly
// (in fragments); through a gateway with etcd credentials they are
// authenticated as clientv3's calls are, and they keep the namespace,
// the filters and the previous versions: a range from a key to the end
// of the namespace sees none of another namespace's keys.
func TestHistoryWithEtcdAuth(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1, etcdtest.WithAuth())
	creds := func(o *Options) { o.Username, o.Password = "root", etcdtest.RootPassword }
	b := openGateway(t, c, "/ha/", creds)
	other := openGateway(t, c, "/hb/", creds)
	put(t, other, "k", "other")
	r1 := put(t, b, "k", "1")
	r2 := put(t, b, "k", "2")
	put(t, other, "z", "other")
	del, err := b.Delete(context.Background(), kv.DeleteRequest{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, b, kv.HistoryRequest{Key: []byte("a"), End: []byte{0}, StartRevision: r1, PrevKV: true, Limit: 1})
	want := []string{
		fmt.Sprintf("put k=1@%d", r1),
		fmt.Sprintf("put k=2@%d (was 1)", r2),
		fmt.Sprintf("delete k@%d (was 2)", del.Revision),
	}
	if !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	got, _ = readAll(t, b, kv.HistoryRequest{Key: []byte("k"), StartRevision: r1, NoPut: true})
	if want := want[2:]; len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf("delete k@%d", del.Revision)) {
		t.Errorf("history without puts = %q, want %q", got, want)
	}
}
