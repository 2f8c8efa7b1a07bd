package docs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// softTB turns the Fatal calls of CheckReply into a panic that
// checkAnswer recovers, so that answers can be checked away from the
// test's goroutine (in a proxy) or where an error is the way to fail (in
// a transport).
type softTB struct {
	testing.TB
}

type softFailure struct{ msg string }

func (softTB) Helper()                           {}
func (softTB) Fatal(args ...any)                 { panic(softFailure{fmt.Sprint(args...)}) }
func (softTB) Fatalf(format string, args ...any) { panic(softFailure{fmt.Sprintf(format, args...)}) }

// checkAnswer runs CheckReply on an answer the test did not read through
// server.do, and returns what it found wrong. The answer's body is read
// and put back.
func checkAnswer(tb testing.TB, req *http.Request, resp *http.Response) (err error) {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: reading the body: %w", req.Method, req.URL.RequestURI(), err)
	}
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(softFailure)
			if !ok {
				panic(p)
			}
			err = fmt.Errorf("%s", f.msg)
		}
	}()
	e2e.CheckReply(softTB{tb}, &e2e.Reply{
		Req:    req.Method + " " + req.URL.RequestURI(),
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   body,
	})
	return nil
}

// checkingTransport checks every answer with CheckReply; a failed check
// is the request's error.
type checkingTransport struct {
	tb   testing.TB
	next http.RoundTripper
}

func (t checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := checkAnswer(t.tb, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// TestGoClient drives the Go client generated from the OpenAPI document
// (openapi/client) against the real server: put, get, range with
// pagination, history, txn, leases, locks and elections. Every answer it
// receives passes CheckReply, and so the document.
func TestGoClient(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	httpClient := &http.Client{Timeout: e2e.RequestTimeout, Transport: checkingTransport{tb: t, next: &http.Transport{}}}
	t.Cleanup(httpClient.CloseIdleConnections)
	kv, err := client.NewClientWithResponses(s.URL, client.WithHTTPClient(httpClient))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	put := func(key, value string, params *client.PutKeyParams) *client.PutResponse {
		t.Helper()
		res, err := kv.PutKeyWithBodyWithResponse(ctx, key, params, "application/octet-stream", strings.NewReader(value))
		if err != nil {
			t.Fatalf("PutKey(%q): %v", key, err)
		}
		if res.JSON200 == nil {
			t.Fatalf("PutKey(%q) = %d %s, want 200", key, res.StatusCode(), res.Body)
		}
		return res.JSON200
	}
	get := func(key string, params *client.GetKeyParams) *client.GetKeyResponse {
		t.Helper()
		res, err := kv.GetKeyWithResponse(ctx, key, params)
		if err != nil {
			t.Fatalf("GetKey(%q): %v", key, err)
		}
		return res
	}

	t.Run("put and get", func(t *testing.T) {
		first := put("go/a/b", "one", nil)
		if first.PrevKv != nil {
			t.Errorf("PutKey(go/a/b) of a new key: prev_kv %+v, want none", first.PrevKv)
		}
		second := put("go/a/b", "two", &client.PutKeyParams{PrevKv: e2e.Ptr(true)})
		if second.PrevKv == nil || second.PrevKv.Value == nil || *second.PrevKv.Value != "one" {
			t.Errorf("PutKey(go/a/b, prev_kv) = %+v, want prev_kv one", second)
		}
		got := get("go/a/b", nil)
		if got.JSON200 == nil {
			t.Fatalf("GetKey(go/a/b) = %d %s, want 200", got.StatusCode(), got.Body)
		}
		k := got.JSON200.Kv
		if k.Key == nil || *k.Key != "go/a/b" || k.Value == nil || *k.Value != "two" ||
			k.Version != 2 || k.CreateRevision != first.Header.Revision || k.ModRevision != second.Header.Revision {
			t.Errorf("GetKey(go/a/b) = %+v, want two at version 2, created at %d, modified at %d", k, first.Header.Revision, second.Header.Revision)
		}
		if etag := got.HTTPResponse.Header.Get("ETag"); etag != fmt.Sprintf("%q", fmt.Sprint(second.Header.Revision)) {
			t.Errorf("GetKey(go/a/b): ETag %s, want the mod revision %d", etag, second.Header.Revision)
		}
		raw := get("go/a/b", &client.GetKeyParams{Raw: e2e.Ptr(true)})
		if string(raw.Body) != "two" || raw.HTTPResponse.Header.Get("X-Version") != "2" {
			t.Errorf("GetKey(go/a/b, raw) = %q with X-Version %s, want two and 2", raw.Body, raw.HTTPResponse.Header.Get("X-Version"))
		}
		old := get("go/a/b", &client.GetKeyParams{Revision: &first.Header.Revision})
		if old.JSON200 == nil || *old.JSON200.Kv.Value != "one" {
			t.Errorf("GetKey(go/a/b, revision=%d) = %s, want one", first.Header.Revision, old.Body)
		}
		missing := get("go/none", nil)
		if missing.JSON404 == nil || missing.JSON404.Error.Code != client.ErrorBodyCodeKeyNotFound {
			t.Errorf("GetKey(go/none) = %d %s, want 404 key_not_found", missing.StatusCode(), missing.Body)
		}
		binary := put("go/\xff", "\x00\xfe", nil)
		bin := get("go/\xff", nil)
		if bin.JSON200 == nil || bin.JSON200.Kv.KeyBase64 == nil || string(*bin.JSON200.Kv.KeyBase64) != "go/\xff" ||
			bin.JSON200.Kv.ValueBase64 == nil || string(*bin.JSON200.Kv.ValueBase64) != "\x00\xfe" {
			t.Errorf("GetKey(go/\\xff) = %s, want key_base64 and value_base64 (put at %d)", bin.Body, binary.Header.Revision)
		}
	})

	t.Run("range with pagination", func(t *testing.T) {
		keys := []string{"go/p/0", "go/p/1", "go/p/2", "go/p/3", "go/p/4"}
		for _, k := range keys {
			put(k, "v"+k, nil)
		}
		var seen []string
		params := &client.ListKeysParams{Key: e2e.Ptr("go/p/"), Prefix: e2e.Ptr(true), Limit: e2e.Ptr(int64(2))}
		for page := 0; ; page++ {
			res, err := kv.ListKeysWithResponse(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if res.JSON200 == nil {
				t.Fatalf("ListKeys(go/p/, page %d) = %d %s, want 200", page, res.StatusCode(), res.Body)
			}
			l := res.JSON200
			if l.Count != int64(len(keys)) {
				t.Errorf("ListKeys(go/p/, page %d): count %d, want %d", page, l.Count, len(keys))
			}
			for _, item := range l.Kvs {
				seen = append(seen, *item.Key)
			}
			if page == 0 {
				put("go/p/5", "written after the first page", nil)
			}
			if !l.More {
				break
			}
			if l.NextPageToken == nil || page > len(keys) {
				t.Fatalf("ListKeys(go/p/, page %d) = %s: more without a usable next_page_token", page, res.Body)
			}
			params.PageToken = l.NextPageToken
		}
		// Every page is read at the first page's revision.
		if !slices.Equal(seen, keys) {
			t.Errorf("ListKeys(go/p/) by pages of 2 = %q, want %q", seen, keys)
		}
	})

	t.Run("history", func(t *testing.T) {
		first := put("go/h/k", "one", nil)
		put("go/h/k", "two", nil)
		del, err := kv.DeleteKeyWithResponse(ctx, "go/h/k", nil)
		if err != nil || del.JSON200 == nil {
			t.Fatalf("DeleteKey(go/h/k) = %v, %v", del, err)
		}
		// Newest first, two events a page, with the previous versions.
		var seen []string
		params := &client.ReadHistoryParams{Key: e2e.Ptr("go/h/k"), Order: e2e.Ptr(client.ReadHistoryParamsOrderDescend), PrevKv: e2e.Ptr(true), Limit: e2e.Ptr(int64(2))}
		for page := 0; ; page++ {
			res, err := kv.ReadHistoryWithResponse(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if res.JSON200 == nil {
				t.Fatalf("ReadHistory(go/h/k, page %d) = %d %s, want 200", page, res.StatusCode(), res.Body)
			}
			for _, ev := range res.JSON200.Events {
				s := fmt.Sprintf("%s@%d", ev.Type, ev.Kv.ModRevision)
				if ev.PrevKv != nil {
					s += " was " + *ev.PrevKv.Value
				}
				seen = append(seen, s)
			}
			if !res.JSON200.More {
				break
			}
			if res.JSON200.NextPageToken == nil || page > 3 {
				t.Fatalf("ReadHistory(go/h/k, page %d) = %s: more without a usable next_page_token", page, res.Body)
			}
			params.PageToken = res.JSON200.NextPageToken
		}
		rev := first.Header.Revision
		want := []string{fmt.Sprintf("delete@%d was two", rev+2), fmt.Sprintf("put@%d was one", rev+1), fmt.Sprintf("put@%d", rev)}
		if !slices.Equal(seen, want) {
			t.Errorf("ReadHistory(go/h/k, descend, prev_kv) by pages of 2 = %q, want %q", seen, want)
		}
		future, err := kv.ReadHistoryWithResponse(ctx, &client.ReadHistoryParams{Key: e2e.Ptr("go/h/k"), EndRevision: e2e.Ptr(rev + 1000)})
		if err != nil {
			t.Fatal(err)
		}
		if future.JSON400 == nil || future.JSON400.Error.Code != client.ErrorBodyCodeFutureRevision {
			t.Errorf("ReadHistory(end_revision in the future) = %d %s, want 400 future_revision", future.StatusCode(), future.Body)
		}
	})

	t.Run("txn", func(t *testing.T) {
		put("go/t/lock", "free", nil)
		body := client.TxnRequest{
			Compare: &[]client.Compare{{Key: e2e.Ptr("go/t/lock"), Target: client.CompareTargetValue, Result: client.Equal, Value: e2e.Ptr("free")}},
			Success: &[]client.RequestOp{
				{Put: &client.PutOp{Key: e2e.Ptr("go/t/lock"), Value: e2e.Ptr("taken"), PrevKv: e2e.Ptr(true)}},
				{Put: &client.PutOp{Key: e2e.Ptr("go/t/owner"), Value: e2e.Ptr("go")}},
				{Range: &client.RangeOp{Key: e2e.Ptr("go/t/"), Prefix: e2e.Ptr(true)}},
			},
			Failure: &[]client.RequestOp{{Range: &client.RangeOp{Key: e2e.Ptr("go/t/lock")}}},
		}
		won, err := kv.RunTxnWithResponse(ctx, body)
		if err != nil {
			t.Fatal(err)
		}
		if won.JSON200 == nil || !won.JSON200.Succeeded || len(won.JSON200.Responses) != 3 {
			t.Fatalf("RunTxn(lock) = %d %s, want success with 3 answers", won.StatusCode(), won.Body)
		}
		rs := won.JSON200.Responses
		if rs[0].Put == nil || rs[0].Put.PrevKv == nil || *rs[0].Put.PrevKv.Value != "free" {
			t.Errorf("RunTxn(lock): first answer %s, want the put with prev_kv free", won.Body)
		}
		if rs[2].Range == nil || len(rs[2].Range.Kvs) != 2 || *rs[2].Range.Kvs[0].Value != "taken" || rs[2].Range.Header.Revision != won.JSON200.Header.Revision {
			t.Errorf("RunTxn(lock): range answer %s, want both keys at the txn's revision", won.Body)
		}
		lost, err := kv.RunTxnWithResponse(ctx, body)
		if err != nil {
			t.Fatal(err)
		}
		if lost.JSON200 == nil || lost.JSON200.Succeeded || lost.JSON200.Responses[0].Range == nil || *lost.JSON200.Responses[0].Range.Kvs[0].Value != "taken" {
			t.Errorf("RunTxn(lock) again = %s, want failure with the lock's range", lost.Body)
		}
		nested, err := kv.RunTxnWithResponse(ctx, client.TxnRequest{Success: &[]client.RequestOp{{Txn: &client.TxnRequest{
			Compare: &[]client.Compare{{Key: e2e.Ptr("go/t/owner"), Target: client.CompareTargetVersion, Result: client.Greater, Version: e2e.Ptr(int64(0))}},
			Success: &[]client.RequestOp{{Delete: &client.DeleteOp{Key: e2e.Ptr("go/t/"), Prefix: e2e.Ptr(true), PrevKv: e2e.Ptr(true)}}},
		}}}})
		if err != nil {
			t.Fatal(err)
		}
		if nested.JSON200 == nil || nested.JSON200.Responses[0].Txn == nil || !nested.JSON200.Responses[0].Txn.Succeeded ||
			nested.JSON200.Responses[0].Txn.Responses[0].Delete == nil || nested.JSON200.Responses[0].Txn.Responses[0].Delete.Deleted != 2 {
			t.Errorf("RunTxn(nested delete) = %d %s, want the nested txn to delete 2 keys", nested.StatusCode(), nested.Body)
		}
		twice, err := kv.RunTxnWithResponse(ctx, client.TxnRequest{Success: &[]client.RequestOp{
			{Put: &client.PutOp{Key: e2e.Ptr("go/t/x")}}, {Put: &client.PutOp{Key: e2e.Ptr("go/t/x")}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if twice.JSON400 == nil || twice.JSON400.Error.Code != client.ErrorBodyCodeInvalidArgument {
			t.Errorf("RunTxn(two puts of one key) = %d %s, want 400 invalid_argument", twice.StatusCode(), twice.Body)
		}
	})

	t.Run("leases", func(t *testing.T) {
		granted, err := kv.GrantLeaseWithResponse(ctx, client.LeaseGrantRequest{Ttl: 60})
		if err != nil {
			t.Fatal(err)
		}
		if granted.JSON201 == nil || granted.JSON201.Ttl != 60 {
			t.Fatalf("GrantLease(60) = %d %s, want 201 with ttl 60", granted.StatusCode(), granted.Body)
		}
		id := granted.JSON201.Id
		put("go/l/a", "leased", &client.PutKeyParams{Lease: &id})

		ttl, err := kv.LeaseTimeToLiveWithResponse(ctx, id, &client.LeaseTimeToLiveParams{Keys: e2e.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if ttl.JSON200 == nil || ttl.JSON200.GrantedTtl != 60 || ttl.JSON200.Keys == nil || !slices.Equal(*ttl.JSON200.Keys, []string{"go/l/a"}) {
			t.Errorf("LeaseTimeToLive(%d, keys) = %d %s, want granted_ttl 60 and keys [go/l/a]", id, ttl.StatusCode(), ttl.Body)
		}
		if got := get("go/l/a", nil); got.JSON200 == nil || got.JSON200.Kv.Lease != id {
			t.Errorf("GetKey(go/l/a) = %s, want lease %d", got.Body, id)
		}
		renewed, err := kv.KeepAliveLeaseWithResponse(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if renewed.JSON200 == nil || renewed.JSON200.Ttl != 60 {
			t.Errorf("KeepAliveLease(%d) = %d %s, want ttl 60", id, renewed.StatusCode(), renewed.Body)
		}
		list, err := kv.ListLeasesWithResponse(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if list.JSON200 == nil || !slices.ContainsFunc(list.JSON200.Leases, func(l client.LeaseListItem) bool { return l.Id == id }) {
			t.Errorf("ListLeases() = %s, want %d among them", list.Body, id)
		}
		revoked, err := kv.RevokeLeaseWithResponse(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if revoked.JSON200 == nil {
			t.Fatalf("RevokeLease(%d) = %d %s, want 200", id, revoked.StatusCode(), revoked.Body)
		}
		if got := get("go/l/a", nil); got.JSON404 == nil {
			t.Errorf("GetKey(go/l/a) after the revoke = %d %s, want 404", got.StatusCode(), got.Body)
		}
		again, err := kv.KeepAliveLeaseWithResponse(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if again.JSON404 == nil || again.JSON404.Error.Code != client.ErrorBodyCodeLeaseNotFound {
			t.Errorf("KeepAliveLease(%d) after the revoke = %d %s, want 404 lease_not_found", id, again.StatusCode(), again.Body)
		}
	})

	t.Run("locks and elections", func(t *testing.T) {
		lease := func() int64 {
			t.Helper()
			granted, err := kv.GrantLeaseWithResponse(ctx, client.LeaseGrantRequest{Ttl: 60})
			if err != nil || granted.JSON201 == nil {
				t.Fatalf("GrantLease(60) = %v, %v", granted, err)
			}
			return granted.JSON201.Id
		}
		// A name with a slash: the client escapes it as %2F.
		holder, waiter := lease(), lease()
		held, err := kv.LockAcquireWithResponse(ctx, "go/jobs", &client.LockAcquireParams{Timeout: e2e.Ptr("10s")}, client.LockRequest{Lease: holder})
		if err != nil {
			t.Fatal(err)
		}
		if held.JSON200 == nil || held.JSON200.Key == nil || *held.JSON200.Key != fmt.Sprintf("go/jobs/%x", holder) {
			t.Fatalf("LockAcquire(go/jobs) = %d %s, want the key go/jobs/%x", held.StatusCode(), held.Body, holder)
		}
		busy, err := kv.LockAcquireWithResponse(ctx, "go/jobs", &client.LockAcquireParams{Timeout: e2e.Ptr("0s")}, client.LockRequest{Lease: waiter})
		if err != nil {
			t.Fatal(err)
		}
		if busy.JSON408 == nil || busy.JSON408.Error.Code != client.ErrorBodyCodeLockTimeout {
			t.Errorf("LockAcquire(go/jobs) while held = %d %s, want 408 lock_timeout", busy.StatusCode(), busy.Body)
		}
		released, err := kv.LockReleaseWithResponse(ctx, "go/jobs", &client.LockReleaseParams{Key: held.JSON200.Key})
		if err != nil {
			t.Fatal(err)
		}
		if released.JSON200 == nil || released.JSON200.Header.Revision <= held.JSON200.Header.Revision {
			t.Errorf("LockRelease(go/jobs) = %d %s, want 200 at a later revision", released.StatusCode(), released.Body)
		}

		won, err := kv.ElectionCampaignWithResponse(ctx, "go-db", nil, client.CampaignRequest{Lease: holder, Value: e2e.Ptr("host-a")})
		if err != nil {
			t.Fatal(err)
		}
		if won.JSON200 == nil || won.JSON200.Leader.Lease != holder || *won.JSON200.Leader.Name != "go-db" {
			t.Fatalf("ElectionCampaign(go-db) = %d %s, want lease %d leading", won.StatusCode(), won.Body, holder)
		}
		leader := won.JSON200.Leader
		proclaimed, err := kv.ElectionProclaimWithResponse(ctx, "go-db", client.ProclaimRequest{Leader: leader, Value: e2e.Ptr("host-a2")})
		if err != nil {
			t.Fatal(err)
		}
		if proclaimed.JSON200 == nil {
			t.Errorf("ElectionProclaim(go-db) = %d %s, want 200", proclaimed.StatusCode(), proclaimed.Body)
		}
		current, err := kv.ElectionLeaderWithResponse(ctx, "go-db")
		if err != nil {
			t.Fatal(err)
		}
		if current.JSON200 == nil || *current.JSON200.Kv.Value != "host-a2" || current.JSON200.Kv.CreateRevision != leader.Revision {
			t.Errorf("ElectionLeader(go-db) = %d %s, want host-a2 created at %d", current.StatusCode(), current.Body, leader.Revision)
		}
		resigned, err := kv.ElectionResignWithResponse(ctx, "go-db", client.ResignRequest{Leader: leader})
		if err != nil {
			t.Fatal(err)
		}
		if resigned.JSON200 == nil {
			t.Errorf("ElectionResign(go-db) = %d %s, want 200", resigned.StatusCode(), resigned.Body)
		}
		again, err := kv.ElectionResignWithResponse(ctx, "go-db", client.ResignRequest{Leader: leader})
		if err != nil {
			t.Fatal(err)
		}
		if again.JSON412 == nil || again.JSON412.Error.Code != client.ErrorBodyCodeNotLeader {
			t.Errorf("ElectionResign(go-db) again = %d %s, want 412 not_leader", again.StatusCode(), again.Body)
		}
		none, err := kv.ElectionLeaderWithResponse(ctx, "go-db")
		if err != nil {
			t.Fatal(err)
		}
		if none.JSON404 == nil || none.JSON404.Error.Code != client.ErrorBodyCodeNoLeader {
			t.Errorf("ElectionLeader(go-db) after resigning = %d %s, want 404 no_leader", none.StatusCode(), none.Body)
		}
	})
}
