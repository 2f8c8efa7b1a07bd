package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthServerURL: given the server's URL, as every other command's
// --url takes it, health asks its /health, not its console at /, so an
// unhealthy server is not reported healthy.
func TestHealthServerURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"health":false,"reason":"backend unavailable: etcd cannot serve"}`))
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><title>httpkv console</title>"))
		}
	}))
	defer srv.Close()
	for _, url := range []string{srv.URL, srv.URL + "/", srv.URL + "/health"} {
		var stdout, stderr bytes.Buffer
		err := runHealth(context.Background(), []string{"--url", url}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "etcd cannot serve") {
			t.Errorf("health --url %s = %v (printed %q), want unhealthy with the reason", url, err, stdout.String())
		}
	}
}

// TestHealthNotAHealthAnswer: a 200 that is not /health's answer (a
// page of the console, a proxy's) is no proof of health.
func TestHealthNotAHealthAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>httpkv console</title>"))
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := runHealth(context.Background(), []string{"--url", srv.URL + "/index.html"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not /health's answer") {
		t.Errorf("health of a page = %v, want a failure saying it is not /health's answer", err)
	}
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"health":true}`))
	}))
	defer healthy.Close()
	if err := runHealth(context.Background(), []string{"--url", healthy.URL}, &stdout, &stderr); err != nil {
		t.Errorf("health of a healthy server = %v, want nil", err)
	}
}
