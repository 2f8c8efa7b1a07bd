package cli

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/httpkv/httpkv/client"
)

// DefaultURL is the server the commands call without --url or HTTPKV_URL.
const DefaultURL = "http://127.0.0.1:2378"

// commonFlags are the flags of every data command.
type commonFlags struct {
	url, token, user, cacert, output string
}

func (f *commonFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "the server's `URL` (default $HTTPKV_URL, or "+DefaultURL+")")
	fs.StringVar(&f.token, "token", "", "a `TOKEN` of POST /v1/auth/token, when auth is on (default $HTTPKV_TOKEN)")
	fs.StringVar(&f.user, "user", "", "log in as `NAME[:PASSWORD]`; without PASSWORD, ask for it on the terminal (default $HTTPKV_USER)")
	fs.StringVar(&f.cacert, "cacert", "", "the CA that signed an HTTPS server's certificate, a PEM `FILE` (default: the system's)")
	fs.StringVar(&f.output, "output", "simple", "how to print answers, a `FORMAT`: simple (for people), json (the API's answers as they are, one JSON a line) or value (bare values, for scripts)")
	fs.StringVar(&f.output, "o", "simple", "")
}

// fromEnv fills in what was not given from the environment.
func (f *commonFlags) fromEnv(getenv func(string) string, given map[string]bool) {
	for name, p := range map[string]*string{"url": &f.url, "token": &f.token, "user": &f.user, "cacert": &f.cacert} {
		if !given[name] && *p == "" {
			*p = getenv("HTTPKV_" + strings.ToUpper(name))
		}
	}
	if f.url == "" {
		f.url = DefaultURL
	}
}

// call is one run of a command: its arguments, flags and environment,
// and the client and printer it uses.
type call struct {
	path   string // the command: "get", "lease grant"
	args   []string
	env    Env
	given  map[string]bool // the flags given on the command line
	common commonFlags
	out    printer
	api    *client.Client
	// retried is set while a stream reconnects, so that a person hears
	// once of a server that is down.
	retried bool
}

func newCall(path string, args []string, common commonFlags, fs *flag.FlagSet, env Env) (*call, error) {
	x := &call{path: path, args: args, env: env, given: map[string]bool{}}
	fs.Visit(func(f *flag.Flag) { x.given[f.Name] = true })
	common.fromEnv(env.Getenv, x.given)
	x.common = common
	switch common.output {
	case "simple", "json", "value":
	default:
		return nil, usagef(path, "-o must be simple, json or value, not %q", common.output)
	}
	x.out = printer{w: env.Stdout, format: common.output}
	var err error
	if x.api, err = x.newClient(); err != nil {
		return nil, err
	}
	return x, nil
}

// newClient is the client of the server the flags name.
func (x *call) newClient() (*client.Client, error) {
	var opts []client.Option
	if x.common.cacert != "" {
		hc, err := HTTPClient(x.common.cacert)
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.WithHTTPClient(hc))
	}
	switch {
	case x.common.user != "":
		name, password, ok := strings.Cut(x.common.user, ":")
		if !ok {
			if x.env.ReadPassword == nil {
				return nil, usagef(x.path, "--user %s: no password, and no terminal to ask for it on: give --user NAME:PASSWORD", name)
			}
			var err error
			if password, err = x.env.ReadPassword(fmt.Sprintf("Password of %s: ", name)); err != nil {
				return nil, fmt.Errorf("reading the password: %w", err)
			}
		}
		opts = append(opts, client.WithUser(name, password))
	case x.common.token != "":
		opts = append(opts, client.WithToken(x.common.token))
	}
	c, err := client.New(x.common.url, opts...)
	if err != nil {
		return nil, usagef(x.path, "--url: %v", err)
	}
	return c, nil
}

// HTTPClient is an HTTP client that trusts the CA in the PEM file
// cacert, if not empty, besides the system's. It has no overall
// timeout: streams and downloads take as long as they take.
func HTTPClient(cacert string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cacert != "" {
		pem, err := os.ReadFile(cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert: no certificate in %s", cacert)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

// explain adds to a call that got no answer what a person needs to act
// on it: which server could not be reached, and how to name another.
// An error that wraps one says already what was lost (a lock's lease).
func (x *call) explain(err error) error {
	if ce, ok := err.(*client.ConnError); ok {
		return fmt.Errorf("cannot reach the server at %s (--url, HTTPKV_URL): %w", x.common.url, ce.Err)
	}
	return err
}
