package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestElectInterruptedBeforeCampaign: Ctrl-C while elect is still
// granting the lease that will hold its candidacy ends it as cleanly as
// Ctrl-C while it leads: no error, exit 0. (On a loaded machine the
// first request can take seconds; an interrupt then is no failure to
// reach the server.)
func TestElectInterruptedBeforeCampaign(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/leases" {
			close(asked)
			select { // the grant does not answer
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		http.Error(w, "unexpected", http.StatusTeapot)
	}))
	defer srv.Close()
	defer close(release)

	ctx, interrupt := context.WithCancelCause(t.Context())
	go func() {
		<-asked
		interrupt(errors.New("interrupt signal received")) // as signal.NotifyContext does
	}()
	var stdout, stderr bytes.Buffer
	e := env(&stdout, &stderr)
	e.Getenv = func(k string) string {
		if k == "HTTPKV_URL" {
			return srv.URL
		}
		return ""
	}
	if err := Run(ctx, []string{"elect", "primary", "v"}, e); err != nil {
		t.Fatalf("elect interrupted while granting its lease = %v, want no error; stderr: %s", err, stderr.String())
	}
}
