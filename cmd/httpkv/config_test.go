package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(c config) bool
		wantErr bool
	}{
		{"defaults", nil, nil, func(c config) bool {
			return c.listen == "127.0.0.1:2378" && c.dataDir == "./httpkv.data" && c.quotaBackendBytes == 2<<30 &&
				c.maxRequestBytes == 3<<19 && c.maxResponseBytes == 64<<20 && c.maxInflightRequestBytes == 64<<20 &&
				c.maxConnections == 0 && c.maxStreamConnections == 0 && c.maxStreamConnectionsPerUser == 10000 &&
				c.maxWatchers == 100000 && c.maxWatchersPerUser == 25000 && c.shutdownGrace == 10*time.Second && c.maxTxnOps == 128 && c.autoCompactionMode == "periodic" &&
				c.autoCompactionRetention == "0" && c.watchProgressNotifyInterval == 10*time.Minute &&
				c.authTokenTTL == 5*time.Minute && c.logLevel == "info" && c.logFormat == "json" && !c.unsafeNoFsync
		}, false},
		{"environment", nil, map[string]string{"HTTPKV_DATA_DIR": "/d", "HTTPKV_MAX_TXN_OPS": "7", "HTTPKV_UNSAFE_NO_FSYNC": "true"},
			func(c config) bool { return c.dataDir == "/d" && c.maxTxnOps == 7 && c.unsafeNoFsync }, false},
		{"flag wins over environment", []string{"--data-dir", "/flag"}, map[string]string{"HTTPKV_DATA_DIR": "/env"},
			func(c config) bool { return c.dataDir == "/flag" }, false},
		{"cors list", []string{"--cors-allowed-origins", " http://a , http://b ,"}, nil,
			func(c config) bool {
				o := c.corsOrigins()
				return len(o) == 2 && o[0] == "http://a" && o[1] == "http://b"
			}, false},
		{"bad environment value", nil, map[string]string{"HTTPKV_MAX_TXN_OPS": "many"}, nil, true},
		{"tls needs both files", []string{"--tls-cert-file", "c.pem"}, nil, nil, true},
		{"non-positive quota", []string{"--quota-backend-bytes", "0"}, nil, nil, true},
		{"negative connections", []string{"--max-connections", "-1"}, nil, nil, true},
		{"no watchers", []string{"--max-watchers", "0"}, nil, nil, true},
		{"stream connections from the environment", nil, map[string]string{"HTTPKV_MAX_STREAM_CONNECTIONS": "9", "HTTPKV_MAX_STREAM_CONNECTIONS_PER_USER": "3"},
			func(c config) bool { return c.maxStreamConnections == 9 && c.maxStreamConnectionsPerUser == 3 }, false},
		{"in-flight bytes below one body", []string{"--max-inflight-request-bytes", "1000"}, nil, nil, true},
		{"max connections from the environment", nil, map[string]string{"HTTPKV_MAX_CONNECTIONS": "50", "HTTPKV_SHUTDOWN_GRACE": "2s"},
			func(c config) bool { return c.maxConnections == 50 && c.shutdownGrace == 2*time.Second }, false},
		{"watch stream defaults", nil, nil, func(c config) bool {
			return c.watchStreamIdleTimeout == time.Minute && c.maxWatchStreams == 10000 && c.maxWatchStreamsPerUser == 32 &&
				c.maxWatchersPerStream == 10000 && c.watchStreamBufferBytes == 4<<20 && c.watchStreamResumeBytes == 4<<20 &&
				c.maxWatchPendingBytes == 256<<20 && c.watchOptions().MaxPendingBytes == 256<<20 && c.watchStreamBufferTotalBytes == 256<<20
		}, false},
		{"watch stream buffer total from the environment", nil, map[string]string{"HTTPKV_WATCH_STREAM_BUFFER_TOTAL_BYTES": "65536"},
			func(c config) bool { return c.watchStreamBufferTotalBytes == 64<<10 }, false},
		{"no watch stream buffer total", []string{"--watch-stream-buffer-total-bytes", "-1"}, nil, nil, true},
		{"watch pending bytes from the environment", nil, map[string]string{"HTTPKV_MAX_WATCH_PENDING_BYTES": "1048576"},
			func(c config) bool {
				return c.maxWatchPendingBytes == 1<<20 && c.watchOptions().MaxPendingBytes == 1<<20
			}, false},
		{"no watch pending bytes", []string{"--max-watch-pending-bytes", "0"}, nil, nil, true},
		{"watch stream idle timeout from the environment", nil, map[string]string{"HTTPKV_WATCH_STREAM_IDLE_TIMEOUT": "2s"},
			func(c config) bool { return c.watchStreamIdleTimeout == 2*time.Second }, false},
		{"no watchers per stream", []string{"--max-watchers-per-stream", "0"}, nil, nil, true},
		{"etcd backend", []string{"--backend", "etcd", "--etcd-endpoints", " http://a:2379, http://b:2379 ,", "--etcd-namespace", "/app/"}, nil,
			func(c config) bool {
				eps := c.etcd.endpointList()
				return c.backend == "etcd" && len(eps) == 2 && eps[1] == "http://b:2379" && c.etcd.namespace == "/app/" &&
					c.etcd.watchWindowBytes == 64<<20 && c.etcd.requestTimeout == 15*time.Second
			}, false},
		{"etcd from the environment", nil, map[string]string{"HTTPKV_BACKEND": "etcd", "HTTPKV_ETCD_ENDPOINTS": "http://e:2379"},
			func(c config) bool { return c.backend == "etcd" && len(c.etcd.endpointList()) == 1 }, false},
		{"etcd without endpoints", []string{"--backend", "etcd"}, nil, nil, true},
		{"etcd cluster maintenance", []string{"--backend", "etcd", "--etcd-endpoints", "http://e:2379", "--etcd-namespace", "/a/", "--etcd-cluster-maintenance"}, nil,
			func(c config) bool { return c.etcd.clusterMaintenance }, false},
		{"etcd cluster maintenance with the embedded store", []string{"--etcd-cluster-maintenance"}, nil, nil, true},
		{"etcd cluster maintenance from the environment with the embedded store", nil, map[string]string{"HTTPKV_ETCD_CLUSTER_MAINTENANCE": "true"}, nil, true},
		{"etcd cert without key", []string{"--backend", "etcd", "--etcd-endpoints", "http://e:2379", "--etcd-cert", "c.pem"}, nil, nil, true},
		{"unknown backend", []string{"--backend", "consul"}, nil, nil, true},
		{"stray argument", []string{"serve"}, nil, nil, true},
		{"unknown flag", []string{"--nope"}, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			c, err := parseConfig(tt.args, getenv, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseConfig(%q, env %v) error = %v, want error %v", tt.args, tt.env, err, tt.wantErr)
			}
			if err == nil && !tt.check(c) {
				t.Fatalf("parseConfig(%q, env %v) = %+v", tt.args, tt.env, c)
			}
		})
	}
}

// TestConnectionLimits: --max-connections left at 0 takes the limit on
// open files less its headroom, so that a server at its connection limit
// still has descriptors for its data file and /health (before, its 20000
// equalled a 20000 limit and never engaged); --max-stream-connections
// takes three quarters of it, at most 16384; limits given stay.
func TestConnectionLimits(t *testing.T) {
	for _, c := range []struct {
		openFiles          uint64
		given, givenStream int
		want, wantStream   int
	}{
		{20000, 0, 0, 18750, 14062},
		{1024, 0, 0, 896, 672},
		{1 << 20, 0, 0, 983040, 16384},
		{100, 0, 0, 1, 1},
		{0, 0, 0, 20000, 15000},
		{20000, 500, 0, 500, 375},
		{20000, 0, 10, 18750, 10},
	} {
		cfg := config{maxConnections: c.given, maxStreamConnections: c.givenStream}
		cfg.connectionLimits(c.openFiles, zerolog.Nop())
		if cfg.maxConnections != c.want || cfg.maxStreamConnections != c.wantStream {
			t.Errorf("open files %d, --max-connections %d, --max-stream-connections %d: got %d and %d, want %d and %d",
				c.openFiles, c.given, c.givenStream, cfg.maxConnections, cfg.maxStreamConnections, c.want, c.wantStream)
		}
	}
}

// TestFlagsPerBackend: a flag set on the command line or in the
// environment that does nothing with the backend chosen is refused,
// saying where the setting lives; the same flag at its default, or with
// its own backend, is taken.
func TestFlagsPerBackend(t *testing.T) {
	gateway := []string{"--backend", "etcd", "--etcd-endpoints", "http://e:2379"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" for no error
	}{
		{"a gateway's quota", append(gateway, "--quota-backend-bytes", "4194304"), nil,
			"--quota-backend-bytes does not apply to --backend etcd: the quota is etcd's: set etcd's --quota-backend-bytes on its members"},
		{"a gateway's data directory", append(gateway, "--data-dir", "/d"), nil, "--data-dir does not apply to --backend etcd: a gateway keeps nothing on disk"},
		{"a gateway's data directory from the environment", gateway, map[string]string{"HTTPKV_DATA_DIR": "/data"},
			"HTTPKV_DATA_DIR (--data-dir) does not apply to --backend etcd"},
		{"a gateway's fsync", append(gateway, "--unsafe-no-fsync"), nil, "--unsafe-no-fsync does not apply to --backend etcd"},
		{"a gateway's compaction", append(gateway, "--auto-compaction-retention", "1h"), nil,
			"--auto-compaction-retention does not apply to --backend etcd: compaction is etcd's: set etcd's --auto-compaction-retention on its members"},
		{"a gateway's compaction mode, even the default", append(gateway, "--auto-compaction-mode", "periodic"), nil,
			"--auto-compaction-mode does not apply to --backend etcd"},
		{"the embedded store's etcd endpoints", []string{"--etcd-endpoints", "http://e:2379"}, nil,
			"--etcd-endpoints does not apply to --backend embedded: it configures a gateway to an etcd cluster (--backend etcd)"},
		{"the embedded store's etcd timeout from the environment", nil, map[string]string{"HTTPKV_ETCD_REQUEST_TIMEOUT": "2s"},
			"HTTPKV_ETCD_REQUEST_TIMEOUT (--etcd-request-timeout) does not apply to --backend embedded"},
		{"a gateway with flags of both", append(gateway, "--max-txn-ops", "64", "--max-response-bytes", "1048576", "--auth-token-ttl", "1m"), nil, ""},
		{"the embedded store with its own", []string{"--data-dir", "/d", "--quota-backend-bytes", "4194304", "--unsafe-no-fsync", "--auto-compaction-retention", "1h"}, nil, ""},
		{"an empty variable is unset", gateway, map[string]string{"HTTPKV_DATA_DIR": ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("parseConfig(%q, env %v) = %v, want no error", tc.args, tc.env, err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("parseConfig(%q, env %v) = %v, want an error starting %q", tc.args, tc.env, err, tc.want)
			}
		})
	}
}
