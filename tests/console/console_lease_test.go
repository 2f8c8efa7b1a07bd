package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
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
	p := openConsole(t, s, "#/keys?f=svc/&k=svc/web", 1280, 800)
	p.waitText(".key-pane .lease-badge", fmt.Sprintf("lease %d", lease.Id))
	p.waitText(".key-pane .lease-badge", "expires in")

	p.goTo(fmt.Sprintf("#/leases?id=%d", lease.Id))
	row := fmt.Sprintf(`tr[data-lease="%d"]`, lease.Id)
	p.waitText(row, fmt.Sprintf("0x%x", lease.Id))
	p.waitText(row, "1 min 30 s") // the granted TTL
	first := shownSeconds(p.text(row + " .ttl"))
	if first <= 0 || first > 90 {
		t.Fatalf("lease %d shows %q left, want at most 90 s", lease.Id, p.text(row+" .ttl"))
	}
	// It counts down in the page.
	p.wait("the lease's time left going down", fmt.Sprintf(`(() => { const m = document.querySelector(%s).textContent.match(/(?:(\d+) min )?(\d+) s/); return m && (Number(m[1] || 0) * 60 + Number(m[2])) < %d; })()`, js(row+" .ttl"), first))
	// Its keys, opened from the link.
	p.waitText(".lease-keys a", "svc/web")

	// Keep-alive renews it to its full TTL.
	p.click(row+" button", "Keep alive")
	p.waitText("#notice", fmt.Sprintf("Lease %d renewed: 1 min 30 s left", lease.Id))

	// Revoke asks first, naming the keys it deletes.
	p.click(row+" button", "Revoke")
	p.waitText("dialog[open]", "svc/web")
	p.waitText("dialog[open]", "deletes the 1 key attached")
	p.confirm("Revoke")
	p.waitText("#notice", fmt.Sprintf("Revoked lease %d", lease.Id))
	p.wait("the lease's row gone", fmt.Sprintf(`!document.querySelector(%s)`, js(row)))
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d", lease.Id), nil).WantError(t, http.StatusNotFound, "lease_not_found")
	s.Do(t, "GET", e2e.KeyPath("svc/web"), nil).WantError(t, http.StatusNotFound, "key_not_found")

	// Grant from the page.
	p.markLabels()
	p.fillLabelled("TTL in seconds", "45")
	p.fillLabelled("Lease ID", "4242")
	p.click(".grant button", "Grant lease")
	p.waitText("#notice", "Granted lease 4242")
	p.waitText(`tr[data-lease="4242"]`, "45 s")
	var ttl client.LeaseTimeToLive
	s.Do(t, "GET", "/v1/leases/4242", nil).Ok(t, http.StatusOK, &ttl)
	if ttl.GrantedTtl != 45 {
		t.Errorf("the lease granted from the page has TTL %d, want 45", ttl.GrantedTtl)
	}
}
