package main

import (
	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/httpapi"
)

// The connection limits' defaults, from the process's limit on open
// files. A client's connection is a descriptor; at the limit, accept
// fails ("too many open files") and so does everything else that opens
// one: a defrag's copy, a snapshot, a gateway's connection to etcd. So
// the server keeps a headroom of descriptors below the limit, and
// accepts at most the rest as connections.

// openFilesHeadroom is how many descriptors of the limit are not for
// client connections: a sixteenth, at least 128. They hold the data file
// and its copies, the listeners, a gateway's etcd clients, and the spare
// connections that answer /health past --max-connections.
func openFilesHeadroom(limit uint64) uint64 { return max(128, limit/16) }

// maxStreamConnectionsOf is --max-stream-connections by default: three
// quarters of --max-connections, leaving the rest for requests, and at
// most httpapi.DefaultMaxStreamConnections, a bound on their memory.
func maxStreamConnectionsOf(maxConnections int) int {
	return max(1, min(maxConnections*3/4, httpapi.DefaultMaxStreamConnections))
}

// connectionLimits fills in the limits left to their defaults
// (--max-connections and --max-stream-connections at 0) from the limit on
// open files, raised to its hard limit first (raiseOpenFiles; 0 when not
// known), and warns of a --max-connections given past what the limit
// leaves.
func (c *config) connectionLimits(openFiles uint64, log zerolog.Logger) {
	openFiles = min(openFiles, 1<<24) // RLIM_INFINITY, where it is allowed
	if c.maxConnections == 0 {
		c.maxConnections = 20000
		if openFiles > 0 {
			c.maxConnections = int(max(1, openFiles-min(openFiles-1, openFilesHeadroom(openFiles))))
		}
	} else if openFiles > 0 && uint64(c.maxConnections) > openFiles-min(openFiles, openFilesHeadroom(openFiles)) {
		log.Warn().Int("max_connections", c.maxConnections).Uint64("open_files_limit", openFiles).
			Msg("--max-connections leaves too few of the open-file limit for the data file, snapshots and /health: at the limit, accepting and opening files fail")
	}
	if c.maxStreamConnections == 0 {
		c.maxStreamConnections = maxStreamConnectionsOf(c.maxConnections)
	}
}
