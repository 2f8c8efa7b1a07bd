package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// runHealth is `httpkv health`: it asks a server's /health and fails unless
// the answer is 200. Container images without a shell or curl use it as
// their health check.
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("httpkv health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: httpkv health [--url URL] [--timeout D]\n\n"+
			"Asks a running server's /health and exits 0 when it answers 200, 1 otherwise\n"+
			"(a container's health check: it needs no shell or curl).\n\n")
		fs.PrintDefaults()
	}
	url := fs.String("url", "http://127.0.0.1:2378/health", "the server's /health URL")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer (a server answers within 2 s, whatever its backend does)")
	if err := fs.Parse(args); err != nil {
		return helpRequested(fs, err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("health: unexpected argument %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("health: %s did not answer within %v", *url, *timeout)
		}
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(stdout, "%s", body)
	if resp.StatusCode != http.StatusOK {
		var h struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(body, &h) == nil && h.Reason != "" {
			return fmt.Errorf("unhealthy (%s): %s", resp.Status, h.Reason)
		}
		return fmt.Errorf("unhealthy: %s", resp.Status)
	}
	return nil
}
