package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
	"github.com/httpkv/httpkv/snapshot"
)

// runSnapshotSave is `httpkv snapshot save`: it downloads GET /v1/snapshot
// and keeps it as FILE once verified (snapshot.Save). On any failure FILE
// is left as it was.
func runSnapshotSave(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newSnapshotFlags("save", "save [--url URL] [--token TOKEN] FILE\n\n"+
		"Downloads a snapshot of a running server, verifies it and keeps it as FILE.", stderr)
	base := fs.String("url", "http://127.0.0.1:2378", "the server's URL")
	token := fs.String("token", "", "a root token, when auth is enabled (default $HTTPKV_TOKEN)")
	cacert := fs.String("cacert", "", "PEM file of the CA that signed an HTTPS server's certificate (default: the system's)")
	idle := fs.Duration("idle-timeout", time.Minute, "give up when the server sends nothing for this long")
	file, err := parseFile(fs, args)
	if err != nil {
		return helpRequested(fs, err)
	}
	if *token == "" {
		*token = getenv("HTTPKV_TOKEN")
	}
	client, err := snapshotClient(*cacert)
	if err != nil {
		return err
	}
	d := &download{
		url:    strings.TrimSuffix(*base, "/") + "/v1/snapshot",
		token:  *token,
		client: client,
		idle:   *idle,
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		d.progress = stderr
	}
	info, err := d.save(ctx, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "saved revision %d (%d keys, %s) to %s\n", info.Revision, info.Keys, byteSize(info.Size), file)
	return nil
}

// snapshotClient is an HTTP client that trusts the CA in cacert, if
// given (cli.HTTPClient), and waits a minute at most for the answer's
// head. It has no overall timeout: a snapshot takes as long as it takes.
func snapshotClient(cacert string) (*http.Client, error) {
	c, err := cli.HTTPClient(cacert)
	if err != nil {
		return nil, err
	}
	c.Transport.(*http.Transport).ResponseHeaderTimeout = time.Minute
	return c, nil
}

// download is one `snapshot save`.
type download struct {
	url      string
	token    string
	client   *http.Client
	idle     time.Duration
	progress io.Writer // where the progress bar goes; nil for none
}

// save downloads the snapshot into file.
func (d *download) save(ctx context.Context, file string) (snapshot.Info, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return snapshot.Info{}, err
	}
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return snapshot.Info{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snapshot.Info{}, responseError(d.url, resp)
	}
	// The server sends Content-Length; a proxy may have dropped it (-1),
	// and then the hash alone tells a whole snapshot.
	if resp.ContentLength >= 0 && resp.ContentLength < snapshot.HashSize {
		return snapshot.Info{}, fmt.Errorf("GET %s: Content-Length %d: not a snapshot", d.url, resp.ContentLength)
	}
	// A server that sends nothing for d.idle ends the download.
	stalled := fmt.Errorf("GET %s: nothing received for %v", d.url, d.idle)
	timer := time.AfterFunc(d.idle, func() { cancel(stalled) })
	defer timer.Stop()
	var body io.Reader = &idleReader{r: resp.Body, timer: timer, idle: d.idle}
	if d.progress != nil {
		bar := newProgressBar(d.progress, resp.ContentLength)
		defer bar.Exit()
		body = io.TeeReader(body, bar)
	}
	info, err := snapshot.Save(file, body, resp.ContentLength)
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return info, err
}

// responseError makes an error of a server's refusal, with the code and
// message of its JSON error when it has one.
func responseError(url string, resp *http.Response) error {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		return fmt.Errorf("GET %s: %s: %s: %s", url, resp.Status, body.Error.Code, body.Error.Message)
	}
	return fmt.Errorf("GET %s: %s", url, resp.Status)
}

// idleReader restarts timer after every read.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.timer.Reset(ir.idle)
	}
	return n, err
}

// newProgressBar draws the download's progress on w, a terminal.
func newProgressBar(w io.Writer, size int64) *progressbar.ProgressBar {
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("snapshot"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}
