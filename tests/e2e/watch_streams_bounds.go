package e2e

import (
	"net"
	"net/http"
	"syscall"
	"time"
)

// WithSmallReceiveBuffer returns a copy of s whose streams are read with
// a 4 KiB socket receive buffer, so that a reader that stops reading
// stops the server's writes soon.
func (s *Server) WithSmallReceiveBuffer() *Server {
	c := *s
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	c.Streams = &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	return &c
}
