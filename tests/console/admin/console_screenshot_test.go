package admin

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// screenshotDir is where the README's screenshots of the console live.
const screenshotDir = "../../../docs/console"

// TestConsoleScreenshots shows the main views of the console on sample
// data and checks the screenshots in docs/console/ are there; with
// -update it writes them anew:
//
//	go test ./tests/console/admin/ -run TestConsoleScreenshots -update
func TestConsoleScreenshots(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-txn-ops=3000")
	e2e.SeedKeys(t, s, 2500, "metrics/host-%04d/load")
	s.Put(t, "app/web/config", "{\"replicas\": 3, \"image\": \"registry.local/web:1.4.2\", \"env\": {\"LOG_LEVEL\": \"info\", \"CACHE_TTL\": \"30s\"}, \"ports\": [80, 443]}")
	s.Put(t, "app/web/replicas", "3")
	s.Put(t, "app/db/pool", "max_open: 20\nmax_idle: 5\nlifetime: 30m\n")
	s.Put(t, "app/db/url", "postgres://app@db.internal:5432/app")
	s.Put(t, "app/feature-flags", "{\"new-checkout\": true, \"dark-mode\": false}")
	s.Put(t, "app/legacy-endpoint", "http://old.internal/api")
	s.Do(t, "PUT", e2e.KeyPath("certs/ca.der"), []byte{0x30, 0x82, 0x01, 0x0a, 0x02, 0x82, 0x01, 0x01, 0x00, 0xc4, 0xff, 0x10}).Want(t, http.StatusOK)
	s.Put(t, "app/web/config", "{\"replicas\": 4, \"image\": \"registry.local/web:1.5.0\", \"env\": {\"LOG_LEVEL\": \"info\", \"CACHE_TTL\": \"60s\"}, \"ports\": [80, 443]}")
	s.Put(t, "app/web/config", "{\n  \"replicas\": 4,\n  \"image\": \"registry.local/web:1.5.1\",\n  \"env\": {\n    \"LOG_LEVEL\": \"debug\",\n    \"CACHE_TTL\": \"60s\"\n  },\n  \"ports\": [80, 443]\n}")
	s.Do(t, "DELETE", e2e.KeyPath("app/legacy-endpoint"), nil).Want(t, http.StatusOK)
	for i, ttl := range []int{30, 120, 600} {
		var l client.LeaseResponse
		s.Do(t, "POST", "/v1/leases", []byte(fmt.Sprintf(`{"ttl":%d}`, ttl)), "Content-Type", "application/json").Ok(t, http.StatusCreated, &l)
		s.Do(t, "PUT", e2e.KeyPath(fmt.Sprintf("services/api/10.0.0.%d", i+1))+fmt.Sprintf("?lease=%d", l.Id), []byte(`{"port": 8080}`)).Want(t, http.StatusOK)
	}
	none := e2e.AuthCaller{}
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"pw"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"root","password":"pw"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"ops"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"reader"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/ops/permissions", `{"key":"app/","prefix":true,"type":"readwrite"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/ops/permissions", `{"key":"services/","prefix":true,"type":"read"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/ops", "")
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")

	shots := map[string][]byte{}
	p := e2e.OpenConsole(t, s, "#/keys", 1280, 800)
	p.WaitText(`.children li[data-key="metrics/"] .count`, "2,500")
	p.GoTo("#/keys?f=app/web/&k=app/web/config")
	p.WaitText(".key-pane .value", "LOG_LEVEL")
	p.Wait("live", `document.getElementById("live").dataset.state === "live"`)
	shots["keys"] = p.Screenshot()

	p.Click(".key-pane button", "Edit")
	p.MarkLabels()
	p.FillLabelled("Value", "{\n  \"replicas\": 6,\n  \"image\": \"registry.local/web:1.5.1\",\n  \"env\": {\n    \"LOG_LEVEL\": \"info\",\n    \"CACHE_TTL\": \"60s\"\n  },\n  \"ports\": [80, 443]\n}")
	s.Put(t, "app/web/config", "{\n  \"replicas\": 5,\n  \"image\": \"registry.local/web:1.5.1\",\n  \"env\": {\n    \"LOG_LEVEL\": \"debug\",\n    \"CACHE_TTL\": \"60s\"\n  },\n  \"ports\": [80, 443]\n}")
	p.WaitText(".key-pane .notice", "Another writer")
	p.Click(".edit button", "Save")
	p.WaitText(".conflict h3", "Conflict")
	shots["conflict"] = p.Screenshot()

	p.GoTo("#/keys?f=app/web/&k=app/web/config&pane=history")
	p.WaitText(".history tbody", "created")
	p.Click(".history tbody tr:nth-child(2) button", "Changes")
	p.WaitText(".diff-area caption", "→")
	shots["history"] = p.Screenshot()

	p.GoTo("#/keys?f=app/&pane=deleted")
	p.WaitText(".deleted tbody", "app/legacy-endpoint")
	shots["deleted"] = p.Screenshot()

	p.GoTo("#/leases")
	p.WaitText(".leases tbody", "0x")
	shots["leases"] = p.Screenshot()

	p.GoTo("#/cluster")
	p.WaitText(".cluster dl", "Revision")
	shots["cluster"] = p.Screenshot()

	p.GoTo("#/access?user=alice&role=ops")
	p.WaitText(".roles table.perms", "every key under app/")
	p.WaitText(".users .detail", "User alice")
	shots["access"] = p.Screenshot()

	none = e2e.AuthCaller{}
	worker := s.GrantLease(t, 600)
	granted(t, s.LockAsync(t, none, "jobs/nightly-report", worker))
	for i := range 2 {
		s.LockAsync(t, none, "jobs/nightly-report", s.GrantLease(t, 600))
		s.WaitQueue(t, "jobs/nightly-report", i+2)
	}
	granted(t, s.CampaignFor(t, none, "services/api/leader", s.GrantLease(t, 600), "10.0.0.1:8080"))
	s.CampaignFor(t, none, "services/api/leader", s.GrantLease(t, 600), "10.0.0.2:8080")
	s.WaitQueue(t, "services/api/leader", 2)
	p.GoTo("#/locks?name=jobs/nightly-report")
	p.WaitText(".lock-list", "services/api/leader")
	p.WaitText(".lock-pane .queue tbody", "expires in")
	p.WaitText(`.lock-pane dd[data-field="Held since"]`, "revision")
	shots["locks"] = p.Screenshot()

	phone := e2e.OpenConsole(t, s, "#/keys?f=app/db/&k=app/db/pool", 390, 844)
	phone.WaitText(".key-pane .value", "max_open")
	phone.Eval(`(document.getElementById("pane").scrollIntoView(), true)`, nil)
	shots["phone"] = phone.Screenshot()

	a := startAuthServer(t)
	login := e2e.OpenConsole(t, a, "#/keys", 1280, 800)
	login.WaitText(".login h2", "Sign in")
	shots["login"] = login.Screenshot()

	for name, b := range shots {
		path := filepath.Join(screenshotDir, name+".png")
		if *e2e.UpdateDocs {
			if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (write the screenshots with go test ./tests/console/admin/ -run TestConsoleScreenshots -update)", path, err)
			continue
		}
		was, err := png.DecodeConfig(bytes.NewReader(old))
		if err != nil {
			t.Errorf("%s is not a PNG: %v", path, err)
			continue
		}
		now, _ := png.DecodeConfig(bytes.NewReader(b))
		if was.Width != now.Width || was.Height != now.Height {
			t.Errorf("%s is %dx%d, the view now %dx%d: update the screenshots", path, was.Width, was.Height, now.Width, now.Height)
		}
	}
}
