package tests

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestPageTokenForgery plays a user allowed to read the key a and the
// prefix app/ only, who wants the key secret. Page tokens are sealed by
// the server: a hand-made one (in the unkeyed layout of earlier versions,
// which let a token on a single-key list read its own start key) or a
// tampered one is refused, a token is refused on a single-key read, and
// a genuine token of a list the user could not make (root's, of secret/)
// serves no other range. Nothing of secret ever reaches the user.
func TestPageTokenForgery(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	none := e2e.AuthCaller{Name: "setup"}
	for _, u := range []string{"root", "reader"} {
		e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", fmt.Sprintf(`{"name":%q,"password":"pw"}`, u))
	}
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"root"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"r"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/r/permissions", `{"key":"a","type":"read"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/r/permissions", `{"key":"app/","prefix":true,"type":"read"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/reader/roles/r", "")
	for _, k := range []string{"a", "app/1", "app/2", "app/3", "secret", "secret/1", "secret/2", "secret/3"} {
		s.Put(t, k, "value of "+k)
	}
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "pw")}
	reader := e2e.AuthCaller{Name: "reader", Token: e2e.AuthLogin(t, s, "reader", "pw")}
	rev := s.Do(t, "GET", "/v1/kv/a", nil, reader.Header()...).Want(t, http.StatusOK).Revision(t)

	// The unkeyed layout: format 1, uvarint revision, FNV-64a of the range
	// (key, 0xff, end) big-endian, then the start key.
	unkeyed := func(key, end, start string) string {
		h := fnv.New64a()
		h.Write([]byte(key))
		h.Write([]byte{0xff})
		h.Write([]byte(end))
		b := binary.AppendUvarint([]byte{1}, uint64(rev))
		b = binary.BigEndian.AppendUint64(b, h.Sum64())
		return base64.RawURLEncoding.EncodeToString(append(b, start...))
	}
	var rootPage client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=secret/&prefix=true&limit=1", nil, root.Header()...).Ok(t, http.StatusOK, &rootPage)
	var ownPage client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=app/&prefix=true&limit=1", nil, reader.Header()...).Ok(t, http.StatusOK, &ownPage)
	if e2e.Deref(rootPage.NextPageToken) == "" || e2e.Deref(ownPage.NextPageToken) == "" {
		t.Fatalf("first pages of secret/ and app/ gave tokens %q and %q, want both", e2e.Deref(rootPage.NextPageToken), e2e.Deref(ownPage.NextPageToken))
	}
	tampered := []byte(e2e.Deref(ownPage.NextPageToken))
	tampered[len(tampered)/2] ^= 'A' ^ 'B'
	for _, tt := range []struct{ name, query string }{
		{"unkeyed token on a single key", "key=a&page_token=" + unkeyed("a", "", "secret")},
		{"unkeyed token on a range", "key=app/&prefix=true&page_token=" + unkeyed("app/", "app0", "secret")},
		{"root's token of secret/ on app/", "key=app/&prefix=true&page_token=" + e2e.Deref(rootPage.NextPageToken)},
		{"root's token of secret/ on a", "key=a&page_token=" + e2e.Deref(rootPage.NextPageToken)},
		{"own token on a single key", "key=a&page_token=" + e2e.Deref(ownPage.NextPageToken)},
		{"own token on another range", "key=app/1&range_end=app/3&page_token=" + e2e.Deref(ownPage.NextPageToken)},
		{"own token with a filter added", "key=app/&prefix=true&min_mod_revision=1&page_token=" + e2e.Deref(ownPage.NextPageToken)},
		{"own token tampered", "key=app/&prefix=true&page_token=" + url.QueryEscape(string(tampered))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "GET", "/v1/kv?"+tt.query, nil, reader.Header()...)
			r.WantError(t, http.StatusBadRequest, "invalid_argument")
		})
	}
	// The user's own token still serves its own list.
	var next client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=app/&prefix=true&limit=1&page_token="+e2e.Deref(ownPage.NextPageToken), nil, reader.Header()...).Ok(t, http.StatusOK, &next)
	if got := e2e.ListKeys(next); len(got) != 1 || got[0] != "app/2" {
		t.Errorf("the second page of app/ holds %q, want app/2", got)
	}
	// Root's token serves root's list; the reader may not read that list
	// at all, token or not.
	s.Do(t, "GET", "/v1/kv?key=secret/&prefix=true&limit=1&page_token="+e2e.Deref(rootPage.NextPageToken), nil, root.Header()...).Want(t, http.StatusOK)
	e2e.WantRefused(t, s.Do(t, "GET", "/v1/kv?key=secret/&prefix=true&limit=1&page_token="+e2e.Deref(rootPage.NextPageToken), nil, reader.Header()...), false)
}
