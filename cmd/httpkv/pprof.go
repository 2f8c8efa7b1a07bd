package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
)

// envPprofListen names the variable that serves Go's profiler on a
// listener of its own (HTTPKV_PPROF_LISTEN=127.0.0.1:6060), for measuring
// the server under load (docs/performance.md, "What bounds each row").
// It is not a flag and not on the API's listener: the profiler exposes
// internals and costs CPU while it samples, so an operator turns it on
// deliberately, on an address of their choosing.
const envPprofListen = "HTTPKV_PPROF_LISTEN"

// startPprof serves /debug/pprof/ on the address the variable gives, or
// does nothing if it is unset. The returned stop closes the listener and
// waits for the serving goroutine.
func startPprof(getenv func(string) string, stderr io.Writer) (stop func(), err error) {
	addr := getenv(envPprofListen)
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envPprofListen, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	fmt.Fprintf(stderr, "httpkv: profiler on http://%s/debug/pprof/\n", ln.Addr())
	return func() {
		srv.Close()
		<-done
	}, nil
}
