package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRunNull runs every workload against the null server: its answers
// must have the shapes the tool reads from httpkv.
func TestRunNull(t *testing.T) {
	h := newNullHandler()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	checkWorkloads(t, "--target", srv.URL)
}

func TestAppendKV(t *testing.T) {
	tests := []struct {
		name       string
		key, value string
		want       map[string]any
	}{
		{"plain", "a/b", "x", map[string]any{"key": "a/b", "value": "x"}},
		{"escapes", "q\"\\", "line\n\x01", map[string]any{"key": "q\"\\", "value": "line\n\x01"}},
		{"not UTF-8", "k", "\xff\xfe", map[string]any{"key": "k", "value_base64": "//4="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := appendKV(nil, tt.key, []byte(tt.value), 7)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("appendKV(%q, %q) = %s: not JSON: %v", tt.key, tt.value, b, err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("appendKV(%q, %q) = %s: %s is %v, want %v", tt.key, tt.value, b, k, got[k], v)
				}
			}
			if got["mod_revision"] != 7.0 {
				t.Errorf("appendKV(..., 7) = %s: mod_revision is %v, want 7", b, got["mod_revision"])
			}
		})
	}
}

// TestRunNullServes starts `bench null` as the command does, checks that
// it answers, replays history to a catch-up watcher, and returns once its
// context is done.
func TestRunNullServes(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out, errOut bytes.Buffer
	go func() { done <- Run(ctx, []string{"null", "--listen", addr}, &out, &errOut) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run(null) = %v after cancel, want nil", err)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /health = %s, want 200", resp.Status)
			}
			checkCatchup(t, "--target", "http://"+addr)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("null server at %s not answering: %v", addr, err)
		}
	}
}
