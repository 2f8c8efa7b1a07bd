package tests

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestLeaseListPaged: GET /v1/leases lists the leases by ascending ID, at
// most limit a page (1000 by default, 10000 at most), and next_page_token
// continues after the last ID of the page; a bad limit or a token the
// server did not issue for this list is 400.
func TestLeaseListPaged(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	var want []int64
	for i := range 25 {
		id := int64(1+i*i*1000) + 1<<40
		s.Do(t, "POST", "/v1/leases", []byte(fmt.Sprintf(`{"ttl":600,"id":%d}`, id))).Want(t, http.StatusCreated)
		want = append(want, id)
	}
	var auto client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`)).Ok(t, http.StatusCreated, &auto)
	want = append(want, auto.Id)
	slices.Sort(want)

	var whole client.LeaseList
	r := s.Do(t, "GET", "/v1/leases", nil).Ok(t, http.StatusOK, &whole)
	if got := pageIDs(whole); !slices.Equal(got, want) || whole.More || whole.NextPageToken != nil {
		t.Fatalf("%s = %s, want %v on one page", r.Req, r.Body, want)
	}
	var got []int64
	path := "/v1/leases?limit=10"
	for pages := 1; ; pages++ {
		var page client.LeaseList
		r := s.Do(t, "GET", path, nil).Ok(t, http.StatusOK, &page)
		if len(page.Leases) > 10 || page.More != (page.NextPageToken != nil) || pages > 3 {
			t.Fatalf("%s = %s: over 10 leases, a token without more, or a fourth page", r.Req, r.Body)
		}
		got = append(got, pageIDs(page)...)
		if !page.More {
			break
		}
		path = "/v1/leases?limit=10&page_token=" + url.QueryEscape(*page.NextPageToken)
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages of 10: %v, want %v", got, want)
	}
	for _, bad := range []string{"limit=0", "limit=10001", "limit=x", "page_token=forged", "lmit=3"} {
		s.Do(t, "GET", "/v1/leases?"+bad, nil).WantError(t, http.StatusBadRequest, "invalid_argument")
	}
	// A token of another list (a range's) is not this list's.
	s.Put(t, "a", "1")
	s.Put(t, "b", "1")
	var keys client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=a&range_end=c&limit=1", nil).Ok(t, http.StatusOK, &keys)
	s.Do(t, "GET", "/v1/leases?page_token="+url.QueryEscape(*keys.NextPageToken), nil).WantError(t, http.StatusBadRequest, "invalid_argument")
}

func pageIDs(l client.LeaseList) []int64 {
	ids := make([]int64, len(l.Leases))
	for i, item := range l.Leases {
		ids[i] = item.Id
	}
	return ids
}

// TestMaxLeases: past --max-leases a grant answers 429 too_many_requests
// (with Retry-After) and grants nothing; once a lease is revoked, grants
// pass again (over etcd after the gateway's next count, within a second).
func TestMaxLeases(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-leases=3")
	var ids []int64
	for range 3 {
		var l client.LeaseResponse
		s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`)).Ok(t, http.StatusCreated, &l)
		ids = append(ids, l.Id)
	}
	r := s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`))
	r.WantError(t, http.StatusTooManyRequests, "too_many_requests")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("%s = 429 without Retry-After", r.Req)
	}
	var list client.LeaseList
	s.Do(t, "GET", "/v1/leases", nil).Ok(t, http.StatusOK, &list)
	if len(list.Leases) != 3 {
		t.Fatalf("after the refused grant: %v, want 3 leases", pageIDs(list))
	}
	if st := s.Status(t); st.Leases != 3 {
		t.Errorf("status: %d leases, want 3", st.Leases)
	}
	s.Do(t, "DELETE", fmt.Sprintf("/v1/leases/%d", ids[0]), nil).Want(t, http.StatusOK)
	e2e.Eventually(t, e2e.RequestTimeout, func() (bool, string) {
		r := s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`))
		if r.Status == http.StatusTooManyRequests {
			return false, "grants still refused after a revoke"
		}
		r.Want(t, http.StatusCreated)
		return true, ""
	})
}

// TestLeaseKeysBounded: the keys of a lease are an answer like a list's:
// past --max-response-bytes GET /v1/leases/{id}?keys=true answers 400
// naming the bound, having built no more of the answer, and the lease
// without its keys still answers.
func TestLeaseKeysBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-response-bytes=4096")
	var l client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`)).Ok(t, http.StatusCreated, &l)
	for i := range 40 {
		s.Do(t, "PUT", fmt.Sprintf("/v1/kv/held/%03d-%0100d?lease=%d", i, 0, l.Id), []byte("v")).Want(t, http.StatusOK)
	}
	path := fmt.Sprintf("/v1/leases/%d", l.Id)
	e := s.Do(t, "GET", path+"?keys=true", nil).WantError(t, http.StatusBadRequest, "invalid_argument")
	if e.MaxResponseBytes == nil || *e.MaxResponseBytes != 4096 {
		t.Errorf("GET %s?keys=true = %+v, want max_response_bytes 4096", path, e)
	}
	var ttl client.LeaseTimeToLive
	s.Do(t, "GET", path, nil).Ok(t, http.StatusOK, &ttl)
	if ttl.GrantedTtl != 600 {
		t.Errorf("GET %s = %+v, want granted_ttl 600", path, ttl)
	}
	s.Do(t, "DELETE", "/v1/kv?key=held/&prefix=true", nil).Want(t, http.StatusOK)
	s.Do(t, "PUT", fmt.Sprintf("/v1/kv/held/one?lease=%d", l.Id), []byte("v")).Want(t, http.StatusOK)
	s.Do(t, "GET", path+"?keys=true", nil).Ok(t, http.StatusOK, &ttl)
	if ttl.Keys == nil || len(*ttl.Keys) != 1 {
		t.Errorf("GET %s?keys=true = %+v, want held/one", path, ttl)
	}
}
