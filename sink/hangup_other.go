//go:build !linux

package sink

import (
	"errors"
	"net"
)

// hangups is Linux's epoll only; elsewhere each taken-over connection has
// a reader goroutine of its own (see connSink).
type hangups struct{}

func newHangups() (*hangups, error) { return nil, errors.New("no epoll") }

func (h *hangups) watch(net.Conn, chan struct{}) (func(), bool) { return nil, false }

func (h *hangups) stop() {}
