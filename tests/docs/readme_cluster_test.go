package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/tests/e2e"
)

// loopbackAddr matches an address of the README's cluster walk-through.
var loopbackAddr = regexp.MustCompile(`127\.0\.0\.1:[0-9]+\b`)

// TestREADMECluster runs the README's walk-through of a cluster without
// Docker (its "sh cluster" blocks) as a reader would, in order, in one
// bash: three etcd members of the release the tests use, as `etcd` on
// PATH, and two gateways of this checkout's binary, every address of the
// walk-through moved to a free port. The conventions of
// TestREADMEExamples hold: every curl answers 2xx or the status its line
// announces (the 503s while etcd has no quorum), and the watch through
// the second gateway shows the put made through the first.
func TestREADMECluster(t *testing.T) {
	t.Parallel()
	if e2e.OnEtcd(t) {
		t.Skip("the walk-through starts an etcd cluster of its own, whatever the backend under test: the default pass runs it")
	}
	needREADMEPrograms(t)
	etcd := etcdtest.Binary(t)
	text, blocks := readREADME(t)
	blocks = slices.DeleteFunc(blocks, func(b readmeBlock) bool { return !b.cluster() })
	if len(blocks) == 0 {
		t.Fatal("README.md has no sh cluster block")
	}

	// Every address of the walk-through gets a port of its own, below
	// the ephemeral range, so that a member restarted on its ports finds
	// them free.
	var addrs []string
	for _, b := range blocks {
		for _, l := range b.lines {
			for _, a := range loopbackAddr.FindAllString(l, -1) {
				if !slices.Contains(addrs, a) {
					addrs = append(addrs, a)
				}
			}
		}
	}
	ports := etcdtest.FreePorts(t, len(addrs))
	moved := map[string]string{}
	for i, a := range addrs {
		moved[a] = fmt.Sprintf("127.0.0.1:%d", ports[i])
	}
	address := func(line string) string {
		return loopbackAddr.ReplaceAllStringFunc(line, func(a string) string { return moved[a] })
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{filepath.Join(dir, "httpkv"): e2e.ServerBinary(t), filepath.Join(bin, "etcd"): etcd} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if len(b) > 8<<10 {
				b = b[len(b)-8<<10:]
			}
			t.Logf("%s (the end of it):\n%s", filepath.Base(l), b)
		}
	})
	out := runREADME(t, text, blocks, address, dir, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")})
	// What the walk-through's comments say the reads print: the value
	// written through the other gateway, before and after a member died,
	// and the history once the members are back, acknowledged writes all
	// there (the red answered 503 possibly too).
	for _, want := range []string{`(?m)^blue$`, `(?m)^green$`, `(?m)^\["blue","green","red"(,"red")?\]$`} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("the walk-through printed no line matching %s", want)
		}
	}
}
