package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandlerServesConsole(t *testing.T) {
	tests := []struct {
		path, contentType, contains string
	}{
		{"/", "text/html", "<title>httpkv console</title>"},
		{"/console.js", "javascript", "new EventSource"},
		{"/console.css", "text/css", "font"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), tt.contentType) || !strings.Contains(string(body), tt.contains) {
				t.Fatalf("GET %s = %d %q (%d bytes), want 200 %s containing %q", tt.path, rec.Code, rec.Header().Get("Content-Type"), len(body), tt.contentType, tt.contains)
			}
			hd := rec.Header()
			if csp := hd.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") ||
				hd.Get("X-Frame-Options") != "DENY" || hd.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s: CSP %q, X-Frame-Options %q, X-Content-Type-Options %q; want frame-ancestors 'none', DENY, nosniff",
					tt.path, csp, hd.Get("X-Frame-Options"), hd.Get("X-Content-Type-Options"))
			}
		})
	}
}
