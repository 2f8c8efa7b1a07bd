package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// Shape of TestGatewaysLinearizable: a few keys so that clients contend,
// a history porcupine decides in seconds, and faults far enough apart (in
// operations, whatever the machine's speed) for etcd to elect and catch
// up between them.
const (
	linClients      = 8
	linKeys         = 4
	linPhaseOps     = 700              // operations the clients complete between faults
	linStall        = 30 * time.Second // no operation completing this long is a failure
	linCheckTimeout = 60 * time.Second // bounds porcupine, not the store
)

// TestGatewaysLinearizable runs concurrent clients against two gateways in
// front of a three-member cluster, each client alternating between them,
// doing puts, linearizable reads, compare-and-swap txns and deletes on a
// few keys, while one member, then the leader, is killed with SIGKILL and
// restarted, and then one gateway is. It records every operation's call
// and return; an operation whose answer was lost (a cut connection, a
// timeout, a 503) has an unknown outcome. porcupine then checks the whole
// history against linModel, a register with revisions per key.
//
// It starts five processes, so it runs in the etcd pass of the suite
// (HTTPKV_TEST_BACKEND=etcd) or when asked for by name with -run.
func TestGatewaysLinearizable(t *testing.T) {
	if !e2e.OnEtcd(t) && !runAsked("TestGatewaysLinearizable") {
		t.Skipf("runs with %s=etcd, or alone with -run TestGatewaysLinearizable", e2e.EnvTestBackend)
	}
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	gw := []*e2e.Server{
		startGateway(t, c, "/lin/", "--etcd-request-timeout=2s"),
		startGateway(t, c, "/lin/", "--etcd-request-timeout=2s"),
	}
	rec := newLinRecorder()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for id := range linClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &linClient{id: id, gw: gw, rec: rec, rnd: rand.New(rand.NewPCG(uint64(id), 12)),
				http: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}, expect: map[string]int64{}}
			defer cl.http.CloseIdleConnections()
			for n := 0; ctx.Err() == nil; n++ {
				if err := cl.step(n); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()

	phase := func(what string) {
		t.Helper()
		if err := rec.waitOps(ctx, linPhaseOps); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	phase("before the first fault")
	follower := (c.Leader() + 1) % c.Size()
	t.Logf("killing etcd member %d (a follower)", follower)
	c.Kill(follower)
	phase("with a follower down")
	c.Restart(follower)
	phase("after the follower's restart")
	leader := c.Leader()
	t.Logf("killing etcd member %d (the leader)", leader)
	c.Kill(leader)
	phase("with the leader down")
	c.Restart(leader)
	phase("after the leader's restart")
	t.Log("killing gateway 0")
	gw[0].Kill()
	phase("with gateway 0 down")
	gw[0].Restart()
	phase("after gateway 0's restart")
	stop()
	wg.Wait()

	// Gateway 1 ran throughout: its reads at the current revision came
	// from its read cache, the path this history checks beside etcd's.
	if n := gw[1].Metric(t, "httpkv_read_cache_reads_total"); n == 0 {
		t.Fatal("gateway 1 answered no read from its read cache")
	}
	history, stats := rec.history()
	t.Logf("history: %s", stats)
	if stats.known[linPut]+stats.known[linCAS] == 0 || stats.known[linGet] == 0 {
		t.Fatalf("history: %s; want acknowledged writes and reads", stats)
	}
	checkStart := time.Now()
	res, info := porcupine.CheckOperationsVerbose(linModel.ToModel(), history, linCheckTimeout)
	t.Logf("porcupine: %s in %v", res, time.Since(checkStart).Round(time.Millisecond))
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		path := filepath.Join(t.ArtifactDir(), "linearizability.html")
		if err := porcupine.VisualizePath(linModel.ToModel(), info, path); err != nil {
			t.Log(err)
		}
		t.Fatalf("the history of %d operations through two gateways is not linearizable; porcupine's view of it: %s", len(history), path)
	default:
		t.Fatalf("porcupine did not decide on the history of %d operations within %v", len(history), linCheckTimeout)
	}
}

// runAsked reports whether the test binary's -run pattern names test.
func runAsked(test string) bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), test)
}

// linRecorder collects the operations of every client, with times on one
// monotonic clock.
type linRecorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func newLinRecorder() *linRecorder { return &linRecorder{start: time.Now()} }

func (r *linRecorder) now() int64 { return int64(time.Since(r.start)) }

// waitOps waits until n more operations have been recorded. It fails when
// none was for linStall: the clients are stuck.
func (r *linRecorder) waitOps(ctx context.Context, n int) error {
	count := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.ops)
	}
	start, last := count(), count()
	for progress := time.Now(); last < start+n; time.Sleep(10 * time.Millisecond) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if c := count(); c != last {
			last, progress = c, time.Now()
		} else if time.Since(progress) > linStall {
			return fmt.Errorf("no operation completed in %v (%d of %d)", linStall, last-start, n)
		}
	}
	return nil
}

func (r *linRecorder) add(client int, in linInput, call int64, out linOutput, through string) {
	ret := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret, Metadata: through})
}

// linStats counts a history's operations by kind and outcome.
type linStats struct {
	known, unknown [4]int
}

func (s linStats) String() string {
	var b strings.Builder
	for k, name := range []string{"put", "get", "cas", "delete"} {
		fmt.Fprintf(&b, "%s %d", name, s.known[k]+s.unknown[k])
		if linKind(k) != linGet { // a read without an answer is left out
			fmt.Fprintf(&b, " (%d unknown)", s.unknown[k])
		}
		b.WriteString(", ")
	}
	return strings.TrimSuffix(b.String(), ", ")
}

// history returns the operations, an unknown outcome's return moved to
// the end of the history: it may take effect at any time after its call.
func (r *linRecorder) history() ([]porcupine.Operation, linStats) {
	end := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var st linStats
	for i, op := range r.ops {
		kind := op.Input.(linInput).kind
		if op.Output.(linOutput).unknown {
			r.ops[i].Return = end
			st.unknown[kind]++
		} else {
			st.known[kind]++
		}
	}
	return r.ops, st
}

// linClient is one client of the history. Its n-th operation goes through
// gateway (id+n)%2, so that what it writes through one it reads through
// the other.
type linClient struct {
	id     int
	gw     []*e2e.Server
	rec    *linRecorder
	rnd    *rand.Rand
	http   *http.Client
	seq    int
	expect map[string]int64 // by key: the mod_revision last read, for the next swap
}

// errNotSent is a request refused before it reached a gateway: it did not
// happen, and is left out of the history.
var errNotSent = errors.New("not sent")

// step does one random operation and records it. It returns an error only
// for an answer no store may give (a 400, a body that does not parse).
func (c *linClient) step(n int) error {
	through := (c.id + n) % len(c.gw)
	key := "k" + strconv.Itoa(c.rnd.IntN(linKeys))
	c.seq++
	value := fmt.Sprintf("c%d-%d", c.id, c.seq)
	var in linInput
	switch p := c.rnd.IntN(100); {
	case p < 40:
		in = linInput{kind: linGet, key: key}
	case p < 65:
		in = linInput{kind: linPut, key: key, value: value}
	case p < 90:
		in = linInput{kind: linCAS, key: key, value: value, expect: c.expect[key]}
	default:
		in = linInput{kind: linDelete, key: key}
	}
	call := c.rec.now()
	out, err := c.send(c.gw[through], in)
	switch {
	case errors.Is(err, errNotSent):
		return nil
	case err != nil:
		return fmt.Errorf("client %d, %v through gateway %d: %w", c.id, in, through, err)
	case out.unknown && in.kind == linGet:
		return nil // a read that did not answer tells nothing
	}
	if out.found && (in.kind == linGet || in.kind == linCAS && !out.ok) {
		c.expect[key] = out.mod
	} else if !out.found && !out.unknown && (in.kind == linGet || in.kind == linCAS && !out.ok) {
		c.expect[key] = 0
	}
	c.rec.add(c.id, in, call, out, "gateway "+strconv.Itoa(through))
	return nil
}

// send performs in through gateway s and reads its answer.
func (c *linClient) send(s *e2e.Server, in linInput) (linOutput, error) {
	method, path, body := "GET", e2e.KeyPath(in.key), []byte(nil)
	switch in.kind {
	case linPut:
		method, body = "PUT", []byte(in.value)
	case linDelete:
		method = "DELETE"
	case linCAS:
		method, path = "POST", "/v1/txn"
		body = fmt.Appendf(nil, `{"compare":[{"key":%[1]s,"target":"mod","result":"equal","mod_revision":%[2]d}],`+
			`"success":[{"put":{"key":%[1]s,"value":%[3]s}}],"failure":[{"range":{"key":%[1]s}}]}`,
			e2e.JSONString(in.key), in.expect, e2e.JSONString(in.value))
	}
	r, err := s.SendWith(c.http, context.Background(), method, path, body)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return linOutput{}, errNotSent
	case err != nil:
		return linOutput{unknown: true}, nil // cut, or timed out: sent, answer lost
	case r.Status == http.StatusServiceUnavailable || r.Status == http.StatusGatewayTimeout:
		return linOutput{unknown: true}, nil
	case in.kind == linGet && r.Status == http.StatusNotFound:
		var e struct {
			Error struct {
				Code     string `json:"code"`
				Revision int64  `json:"revision"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Code != "key_not_found" || e.Error.Revision == 0 {
			return linOutput{}, fmt.Errorf("%s = 404 %s, want key_not_found with a revision", r.Req, r.Body)
		}
		return linOutput{rev: e.Error.Revision}, nil
	case r.Status != http.StatusOK:
		return linOutput{}, fmt.Errorf("%s = %d %s", r.Req, r.Status, r.Body)
	}
	return decodeLinAnswer(r, in.kind)
}

// decodeLinAnswer reads a 200 answer to an operation of kind.
func decodeLinAnswer(r *e2e.Reply, kind linKind) (linOutput, error) {
	fail := func(err error) (linOutput, error) { return linOutput{}, fmt.Errorf("%s = %s: %w", r.Req, r.Body, err) }
	switch kind {
	case linGet:
		var res client.GetResponse
		if err := json.Unmarshal(r.Body, &res); err != nil {
			return fail(err)
		}
		return linOutput{found: true, value: e2e.ValueOf(&res.Kv), mod: res.Kv.ModRevision, rev: res.Header.Revision}, nil
	case linPut:
		var res client.PutResponse
		if err := json.Unmarshal(r.Body, &res); err != nil {
			return fail(err)
		}
		return linOutput{rev: res.Header.Revision}, nil
	case linDelete:
		var res client.DeleteResponse
		if err := json.Unmarshal(r.Body, &res); err != nil {
			return fail(err)
		}
		return linOutput{found: res.Deleted == 1, rev: res.Header.Revision}, nil
	}
	var res client.TxnResponse
	if err := json.Unmarshal(r.Body, &res); err != nil {
		return fail(err)
	}
	out := linOutput{ok: res.Succeeded, rev: res.Header.Revision}
	if !res.Succeeded {
		if len(res.Responses) != 1 || res.Responses[0].Range == nil {
			return fail(errors.New("want the failure branch's one range"))
		}
		if kvs := res.Responses[0].Range.Kvs; len(kvs) == 1 {
			out.found, out.value, out.mod = true, e2e.ValueOf(&kvs[0]), kvs[0].ModRevision
		}
	}
	return out, nil
}
