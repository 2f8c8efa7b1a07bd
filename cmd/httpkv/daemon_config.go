package main

import (
	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/compactor"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/stream/multi"
)

// daemon returns the server the command line c asks for, each flag
// given to the part it tunes.
func (c config) daemon() (daemon.Config, error) {
	d := daemon.Config{
		Listen:         c.listen,
		TLSCertFile:    c.tlsCertFile,
		TLSKeyFile:     c.tlsKeyFile,
		MaxConnections: c.maxConnections,
		ShutdownGrace:  c.shutdownGrace,
		DataDir:        c.dataDir,
		API: httpapi.Config{
			Version:            version,
			CORSAllowedOrigins: c.corsOrigins(),
			MaxRequestBytes:    c.maxRequestBytes,
			MaxResponseBytes:   c.maxResponseBytes,

			MaxInflightRequestBytes:     c.maxInflightRequestBytes,
			MaxHeldAnswerBytes:          c.maxHeldAnswerBytes,
			MaxImportBytes:              c.maxImportBytes,
			MaxStreamConnections:        c.maxStreamConnections,
			MaxStreamConnectionsPerUser: c.maxStreamConnectionsPerUser,
			MaxWatchers:                 c.maxWatchers,
			MaxWatchersPerUser:          c.maxWatchersPerUser,
			WriteTimeout:                c.writeTimeout,
			SnapshotWriteTimeout:        c.writeTimeout,
			WatchStreams: multi.Config{
				IdleTimeout:       c.watchStreamIdleTimeout,
				MaxStreams:        c.maxWatchStreams,
				MaxStreamsPerUser: c.maxWatchStreamsPerUser,
				MaxWatchers:       c.maxWatchersPerStream,
				BufferBytes:       c.watchStreamBufferBytes,
				TotalBufferBytes:  c.watchStreamBufferTotalBytes,
				ResumeBytes:       c.watchStreamResumeBytes,
			},
		},
	}
	compaction, err := compactor.ParseConfig(c.autoCompactionMode, c.autoCompactionRetention)
	if err != nil {
		return d, err
	}
	if c.backend == "etcd" {
		o, err := c.etcd.options(c)
		if err != nil {
			return d, err
		}
		d.Etcd = o
		return d, nil
	}
	d.Embedded = embedded.Options{
		Store: mvcc.Options{
			NoFsync:    c.unsafeNoFsync,
			QuotaBytes: c.quotaBackendBytes,
			MaxTxnOps:  c.maxTxnOps,
		},
		Watch:      c.watchOptions(),
		Lease:      lease.Config{MaxLeases: c.maxLeases},
		Auth:       c.authConfig(),
		Compaction: compaction,
	}
	return d, nil
}

// authConfig tunes the auth store of either backend.
func (c config) authConfig() auth.Config {
	return auth.Config{TokenTTL: c.authTokenTTL, BcryptCost: c.bcryptCost}
}
