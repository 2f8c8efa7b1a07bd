package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
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
	url := fs.String("url", "http://127.0.0.1:2378/health", "the server's /health URL, or the server's URL (its /health is asked)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer (a server answers within 2 s, whatever its backend does)")
	if err := fs.Parse(args); err != nil {
		return helpRequested(fs, err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("health: unexpected argument %q", fs.Arg(0))
	}
	target, err := healthURL(*url)
	if err != nil {
		return err
	}
	url = &target
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
	// Only /health's own answer says the server is healthy: a 200 of
	// another page (the console's, a proxy's) says nothing of it.
	var h struct {
		Health *bool `json:"health"`
	}
	if json.Unmarshal(body, &h) != nil || h.Health == nil || !*h.Health {
		return fmt.Errorf("health: %s answered 200 but not /health's answer ({\"health\":true}): give the server's URL or its /health URL", *url)
	}
	return nil
}

// healthURL is what health asks: the URL given, or, for a server's URL
// (no path, as the data commands' --url), that server's /health.
func healthURL(s string) (string, error) {
	u, err := neturl.Parse(s)
	if err != nil {
		return "", fmt.Errorf("health: --url %q: %w", s, err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/health"
	}
	return u.String(), nil
}
