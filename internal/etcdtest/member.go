package etcdtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits for a member to exit on SIGTERM
// before it kills it.
const stopGrace = 30 * time.Second

// Member is one etcd process of a Cluster. Its URLs and directories stay
// the same across restarts.
type Member struct {
	// Name is the member's etcd name, "m0", "m1", ...
	Name string
	// ClientURL is where it serves clients: gRPC, and the HTTP/JSON
	// gateway under /v3/.
	ClientURL string
	// PeerURL is where it talks raft to the other members.
	PeerURL string
	// DataDir holds its WAL and database; it survives Kill and Restart.
	DataDir string
	// LogPath is the file its stdout and stderr go to, across restarts.
	LogPath string

	args []string // etcd's command line, without the binary

	mu     sync.Mutex // guards proc and starts
	proc   *process   // nil when not running
	starts int
}

// process is one run of a member.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd.Wait has returned
	err    error         // cmd.Wait's result, set before exited is closed
}

// Running reports whether the member's process is running.
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc != nil && !m.proc.hasExited()
}

// start runs bin with the member's arguments, its output appended to its
// log file. The member must not be running.
func (m *Member) start(bin string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil && !m.proc.hasExited() {
		return fmt.Errorf("%s is already running", m.Name)
	}
	log, err := os.OpenFile(m.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the child holds its own descriptor
	m.starts++
	fmt.Fprintf(log, "=== etcdtest: start %d of %s at %s\n", m.starts, m.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(bin, m.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", m.Name, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	m.proc = p
	return nil
}

// signal sends sig to the running process and waits until it has exited,
// killing it if it has not after grace. A member that is not running is
// left alone.
func (m *Member) signal(sig syscall.Signal, grace time.Duration) {
	p := m.current()
	if p == nil || p.hasExited() {
		return
	}
	_ = signalGroup(p.cmd.Process, sig)
	if sig != syscall.SIGKILL {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.exited:
			return
		case <-t.C:
			_ = signalGroup(p.cmd.Process, syscall.SIGKILL)
		}
	}
	<-p.exited
}

// current returns the member's latest process; nil before its first
// start.
func (m *Member) current() *process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// logTail returns up to the last n bytes of the member's log.
func (m *Member) logTail(n int64) string {
	f, err := os.Open(m.LogPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	if off := fi.Size() - n; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err.Error()
		}
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
