package console

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleListsBounded writes more keys into a folder the page shows,
// live, than the page lists: it stops following the folder, says so, and
// lists it afresh on "Reload". A lease with more keys than the page
// lists shows the first ones and counts the rest.
func TestConsoleListsBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-txn-ops=1000")
	const shown = 2000 // browse.js MAX_SHOWN
	s.Put(t, "big/first", "1")
	p := e2e.OpenConsole(t, s, "#/keys?f=big/", 1280, 800)
	p.WaitText(".children a.key", "first")
	p.Wait("the folder followed live", `document.getElementById("live").dataset.state === "live"`)
	e2e.SeedKeys(t, s, shown+500, "big/%05d") // a thousand to a revision
	s.Put(t, "big/last", "1")
	p.WaitText(".browse .banner", "no longer kept live")
	if n := p.Count(".children li"); n < shown || n > shown+1000 {
		t.Errorf("the folder lists %d children once no longer live, want %d to %d: at most one revision past the bound", n, shown, shown+1000)
	}
	p.Click(".browse .banner button", "Reload")
	p.WaitNoText(".browse .banner", "no longer kept live")
	p.WaitText(".browse .summary", "100 items shown so far")

	var lease client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`), "Content-Type", "application/json").Ok(t, http.StatusCreated, &lease)
	var b strings.Builder
	b.WriteString(`{"success":[`)
	for i := range 300 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"put":{"key":"leased/%03d","value":"v","lease":%d}}`, i, lease.Id)
	}
	b.WriteString(`]}`)
	s.Txn(t, b.String()).Want(t, http.StatusOK)
	p.GoTo(fmt.Sprintf("#/leases?id=%d", lease.Id))
	p.WaitText(".lease-keys li", "… and 100 more")
	if n := p.Count(".lease-keys li"); n != 201 {
		t.Errorf("the keys of a lease with 300 keys take %d list items, want 200 and one counting the rest", n)
	}
}
