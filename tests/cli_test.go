package tests

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestCLIExitStatuses: a command exits 0 on success, 1 with the API's
// code and message on stderr when the API answers an error (a missing
// key, a failed If-Match) or the server cannot be reached, and 2 for a
// usage error, with the nearest flag or command.
func TestCLIExitStatuses(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	cliOK(t, s.URL, "", "put", "counter", "7")
	rev := strings.TrimSpace(cliOK(t, s.URL, "", "put", "counter", "8", "-o", "value"))

	cliFails(t, s.URL, 1, "httpkv: key_not_found: ", "get", "nothing")
	cliFails(t, s.URL, 1, "httpkv: precondition_failed: ", "put", "counter", "9", "--if-match", fmt.Sprint(mustInt(t, rev)-1))
	cliFails(t, s.URL, 1, "httpkv: precondition_failed: ", "put", "counter", "9", "--if-absent")
	if got := cliOK(t, s.URL, "", "get", "counter", "-o", "value"); got != "8" {
		t.Errorf("after two failed puts, counter = %q, want 8", got)
	}
	cliFails(t, s.URL, 2, "unknown flag --prefx (did you mean --prefix?)", "get", "a/", "--prefx")
	cliFails(t, s.URL, 2, `unknown command "gte" (did you mean "get"?)`, "gte", "a")
	cliFails(t, s.URL, 2, "missing arguments", "put")
	cliFails(t, s.URL, 2, "(did you mean --listen?)", "--lisen", "127.0.0.1:0")

	down := "http://" + e2e.FreeAddr(t)
	cliFails(t, down, 1, "httpkv: cannot reach the server at "+down, "get", "counter")
	cliFails(t, s.URL, 1, "cannot reach the server at "+down, "status", "--url", down)

	if out := cliOK(t, s.URL, "", "get", "--help"); !strings.Contains(out, "Usage:\n  httpkv get KEY") {
		t.Errorf("httpkv get --help printed %q, want its usage", out)
	}
}

func mustInt(tb testing.TB, s string) int64 {
	tb.Helper()
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		tb.Fatalf("%q is not a number", s)
	}
	return n
}

// TestCLIKeys drives put, get, del, txn, history, status and compact,
// in each output format.
func TestCLIKeys(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)

	put := jsonLines(t, "put", cliOK(t, s.URL, "", "put", "config/db/url", "postgres://db:5432", "-o", "json"), "PutResponse")
	first := int64(put[0]["header"].(map[string]any)["revision"].(float64))
	cliOK(t, s.URL, "", "put", "config/db/url", "postgres://db2:5432")
	// The value from stdin, byte for byte, flags after the argument.
	cliOK(t, s.URL, "line one\nline two\n", "put", "config/motd", "--url", s.URL)
	if got := cliOK(t, s.URL, "", "get", "config/motd", "-o", "value"); got != "line one\nline two\n" {
		t.Errorf("get config/motd -o value = %q, want the bytes put from stdin", got)
	}
	if got := cliOK(t, s.URL, "", "get", "config/db/url"); got != "config/db/url\npostgres://db2:5432\n" {
		t.Errorf("get config/db/url = %q, want the key and the value on two lines", got)
	}
	if got := cliOK(t, s.URL, "", "get", "config/db/url", "--rev", fmt.Sprint(first), "-o", "value"); got != "postgres://db:5432" {
		t.Errorf("get --rev %d = %q, want the first value", first, got)
	}
	got := jsonLines(t, "get", cliOK(t, s.URL, "", "-o", "json", "get", "config/db/url"), "GetResponse")
	if kv := got[0]["kv"].(map[string]any); kv["value"] != "postgres://db2:5432" || kv["version"] != 2.0 {
		t.Errorf("get -o json = %v, want the API's answer with version 2", got)
	}

	for i := range 5 {
		cliOK(t, s.URL, "", "put", fmt.Sprintf("p/%d", i), fmt.Sprintf("v%d", i))
	}
	if got := cliOK(t, s.URL, "", "get", "p/", "--prefix", "-o", "value"); got != "v0\nv1\nv2\nv3\nv4\n" {
		t.Errorf("get p/ --prefix -o value = %q, want the five values", got)
	}
	if got := cliOK(t, s.URL, "", "get", "p/", "--prefix", "--keys-only", "--limit", "2"); got != "p/0\np/1\n" {
		t.Errorf("get p/ --prefix --keys-only --limit 2 = %q, want p/0 and p/1", got)
	}
	if got := cliOK(t, s.URL, "", "get", "p/1", "--range-end", "p/3", "--keys-only"); got != "p/1\np/2\n" {
		t.Errorf("get p/1 --range-end p/3 = %q, want p/1 and p/2", got)
	}
	if got := cliOK(t, s.URL, "", "get", "", "--prefix", "--count-only"); got != "7\n" {
		t.Errorf("get \"\" --prefix --count-only = %q, want 7", got)
	}
	list := jsonLines(t, "get --prefix", cliOK(t, s.URL, "", "get", "p/", "--prefix", "-o", "json"), "ListResponse")
	if len(list) != 1 || len(list[0]["kvs"].([]any)) != 5 {
		t.Errorf("get p/ --prefix -o json = %v, want one page of 5 keys", list)
	}
	if got := cliOK(t, s.URL, "", "get", "none/", "--prefix"); got != "" {
		t.Errorf("get of an empty range printed %q, want nothing", got)
	}

	// A txn from stdin: the second run finds the key taken.
	txn := `{"compare":[{"key":"leader","target":"create","result":"equal","create_revision":0}],
		"success":[{"put":{"key":"leader","value":"me"}}],"failure":[{"range":{"key":"leader"}}]}`
	if got := cliOK(t, s.URL, txn, "txn"); got != "SUCCESS\nOK\n" {
		t.Errorf("txn = %q, want SUCCESS and OK", got)
	}
	res := jsonLines(t, "txn", cliOK(t, s.URL, txn, "txn", "-o", "json"), "TxnResponse")
	if res[0]["succeeded"] != false {
		t.Errorf("txn again = %v, want the failure branch", res)
	}
	if got := cliOK(t, s.URL, txn, "txn"); got != "FAILURE\nleader\nme\n" {
		t.Errorf("txn again = %q, want FAILURE and the range", got)
	}
	cliFails(t, s.URL, 2, "stdin is not JSON", "txn")

	if got := cliOK(t, s.URL, "", "del", "p/", "--prefix"); got != "5\n" {
		t.Errorf("del p/ --prefix = %q, want 5", got)
	}
	del := jsonLines(t, "del", cliOK(t, s.URL, "", "del", "config/motd", "-o", "json"), "DeleteResponse")
	if del[0]["deleted"] != 1.0 {
		t.Errorf("del config/motd -o json = %v, want 1 deleted", del)
	}

	hist := cliOK(t, s.URL, "", "history", "config/db/url", "--prefix")
	want := fmt.Sprintf("PUT config/db/url (revision %d)\npostgres://db:5432\nPUT config/db/url (revision %d)\npostgres://db2:5432\n", first, first+1)
	if hist != want {
		t.Errorf("history = %q, want %q", hist, want)
	}
	if got := cliOK(t, s.URL, "", "history", "p/", "--prefix", "--deletes-only", "--newest-first", "--limit", "1", "-o", "json"); !strings.Contains(got, `"type":"delete"`) {
		t.Errorf("history --deletes-only -o json = %q, want a delete", got)
	} else {
		jsonLines(t, "history", got, "HistoryResponse")
	}

	st := jsonLines(t, "status", cliOK(t, s.URL, "", "status", "-o", "json"), "Status")
	rev := int64(st[0]["revision"].(float64))
	if got := cliOK(t, s.URL, "", "status"); !strings.Contains(got, fmt.Sprintf("revision          %d\n", rev)) {
		t.Errorf("status = %q, want the revision %d", got, rev)
	}
	jsonLines(t, "compact", cliOK(t, s.URL, "", "compact", fmt.Sprint(rev), "--physical", "-o", "json"), "HeaderResponse")
	cliFails(t, s.URL, 1, "httpkv: compacted: ", "history", "config/", "--prefix", "--rev", "1")
	cliFails(t, s.URL, 1, "httpkv: compacted: ", "compact", fmt.Sprint(rev))
}

// TestCLILeases drives lease grant, ttl, keepalive, list and revoke, and
// put --lease.
func TestCLILeases(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	id := strings.TrimSpace(cliOK(t, s.URL, "", "lease", "grant", "600", "-o", "value"))
	cliOK(t, s.URL, "", "put", "services/api/1", "10.0.0.7", "--lease", id)
	other := jsonLines(t, "lease grant", cliOK(t, s.URL, "", "lease", "grant", "600", "--id", "1234", "-o", "json"), "LeaseResponse")
	if other[0]["id"] != 1234.0 {
		t.Errorf("lease grant --id 1234 = %v", other)
	}
	if got := cliOK(t, s.URL, "", "lease", "ttl", id, "--keys"); !strings.Contains(got, "of 600s\nservices/api/1\n") {
		t.Errorf("lease ttl --keys = %q, want its TTL and its key", got)
	}
	jsonLines(t, "lease ttl", cliOK(t, s.URL, "", "lease", "ttl", id, "-o", "json"), "LeaseTimeToLive")
	if got := cliOK(t, s.URL, "", "lease", "keepalive", id, "--once", "-o", "value"); got != "600\n" {
		t.Errorf("lease keepalive --once -o value = %q, want 600", got)
	}
	list := cliOK(t, s.URL, "", "lease", "list")
	if ids := strings.Fields(list); !slicesEqual(ids, sortedIDs(t, id, "1234")) {
		t.Errorf("lease list = %q, want %s and 1234 in ascending order", list, id)
	}
	jsonLines(t, "lease list", cliOK(t, s.URL, "", "lease", "list", "-o", "json"), "LeaseList")
	cliOK(t, s.URL, "", "lease", "revoke", id)
	cliFails(t, s.URL, 1, "httpkv: key_not_found: ", "get", "services/api/1")
	cliFails(t, s.URL, 1, "httpkv: lease_not_found: ", "lease", "revoke", id)
	cliFails(t, s.URL, 1, "httpkv: lease_not_found: ", "lease", "keepalive", id)
	cliFails(t, s.URL, 2, "TTL must be a whole number", "lease", "grant", "0")

	// keepalive without --once renews, a third of the TTL before the
	// lease would expire, until Ctrl-C.
	short := strings.TrimSpace(cliOK(t, s.URL, "", "lease", "grant", "3", "-o", "value"))
	p := startCLI(t, s.URL, "lease", "keepalive", short, "-o", "json")
	for range 2 {
		jsonLines(t, "lease keepalive", p.Next(), "LeaseResponse")
	}
	p.Signal(syscall.SIGINT)
	if st := p.Wait(); st != 0 {
		t.Errorf("lease keepalive ended by Ctrl-C exited %d, want 0", st)
	}
}

func sortedIDs(tb testing.TB, ids ...string) []string {
	tb.Helper()
	nums := make([]int64, len(ids))
	for i, id := range ids {
		nums[i] = mustInt(tb, id)
	}
	for i := range nums {
		for j := i + 1; j < len(nums); j++ {
			if nums[j] < nums[i] {
				nums[i], nums[j] = nums[j], nums[i]
			}
		}
	}
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = fmt.Sprint(n)
	}
	return out
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }
