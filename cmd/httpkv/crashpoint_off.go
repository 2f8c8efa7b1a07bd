//go:build !crashpoints

package main

import (
	"io"

	"github.com/httpkv/httpkv/mvcc"
)

// crashPoint is nil in the server's binary: the crash points of the
// crash tests are built in only with -tags crashpoints (crashpoint.go),
// so that no variable of the environment can make a server kill itself.
func crashPoint(func(string) string, io.Writer) (mvcc.Committer, error) { return nil, nil }
