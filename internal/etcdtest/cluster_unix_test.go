//go:build unix

package etcdtest

import (
	"errors"
	"syscall"
	"testing"
)

// TestClusterLeavesNoProcess checks that the cleanup of a cluster's test
// has killed and reaped every member.
func TestClusterLeavesNoProcess(t *testing.T) {
	var pids []int
	ran := t.Run("cluster", func(t *testing.T) {
		c := StartCluster(t, 3)
		for _, m := range c.members {
			pids = append(pids, m.current().cmd.Process.Pid)
		}
	})
	if !ran {
		t.Fatal("the cluster's test failed")
	}
	if len(pids) == 0 {
		t.Skip("the cluster's test was skipped")
	}
	if len(pids) != 3 {
		t.Fatalf("recorded %d member processes, want 3", len(pids))
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("member process %d after cleanup: kill(0) = %v, want %v", pid, err, syscall.ESRCH)
		}
	}
}
