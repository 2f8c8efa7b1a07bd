//go:build !crashpoints

package main

import (
	"io"

	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/mvcc"
)

// crashPoint is nil in the server's binary: the crash points of the
// crash tests are built in only with -tags crashpoints (crashpoint.go),
// so that no variable of the environment can make a server kill itself
// or change its batch sizes.
func crashPoint(func(string) string, io.Writer, *daemon.Config) (mvcc.Committer, error) {
	return nil, nil
}
