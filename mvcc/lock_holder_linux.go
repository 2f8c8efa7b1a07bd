package mvcc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// lockHolder returns the process ID holding a flock on the file with the
// device and inode, from /proc/locks, or 0. A line reads
//
//	1: FLOCK  ADVISORY  WRITE 4242 08:01:1312 0 EOF
//
// with the device as major:minor in hex; a waiter's line has "->" after
// the number and is skipped.
func lockHolder(dev, ino uint64) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	// Linux's encoding of dev_t (new_encode_dev).
	major := (dev >> 8) & 0xfff
	minor := (dev & 0xff) | ((dev >> 12) & 0xfff00)
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !strings.EqualFold(fields[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid
		}
	}
	return 0
}
