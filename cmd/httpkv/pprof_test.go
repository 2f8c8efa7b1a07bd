package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPprofListener: with HTTPKV_PPROF_LISTEN set the profiler answers on
// its own address, stop closes it, and without the variable nothing
// listens.
func TestPprofListener(t *testing.T) {
	var stderr strings.Builder
	stop, err := startPprof(func(k string) string {
		if k == envPprofListen {
			return "127.0.0.1:0"
		}
		return ""
	}, &stderr)
	if err != nil {
		t.Fatalf("startPprof = %v, want a listener", err)
	}
	_, url, ok := strings.Cut(strings.TrimSpace(stderr.String()), "profiler on ")
	if !ok {
		t.Fatalf("startPprof printed %q, want the profiler's address", stderr.String())
	}
	resp, err := http.Get(url + "cmdline")
	if err != nil {
		t.Fatalf("GET %scmdline: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %scmdline = %d, want 200", url, resp.StatusCode)
	}
	stop()
	if resp, err := http.Get(url + "cmdline"); err == nil {
		resp.Body.Close()
		t.Errorf("GET %scmdline after stop answered %d, want the listener closed", url, resp.StatusCode)
	}

	stop, err = startPprof(noEnv, io.Discard)
	if err != nil {
		t.Fatalf("startPprof without %s = %v, want nil", envPprofListen, err)
	}
	stop()
}
