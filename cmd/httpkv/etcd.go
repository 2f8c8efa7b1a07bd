package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/httpkv/httpkv/backend/etcd"
)

// etcdConfig is the command line of --backend etcd (API.md "Backends").
type etcdConfig struct {
	endpoints          string
	namespace          string
	caCert, cert, key  string
	username, password string
	watchWindowBytes   int64
	readCacheBytes     int64
	requestTimeout     time.Duration
	maxHistoryWatches  int
	clusterMaintenance bool
}

// addFlags registers the flags of the etcd backend.
func (c *etcdConfig) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.endpoints, "etcd-endpoints", "", "comma list of etcd client URLs (required with --backend etcd)")
	fs.StringVar(&c.namespace, "etcd-namespace", "", "key prefix inside etcd that holds this deployment's keys; the API never shows it")
	fs.StringVar(&c.caCert, "etcd-cacert", "", "CA certificate that signed etcd's server certificates")
	fs.StringVar(&c.cert, "etcd-cert", "", "client certificate to present to etcd")
	fs.StringVar(&c.key, "etcd-key", "", "the key of --etcd-cert")
	fs.StringVar(&c.username, "etcd-username", "", "the gateway's own etcd user, if etcd has auth on")
	fs.StringVar(&c.password, "etcd-password", "", "the password of --etcd-username")
	fs.Int64Var(&c.watchWindowBytes, "etcd-watch-window-bytes", etcd.DefaultWindowBytes, "most bytes of recent revisions held in memory for watchers that are behind; older ones are read from etcd")
	fs.Int64Var(&c.readCacheBytes, "etcd-read-cache-bytes", etcd.DefaultReadCacheBytes, "most bytes of the namespace's keys and values held in memory to answer reads at the current revision; a larger namespace is read from etcd; 0: every read goes to etcd")
	fs.DurationVar(&c.requestTimeout, "etcd-request-timeout", etcd.DefaultRequestTimeout, "how long an etcd request may take, while etcd answers, before the API answers 503")
	fs.IntVar(&c.maxHistoryWatches, "etcd-max-history-watches", etcd.DefaultMaxHistoryWatches, "most etcd watches requests may have open at once to read history (a page of /v1/history each); past it they answer 429")
	fs.BoolVar(&c.clusterMaintenance, "etcd-cluster-maintenance", false, "this deployment administers the etcd cluster: with --etcd-namespace, POST /v1/compact, POST /v1/defrag and DELETE /v1/alarms act on every deployment of the cluster (without it they answer 501)")
}

// check validates the etcd flags of a --backend etcd command line.
func (c *etcdConfig) check() error {
	if c.endpointList() == nil {
		return errors.New("--backend etcd needs --etcd-endpoints")
	}
	if (c.cert == "") != (c.key == "") {
		return errors.New("--etcd-cert and --etcd-key go together")
	}
	if (c.username == "") != (c.password == "") {
		return errors.New("--etcd-username and --etcd-password go together")
	}
	if c.readCacheBytes < 0 {
		return errors.New("--etcd-read-cache-bytes must not be negative")
	}
	if c.watchWindowBytes <= 0 || c.requestTimeout <= 0 || c.maxHistoryWatches <= 0 {
		return errors.New("--etcd-watch-window-bytes, --etcd-request-timeout and --etcd-max-history-watches must be positive")
	}
	return nil
}

// readCacheBytesOption is --etcd-read-cache-bytes as etcd.Options takes
// it: 0 turns the cache off.
func (c *etcdConfig) readCacheBytesOption() int64 {
	if c.readCacheBytes == 0 {
		return -1
	}
	return c.readCacheBytes
}

func (c *etcdConfig) endpointList() []string {
	var eps []string
	for _, ep := range strings.Split(c.endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	return eps
}

// tlsConfig returns the TLS configuration towards etcd, or nil for
// plain connections.
func (c *etcdConfig) tlsConfig() (*tls.Config, error) {
	if c.caCert == "" && c.cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caCert != "" {
		pem, err := os.ReadFile(c.caCert)
		if err != nil {
			return nil, fmt.Errorf("--etcd-cacert: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--etcd-cacert %s holds no PEM certificate", c.caCert)
		}
	}
	if c.cert != "" {
		pair, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return nil, fmt.Errorf("--etcd-cert, --etcd-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// options returns the gateway's options of the command line cfg.
func (c *etcdConfig) options(cfg config) (*etcd.Options, error) {
	tlsCfg, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	return &etcd.Options{
		Endpoints:         c.endpointList(),
		Namespace:         c.namespace,
		TLS:               tlsCfg,
		Username:          c.username,
		Password:          c.password,
		RequestTimeout:    c.requestTimeout,
		MaxTxnOps:         cfg.maxTxnOps,
		MaxLeases:         cfg.maxLeases,
		MaxResponseBytes:  cfg.maxResponseBytes,
		WindowBytes:       c.watchWindowBytes,
		ReadCacheBytes:    c.readCacheBytesOption(),
		MaxHistoryWatches: c.maxHistoryWatches,
		// The cluster's compaction, defragmentation and alarms.
		ClusterMaintenance: c.clusterMaintenance,
		Watch:              cfg.watchOptions(),
		Auth:               cfg.authConfig(),
	}, nil
}
