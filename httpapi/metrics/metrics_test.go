package metrics

import "testing"

// TestLabels: a status or method the server does not answer with falls
// into a class, so that clients cannot make new series.
func TestLabels(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   string
	}{{200, "200"}, {429, "429"}, {499, "499"}, {418, "4xx"}, {599, "5xx"}, {999, "other"}, {0, "other"}} {
		if got := statusLabel(tt.status); got != tt.want {
			t.Errorf("statusLabel(%d) = %q, want %q", tt.status, got, tt.want)
		}
	}
	for method, want := range map[string]string{"GET": "GET", "PATCH": "PATCH", "get": "other", "BREW": "other"} {
		if got := MethodLabel(method); got != want {
			t.Errorf("MethodLabel(%q) = %q, want %q", method, got, want)
		}
	}
}
