package admin

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// granted waits for the answer of a lock or a campaign: 200.
func granted(t *testing.T, ch <-chan *e2e.Reply) {
	t.Helper()
	r := <-ch
	e2e.CheckReply(t, r)
	r.Want(t, http.StatusOK)
}

// ownerKey is the key lease owns in the lock or election name.
func ownerKey(name string, lease int64) string {
	return fmt.Sprintf("%s/%x", name, lease)
}

// TestConsoleLocks shows a lock with a holder and two waiters, and an
// election with a leader and a candidate, found in the keys of their
// leases; releases the lock from the page, revokes leases and resigns
// the leader, and sees every change live, without a reload: who holds
// since which revision, who waits, in order.
func TestConsoleLocks(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	none := e2e.AuthCaller{}
	const lock, election = "jobs/nightly", "api-leader"
	holder, first, second := s.GrantLease(t, 600), s.GrantLease(t, 600), s.GrantLease(t, 600)
	granted(t, s.LockAsync(t, none, lock, holder))
	firstDone := s.LockAsync(t, none, lock, first)
	s.WaitQueue(t, lock, 2)
	secondDone := s.LockAsync(t, none, lock, second)
	s.WaitQueue(t, lock, 3)
	leader, candidate := s.GrantLease(t, 600), s.GrantLease(t, 600)
	granted(t, s.CampaignFor(t, none, election, leader, "10.0.0.1:8080"))
	candidateDone := s.CampaignFor(t, none, election, candidate, "10.0.0.2:8080")
	s.WaitQueue(t, election, 2)
	held := s.Get(t, ownerKey(lock, holder))

	p := e2e.OpenConsole(t, s, "#/locks", 1280, 800)
	p.WaitText(`.lock-list li[data-name="jobs/nightly"]`, "3 keys")
	p.WaitText(`.lock-list li[data-name="api-leader"]`, "2 keys")
	p.Eval(`(window.notReloaded = true)`, nil)

	// The lock: its holder, since when, and its waiters in order.
	p.Click(".lock-list a", lock)
	p.WaitText(".lock-pane .kind .tag", "Lock")
	p.WaitText(".lock-pane .owner dl", ownerKey(lock, holder))
	p.WaitText(".lock-pane .owner dl", fmt.Sprintf("lease %d", holder))
	p.WaitText(".lock-pane .owner dl", "expires in")
	p.WaitSince("Held since", held.CreateRevision)
	p.WaitQueueShown(ownerKey(lock, first), ownerKey(lock, second))
	p.WaitText(".lock-pane .summary", fmt.Sprintf("Held by lease %d · 2 waiting", holder))

	// Released from the page: the first waiter holds, since the release.
	p.Click(".lock-pane .owner button", "Release")
	p.WaitText("dialog[open]", fmt.Sprintf("lease %d holds it next", first))
	p.Confirm("Release")
	granted(t, firstDone)
	p.WaitText("#notice", "Released the lock "+lock+" at revision")
	var released int64
	if _, err := fmt.Sscanf(p.Text("#notice"), "Released the lock "+lock+" at revision %d.", &released); err != nil {
		t.Fatalf("the notice %q: %v", p.Text("#notice"), err)
	}
	if q := s.Queue(t, lock); len(q) != 2 || q[0] != ownerKey(lock, first) {
		t.Fatalf("after the release %s/ holds %q, want the first waiter's key first", lock, q)
	}
	p.WaitText(".lock-pane .owner dl", ownerKey(lock, first))
	p.WaitSince("Held since", released)
	p.WaitQueueShown(ownerKey(lock, second))

	// The holder's lease revoked: the second holds, and nobody waits.
	revoked := s.Do(t, "DELETE", fmt.Sprintf("/v1/leases/%d", first), nil).Want(t, http.StatusOK).Revision(t)
	granted(t, secondDone)
	p.WaitText(".lock-pane .owner dl", ownerKey(lock, second))
	p.WaitSince("Held since", revoked)
	p.WaitText(".lock-pane .queue", "Nobody is waiting.")

	// The election, guessed from its values: leader, value, candidate.
	p.Click(".lock-list a", election)
	p.WaitText(".lock-pane .kind .tag", "Election")
	p.WaitText(".lock-pane .owner dl", ownerKey(election, leader))
	p.WaitText(".lock-pane .owner dl", "10.0.0.1:8080")
	p.WaitQueueShown(ownerKey(election, candidate))
	p.WaitText(".lock-pane .queue tbody", "10.0.0.2:8080")

	// The leader's lease revoked: the candidate leads, with its value.
	revoked = s.Do(t, "DELETE", fmt.Sprintf("/v1/leases/%d", leader), nil).Want(t, http.StatusOK).Revision(t)
	granted(t, candidateDone)
	p.WaitText(".lock-pane .owner dl", "10.0.0.2:8080")
	p.WaitSince("Leader since", revoked)
	p.WaitText(".lock-pane .queue", "No other candidate.")

	// Resigned from the page: the office is empty.
	p.Click(".lock-pane .owner button", "Resign")
	p.Confirm("Resign")
	p.WaitText("#notice", "resigned at revision")
	p.WaitText(".lock-pane .owner", "No leader")
	s.Do(t, "GET", "/v1/elections/"+election+"/leader", nil).WantError(t, http.StatusNotFound, "no_leader")

	// A lock made now appears in the list by itself.
	late := s.GrantLease(t, 600)
	granted(t, s.LockAsync(t, none, "late", late))
	p.WaitText(`.lock-list li[data-name="late"]`, "1 key")

	var same bool
	p.Eval(`window.notReloaded === true`, &same)
	if !same {
		t.Errorf("the page was reloaded; it must follow the locks by itself")
	}
}

// TestConsoleLocksReadOnly signs in as alice, who may only read app/:
// she finds the lock under app/ (and no other) in the keys of the leases,
// sees it change live, has no control to release it, and a name she may
// not read says which permission is missing.
func TestConsoleLocksReadOnly(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t)
	root := asRoot(t, s)
	grant := func() int64 {
		var l client.LeaseResponse
		e2e.AuthDo(t, s, root, http.StatusCreated, "POST", "/v1/leases", `{"ttl":600}`).Decode(t, &l)
		return l.Id
	}
	holder, waiter, other := grant(), grant(), grant()
	granted(t, s.LockAsync(t, root, "app/lock", holder))
	waiterDone := s.LockAsync(t, root, "app/lock", waiter)
	granted(t, s.LockAsync(t, root, "etc/lock", other))

	p := e2e.OpenConsole(t, s, "#/locks", 1280, 800)
	p.SignIn("alice", "alice-pw")
	p.WaitText(`.lock-list li[data-name="app/lock"]`, "2 keys")
	if n := p.Count(`.lock-list li[data-name="etc/lock"]`); n != 0 {
		t.Errorf("alice, who may not read etc/, sees the lock etc/lock in the list")
	}

	p.Click(".lock-list a", "app/lock")
	p.WaitText(".lock-pane .owner dl", ownerKey("app/lock", holder))
	p.WaitQueueShown(ownerKey("app/lock", waiter))
	if n := p.Count(".lock-pane button"); n != 0 {
		t.Errorf("alice, who may not write app/lock/, sees %d buttons in the lock's pane", n)
	}
	e2e.AuthDo(t, s, root, http.StatusOK, "DELETE", "/v1/locks/"+e2e.PathSegment("app/lock")+"?key="+ownerKey("app/lock", holder), "")
	granted(t, waiterDone)
	p.WaitText(".lock-pane .owner dl", ownerKey("app/lock", waiter))
	p.WaitText(".lock-pane .queue", "Nobody is waiting.")
	if st := p.LiveState(); st != "live" {
		t.Errorf("the live indicator says %q, want live", st)
	}

	p.MarkLabels()
	p.FillLabelled("Name", "etc/lock")
	p.Click(".lock-names button", "Open")
	p.WaitText(".lock-pane .problem", "Permission denied: to read the lock or election etc/lock you need read permission on every key under etc/lock/")
}

// lockModuleChecks runs in the console's page, importing its modules:
// the names found in owner keys, the queue kept by live events, and the
// revision a holder took over at, found in the history (the worked
// example of lockqueue.js). It resolves to a list of failures.
const lockModuleChecks = `(async () => {
	const { ownerName } = await import("/console/lockfinder.js");
	const { LockQueue, tenureStart } = await import("/console/lockqueue.js");
	const { utf8, text } = await import("/console/bytes.js");
	const bad = [];
	const same = (what, got, want) => {
		if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(what + ": got " + JSON.stringify(got) + ", want " + JSON.stringify(want));
	};
	const name = (k, l) => { const n = ownerName(utf8(k), l); return n === null ? null : text(n); };
	same("ownerName(jobs/nightly/4d2, 1234)", name("jobs/nightly/4d2", 1234), "jobs/nightly");
	same("ownerName(jobs/4d2, 1235)", name("jobs/4d2", 1235), null);
	same("ownerName(jobs/14d2, 1234)", name("jobs/14d2", 1234), null);
	same("ownerName(/4d2, 1234)", name("/4d2", 1234), null);
	same("ownerName(jobs/4d2, 0)", name("jobs/4d2", 0), null);
	same("ownerName(a/1fffffffffffff, 2^53-1)", name("a/1fffffffffffff", 2 ** 53 - 1), "a");

	const kv = (key, create, lease, value = "", version = 1) => ({ key, value, create_revision: create, mod_revision: create, version, lease });
	const ev = (type, k) => ({ type, kv: k, key: utf8(k.key) });
	const q = new LockQueue();
	q.load({ header: { revision: 10 }, count: 3, kvs: [kv("n/a", 5, 10), kv("n/b", 7, 11), kv("n/c", 9, 12)] });
	same("owner at load", text(q.owner.key), "n/a");
	let r = q.apply([ev("put", kv("n/a", 5, 10, "v", 2))], 11);
	same("a proclaim changes no owner", [r.ownerChanged, text(q.owner.value), q.count], [false, "v", 3]);
	same("kind with a value", q.kind(), "election");
	r = q.apply([ev("delete", { key: "n/a", mod_revision: 12 })], 12);
	same("a release", [r.ownerChanged, r.removed.map((e) => text(e.key)), text(q.owner.key), q.since, q.count], [true, ["n/a"], "n/b", { from: 12, to: 12 }, 2]);
	r = q.apply([ev("put", kv("n/d", 13, 13))], 13);
	same("a new waiter", [r.ownerChanged, q.waiting().map((e) => text(e.key)), q.count], [false, ["n/c", "n/d"], 3]);
	r = q.apply([ev("delete", { key: "n/c", mod_revision: 15 })], 15);
	same("a waiter leaves", [r.ownerChanged, q.waiting().map((e) => text(e.key)), q.since], [false, ["n/d"], { from: 12, to: 12 }]);
	same("kind once the value is gone", q.kind(), "lock");

	const history = (events, more, status) => ({ history: async () => {
		if (status) throw Object.assign(new Error("compacted"), { status });
		return { events, more };
	} });
	const owner = { create: 7 };
	const deletes = [
		{ type: "delete", kv: { key: "n/c", mod_revision: 15 }, prev_kv: { create_revision: 9 } },
		{ type: "delete", kv: { key: "n/a", mod_revision: 12 }, prev_kv: { create_revision: 5 } },
	];
	same("took over at the release", await tenureStart(history(deletes, false), null, owner, 20), { from: 12, to: 12 });
	same("took over when created", await tenureStart(history(deletes.slice(0, 1), false), null, owner, 20), { from: 7, to: 7 });
	same("history too long", await tenureStart(history(deletes.slice(0, 1), true), null, owner, 20), { from: 7, to: 20 });
	same("history compacted", await tenureStart(history([], false, 410), null, owner, 20), { from: 7, to: 20 });
	return bad;
})()`

// TestConsoleLockModules checks how the console finds locks and elections
// and keeps their queues, in the browser that runs it.
func TestConsoleLockModules(t *testing.T) {
	t.Parallel()
	e2e.RunModuleChecks(t, lockModuleChecks)
}
