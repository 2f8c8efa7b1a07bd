package admin

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// shownSeconds reads a duration as the console shows it: "42 s" or
// "1 min 5 s"; -1 if it is neither.
func shownSeconds(s string) int {
	m := regexp.MustCompile(`(?:(\d+) min )?(\d+) s`).FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	min, _ := strconv.Atoi(m[1])
	sec, _ := strconv.Atoi(m[2])
	return min*60 + sec
}

// TestConsoleLeases shows a lease counting down, its keys, and the key's
// own view of it; keeps it alive; revokes it after a confirmation that
// names its keys, which deletes them; and grants one from the page.
func TestConsoleLeases(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	var lease client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":90}`), "Content-Type", "application/json").Ok(t, http.StatusCreated, &lease)
	s.Do(t, "PUT", e2e.KeyPath("svc/web")+fmt.Sprintf("?lease=%d", lease.Id), []byte("10.0.0.1:80")).Want(t, http.StatusOK)

	// The key shows its lease and the time it has left.
	p := e2e.OpenConsole(t, s, "#/keys?f=svc/&k=svc/web", 1280, 800)
	p.WaitText(".key-pane .lease-badge", fmt.Sprintf("lease %d", lease.Id))
	p.WaitText(".key-pane .lease-badge", "expires in")

	p.GoTo(fmt.Sprintf("#/leases?id=%d", lease.Id))
	row := fmt.Sprintf(`tr[data-lease="%d"]`, lease.Id)
	p.WaitText(row, fmt.Sprintf("0x%x", lease.Id))
	p.WaitText(row, "1 min 30 s") // the granted TTL
	first := shownSeconds(p.Text(row + " .ttl"))
	if first <= 0 || first > 90 {
		t.Fatalf("lease %d shows %q left, want at most 90 s", lease.Id, p.Text(row+" .ttl"))
	}
	// It counts down in the page.
	p.Wait("the lease's time left going down", fmt.Sprintf(`(() => { const m = document.querySelector(%s).textContent.match(/(?:(\d+) min )?(\d+) s/); return m && (Number(m[1] || 0) * 60 + Number(m[2])) < %d; })()`, e2e.Js(row+" .ttl"), first))
	// Its keys, opened from the link.
	p.WaitText(".lease-keys a", "svc/web")

	// Keep-alive renews it to its full TTL.
	p.Click(row+" button", "Keep alive")
	p.WaitText("#notice", fmt.Sprintf("Lease %d renewed: 1 min 30 s left", lease.Id))

	// Revoke asks first, naming the keys it deletes.
	p.Click(row+" button", "Revoke")
	p.WaitText("dialog[open]", "svc/web")
	p.WaitText("dialog[open]", "deletes the 1 key attached")
	p.Confirm("Revoke")
	p.WaitText("#notice", fmt.Sprintf("Revoked lease %d", lease.Id))
	p.Wait("the lease's row gone", fmt.Sprintf(`!document.querySelector(%s)`, e2e.Js(row)))
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d", lease.Id), nil).WantError(t, http.StatusNotFound, "lease_not_found")
	s.Do(t, "GET", e2e.KeyPath("svc/web"), nil).WantError(t, http.StatusNotFound, "key_not_found")

	// Grant from the page.
	p.MarkLabels()
	p.FillLabelled("TTL in seconds", "45")
	p.FillLabelled("Lease ID", "4242")
	p.Click(".grant button", "Grant lease")
	p.WaitText("#notice", "Granted lease 4242")
	p.WaitText(`tr[data-lease="4242"]`, "45 s")
	var ttl client.LeaseTimeToLive
	s.Do(t, "GET", "/v1/leases/4242", nil).Ok(t, http.StatusOK, &ttl)
	if ttl.GrantedTtl != 45 {
		t.Errorf("the lease granted from the page has TTL %d, want 45", ttl.GrantedTtl)
	}
}
