package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Client calls one httpkv server. It is safe for concurrent use.
type Client struct {
	base  string // scheme://host[/path], without a trailing slash
	hc    *http.Client
	creds *credentials // nil with auth off
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc (its
// transport's TLS settings, proxies, timeouts). A timeout on hc bounds
// streams too: a watch through a client with a 30 s timeout reconnects
// every 30 s (without losing anything). The default is a client of its
// own without an overall timeout.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// WithToken sends token, from POST /v1/auth/token, with every request.
func WithToken(token string) Option {
	return func(c *Client) { c.creds = &credentials{token: token} }
}

// WithUser logs in as name with password before the first request that
// needs it, and again whenever the server answers that the token has
// expired (a token lives --auth-token-ttl).
func WithUser(name, password string) Option {
	return func(c *Client) { c.creds = &credentials{name: name, password: password, login: true} }
}

// New returns a client of the server at baseURL, such as
// "http://127.0.0.1:2378".
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("the server's URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the server's URL must be http:// or https:// and a host, such as http://127.0.0.1:2378, not %q", baseURL)
	}
	c := &Client{base: strings.TrimSuffix(u.String(), "/"), hc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// URL returns the server's base URL.
func (c *Client) URL() string { return c.base }

// credentials are a client's token and, with WithUser, what gets a new one.
type credentials struct {
	name, password string
	login          bool // log in with name and password

	mu    sync.Mutex // guards token
	token string
}

// tokenFor returns the token to send, logging in first if there is
// none yet or if the server refused stale, the one sent before.
func (c *Client) tokenFor(ctx context.Context, stale string) (string, error) {
	cr := c.creds
	if cr == nil {
		return "", nil
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.login && (cr.token == "" || cr.token == stale) {
		t, err := c.Login(ctx, cr.name, cr.password)
		if err != nil {
			return "", err
		}
		cr.token = t.Token
	}
	return cr.token, nil
}

// request is one call of the API.
type request struct {
	method string
	path   string // escaped, from /v1 on
	query  url.Values
	header http.Header
	body   []byte // sent again as it is if the call is retried
	// stream, when set, is the body instead of body: a large one sent
	// once (an import), of streamSize bytes (-1 if unknown).
	stream     io.Reader
	streamSize int64
	anonymous  bool // sent without a token (logging in)
}

// send makes the call and returns the answer, whatever its status; the
// caller closes its body. An answer 401 to a token of WithUser logs in
// again and repeats the call once, unless its body was a stream.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	var token string
	if !r.anonymous {
		var err error
		if token, err = c.tokenFor(ctx, ""); err != nil {
			return nil, err
		}
	}
	resp, err := c.sendOnce(ctx, r, token)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || token == "" || !c.creds.login || r.stream != nil {
		return resp, err
	}
	drain(resp)
	if token, err = c.tokenFor(ctx, token); err != nil {
		return nil, err
	}
	return c.sendOnce(ctx, r, token)
}

func (c *Client) sendOnce(ctx context.Context, r request, token string) (*http.Response, error) {
	target := c.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.stream != nil {
		body = r.stream
	} else if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, err
	}
	if r.stream != nil {
		req.ContentLength = r.streamSize
	}
	for name, values := range r.header {
		req.Header[name] = values
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &ConnError{Method: r.method, URL: c.base + r.path, Err: err}
	}
	return resp, nil
}

// do makes the call and decodes a 2xx JSON answer into out (when out is
// not nil), returning the answer's body as the server sent it; any
// other answer is an *Error.
func (c *Client) do(ctx context.Context, r request, out any) (json.RawMessage, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &ConnError{Method: r.method, URL: c.base + r.path, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if resp.StatusCode >= 300 {
		return nil, answerError(resp, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, fmt.Errorf("%s %s: the answer is not what the API says (%w): %.200q", r.method, r.path, err, body)
		}
	}
	return body, nil
}

// drain reads what is left of an answer nobody wants and closes it, so
// that its connection can be used again.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// ConnError is a call that got no answer: the server could not be
// reached, or the connection broke before the answer was read. Whether
// a write in flight took effect is then unknown.
type ConnError struct {
	Method, URL string
	Err         error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Method, e.URL, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// isConnError reports whether err is a call that got no answer.
func isConnError(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce)
}
