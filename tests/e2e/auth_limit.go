package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// From returns a copy of s whose requests come from the loopback address
// ip (Linux routes all of 127.0.0.0/8 to the loopback device).
func (s *Server) From(ip string) *Server {
	c := *s
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c.Client = &http.Client{Timeout: RequestTimeout, Transport: &http.Transport{DialContext: dialer.DialContext}}
	return &c
}

// RSS returns the server process's resident memory, from /proc.
func (s *Server) RSS(tb testing.TB) int64 {
	tb.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		tb.Fatalf("reading the server's memory: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no VmRSS in /proc/%d/status", s.Cmd.Process.Pid)
	return 0
}
