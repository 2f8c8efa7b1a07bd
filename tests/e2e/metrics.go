package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Metric returns one sample of the server's /metrics, which must be
// there.
func (s *Server) Metric(tb testing.TB, name string) float64 {
	tb.Helper()
	v, ok := ParseMetrics(s.Do(tb, "GET", "/metrics", nil).Want(tb, http.StatusOK).Body)[name]
	if !ok {
		tb.Fatalf("GET /metrics has no sample %s", name)
	}
	return v
}

// AllocatedBy returns the bytes the server allocated on its heap while fn
// ran (with a scrape of /metrics on each side).
func (s *Server) AllocatedBy(tb testing.TB, fn func()) float64 {
	tb.Helper()
	before := s.Metric(tb, "go_memstats_alloc_bytes_total")
	fn()
	return s.Metric(tb, "go_memstats_alloc_bytes_total") - before
}

// ResidentMemory is a process's resident memory: anonymous (its heap
// and stacks), and pages of files it maps.
type ResidentMemory struct{ Anon, File int64 }

// Memory returns the server process's resident memory.
func (s *Server) Memory(tb testing.TB) ResidentMemory {
	tb.Helper()
	m, err := ReadMemory(s.Cmd.Process.Pid)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// ReadMemory reads the resident memory of process pid from /proc.
func ReadMemory(pid int) (ResidentMemory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ResidentMemory{}, err
	}
	var m ResidentMemory
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "RssAnon" && name != "RssFile") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s %q: %w", name, rest, err)
		}
		if name == "RssAnon" {
			m.Anon = kb << 10
		} else {
			m.File = kb << 10
		}
	}
	return m, nil
}

// CPU returns the CPU time the server process has used, user and system.
func (s *Server) CPU(tb testing.TB) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Cmd.Process.Pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses:
	// utime and stime are the 12th and 13th, in clock ticks (100 a
	// second on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", s.Cmd.Process.Pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// Peaks are the most a server held while SampleFor watched it.
type Peaks struct {
	RSS, Buffered, Pending float64 // the most seen
}

// SampleFor samples the server's resident memory and what it counts
// against its bounds on watch buffers, every 100 ms for d.
func (s *Server) SampleFor(tb testing.TB, d time.Duration) Peaks {
	tb.Helper()
	var f Peaks
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		m := ParseMetrics(s.Do(tb, "GET", "/metrics", nil).Want(tb, http.StatusOK).Body)
		f.RSS = max(f.RSS, float64(s.RSS(tb)))
		f.Buffered = max(f.Buffered, m["httpkv_watch_stream_buffered_bytes"])
		f.Pending = max(f.Pending, m["httpkv_watch_pending_bytes"])
	}
	return f
}

// WaitStreams waits until the server counts n streams open.
func (s *Server) WaitStreams(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(WatchTimeout)
	for s.Metric(tb, "httpkv_stream_connections") != float64(n) {
		if time.Now().After(deadline) {
			tb.Fatalf("%v streams open, want %d", s.Metric(tb, "httpkv_stream_connections"), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

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

// ParseMetrics reads the Prometheus text format into sample name (with
// its labels as written) -> value.
func ParseMetrics(b []byte) map[string]float64 {
	out := make(map[string]float64)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
