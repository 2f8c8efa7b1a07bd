package docs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// The README's examples are run as written, top to bottom, by
// TestREADMEExamples. What it runs, and what it expects, is said in the
// README itself, by these conventions:
//
//   - A fenced block whose info string is "sh" is run. Every such block
//     runs in order in one bash process (set -euo pipefail), so a variable
//     one block sets (B, ROOT, LEASE...) is there for the next. Its working
//     directory is a fresh one holding ./httpkv, the binary of this
//     checkout; the addresses 127.0.0.1:2378 and 127.0.0.1:2379 are those
//     of a fresh server the test started and of a free port.
//   - A block whose info string is "sh no-run" (GitHub shows it as sh) is
//     for people only: starting a server in the foreground, docker, a
//     script for cron. It is checked with bash -n, not run.
//   - A block whose info string is "sh cluster" belongs to the walk-through
//     of an etcd cluster on one machine: TestREADMECluster runs those
//     blocks, in order, in a script of their own, with an etcd on PATH and
//     every 127.0.0.1:PORT in them moved to a free port; the conventions
//     on curl below hold for them too.
//   - Every curl must answer 2xx, unless its line (or a line it continues
//     with a trailing backslash) carries a comment starting with the
//     status it answers instead: `# 412: it changed since`. Then it must
//     answer exactly that, so an announced failure cannot go stale.
//   - A curl with -N reads a stream: the test cuts it after
//     readmeStreamSeconds and checks that it printed a created message
//     (an election's observe: a leader or no_leader one) and, when it
//     starts from a past revision (start_revision=), data messages.
//   - The data commands (./httpkv get...) talk to the fresh server
//     (HTTPKV_URL is its URL). Every one must exit 0, unless its line
//     carries a comment starting with the status it exits with instead:
//     `# exit 1: key_not_found`. A command that runs until Ctrl-C (watch,
//     elect, lock NAME without a command, lease keepalive without
//     --once) is interrupted (SIGINT) once it has printed something and
//     readmeStreamSeconds have passed, must exit 0 then, and must have
//     printed something: a watch from a past revision (--rev), events.
//
// The test replaces curl with a shell function that runs the real one,
// notes the status of each call with the README line it was made on
// (bash's BASH_LINENO, since the script keeps the README's line numbers),
// and stops the script at the first status the README does not announce.

// readmeStreamSeconds is how long a watch example of the README is read.
// The messages it is checked for are sent at once; this only ends it.
const readmeStreamSeconds = 3

// readmeBlock is a fenced code block of the README.
type readmeBlock struct {
	lang  string   // the info string's first word
	attrs []string // its other words
	first int      // the README line of the block's first code line, from 1
	lines []string // the code, without the fence's indentation
}

var fenceOpen = regexp.MustCompile("^( *)```(.*)$")

// readmeBlocks returns the fenced code blocks of a Markdown document.
func readmeBlocks(text string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	var cur *readmeBlock
	indent := ""
	for i, line := range strings.Split(text, "\n") {
		if cur == nil {
			if m := fenceOpen.FindStringSubmatch(line); m != nil {
				words := strings.Fields(m[2])
				cur = &readmeBlock{first: i + 2}
				if len(words) > 0 {
					cur.lang, cur.attrs = words[0], words[1:]
				}
				indent = m[1]
			}
			continue
		}
		if strings.TrimSpace(line) == "```" {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		cur.lines = append(cur.lines, strings.TrimPrefix(line, indent))
	}
	if cur != nil {
		return nil, fmt.Errorf("the block that starts at line %d is not closed", cur.first-1)
	}
	return blocks, nil
}

// runs reports whether TestREADMEExamples runs the block.
func (b readmeBlock) runs() bool { return b.lang == "sh" && !b.no("run") && !b.cluster() }

// cluster reports whether the block is one of the cluster walk-through,
// which TestREADMECluster runs.
func (b readmeBlock) cluster() bool {
	return b.lang == "sh" && !b.no("run") && slices.Contains(b.attrs, "cluster")
}

// no reports whether the block's info string says no-what.
func (b readmeBlock) no(what string) bool { return slices.Contains(b.attrs, "no-"+what) }

// announced matches a comment that starts with an HTTP status.
var announced = regexp.MustCompile(`(?:^|\s)#\s*([1-5][0-9][0-9])\b`)

// announcedExit matches a comment that starts with an exit status.
var announcedExit = regexp.MustCompile(`\s#\s*exit ([0-9]+)\b`)

// dataCommand matches a line that runs a command of ./httpkv, and names
// it: a data command unless it is one of the server's (health,
// snapshot...), which run as any other line.
var dataCommand = regexp.MustCompile(`^(?:[A-Z_]+=\$\()?\./httpkv ([a-z][a-z-]*)\b`)

// untilInterrupted reports whether a line runs a data command that
// goes on until Ctrl-C.
func untilInterrupted(line string) bool {
	m := dataCommand.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	switch m[1] {
	case "watch", "elect":
		return true
	case "lock":
		return !strings.Contains(line, " -- ")
	case "lease":
		return strings.Contains(line, " keepalive ") && !strings.Contains(line, "--once")
	}
	return false
}

// readmeScriptLine is line n as the README test runs it: a data command
// that announces its exit status runs in an if, its status noted; one
// that runs until Ctrl-C is interrupted once it has printed something
// (httpkv_interrupted), and what it printed kept.
func readmeScriptLine(line string, n int) string {
	code, _, _ := strings.Cut(line, " #")
	if m := announcedExit.FindStringSubmatch(line); m != nil && dataCommand.MatchString(line) {
		return fmt.Sprintf("if %s; then rc=0; else rc=$?; fi; httpkv_exit %d %s $rc", code, n, m[1])
	}
	if untilInterrupted(line) {
		return fmt.Sprintf("httpkv_interrupted %d %s", n, code)
	}
	return line
}

// announcements returns, by README line, the status the line of one of
// blocks announces; a command continued over lines by trailing
// backslashes carries its announcement on each of them.
func announcements(blocks []readmeBlock) map[int]int {
	want := map[int]int{}
	for _, b := range blocks {
		for i := 0; i < len(b.lines); {
			j := i
			for j < len(b.lines)-1 && strings.HasSuffix(b.lines[j], `\`) {
				j++
			}
			status := 0
			for _, l := range b.lines[i : j+1] {
				if m := announced.FindStringSubmatch(l); m != nil {
					status, _ = strconv.Atoi(m[1])
				}
			}
			if status != 0 {
				for k := i; k <= j; k++ {
					want[b.first+k] = status
				}
			}
			i = j + 1
		}
	}
	return want
}

// readmePrelude is sourced before the README's script. HTTPKV_DIR is the
// working directory; curl.log gets a line "LINE STATUS EXIT" per curl,
// stream.LINE what a stream printed.
const readmePrelude = `set -euo pipefail
shopt -s inherit_errexit
trap 'echo "README.md:$LINENO: exit status $?" >&2' ERR
trap 'jobs -p | xargs -r kill 2>/dev/null || true; wait' EXIT

# httpkv_exit LINE WANT GOT: a data command exited GOT, announcing WANT.
httpkv_exit() {
	echo "$1 $3" >>"$HTTPKV_DIR/exit.log"
	if [[ $2 != "$3" ]]; then
		echo "README.md:$1: ./httpkv exited $3, and the line announces exit $2" >&2
		return 1
	fi
}

# httpkv_interrupted LINE COMMAND...: runs a data command that goes on
# until Ctrl-C, and interrupts it (SIGINT) once it has printed something
# and HTTPKV_STREAM_SECONDS have passed, not before: on a loaded machine
# the command may take seconds to start, and an interrupt before it
# catches interrupts kills it. (Started in the background, it ignores
# SIGINT until it catches it.) A command that prints nothing for a minute
# is interrupted anyway; one still running a minute after the interrupt
# is killed, and the script fails there rather than hang.
httpkv_interrupted() {
	local line=$1 out="$HTTPKV_DIR/run.$1" pid rc=0 i
	shift
	"$@" >"$out" &
	pid=$!
	sleep "$HTTPKV_STREAM_SECONDS"
	for ((i = 0; i < 600; i++)); do
		[[ -s $out ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -INT "$pid" 2>/dev/null || true
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	cat "$out"
	if ((rc != 0)); then
		echo "README.md:$line: ./httpkv exited $rc when interrupted" >&2
		return "$rc"
	fi
	echo "$line 0" >>"$HTTPKV_DIR/exit.log"
}

curl() {
	local line=${BASH_LINENO[0]} err rc code stream= a
	for a in "$@"; do
		if [[ $a == --no-buffer || ($a == -[!-]* && $a == *N*) ]]; then stream=1; fi
	done
	err=$(mktemp)
	set +e
	if [[ -n $stream ]]; then
		command curl --no-progress-meter -w '%{stderr}\n@@status %{http_code}\n' --max-time "$HTTPKV_STREAM_SECONDS" "$@" 2>"$err" |
			tee -a "$HTTPKV_DIR/stream.$line"
		rc=${PIPESTATUS[0]}
	else
		command curl --no-progress-meter -w '%{stderr}\n@@status %{http_code}\n' "$@" 2>"$err"
		rc=$?
	fi
	set -e
	code=$(sed -n 's/^@@status //p' "$err" | tail -n 1)
	if [[ -n $stream && $rc == 28 ]]; then
		sed -i '/^curl: (28) /d' "$err" # the cut, below
	fi
	sed '/^@@status /d; /^$/d' "$err" >&2
	rm -f "$err"
	echo "$line ${code:-000} $rc" >>"$HTTPKV_DIR/curl.log"
	if [[ -n $stream && $rc == 28 && $code == 200 ]]; then
		rc=0 # the stream was cut, as streams are
	fi
	if ((rc != 0)); then
		echo "README.md:$line: curl exited with status $rc" >&2
		return "$rc"
	fi
	local want=${HTTPKV_WANT[$line]:-}
	if [[ -z $want && $code != 2?? ]]; then
		echo "README.md:$line: curl answered $code, and the line announces no failure (end it with a comment '# $code: why' if it is meant to fail)" >&2
		return 1
	fi
	if [[ -n $want && $code != "$want" ]]; then
		echo "README.md:$line: curl answered $code, and the line announces $want" >&2
		return 1
	fi
}
`

// TestREADMEExamples runs the README's shell examples, as written and in
// order, against a fresh server (see the conventions above).
func TestREADMEExamples(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "the README's examples restore a snapshot into a data directory, and its backups are the embedded store's")
	needREADMEPrograms(t)
	text, blocks := readREADME(t)
	var run []readmeBlock
	for _, b := range blocks {
		switch {
		case b.runs():
			run = append(run, b)
		case b.lang == "sh":
			checkShellSyntax(t, b) // the cluster's are run by TestREADMECluster
		}
	}

	s := e2e.StartServer(t, "--bcrypt-cost=4")
	spare := e2e.FreeAddr(t)
	dir := t.TempDir()
	if err := os.Symlink(e2e.ServerBinary(t), filepath.Join(dir, "httpkv")); err != nil {
		t.Fatal(err)
	}
	address := strings.NewReplacer("127.0.0.1:2378", strings.TrimPrefix(s.URL, "http://"), "127.0.0.1:2379", spare)
	runREADME(t, text, run, address.Replace, dir, []string{"HTTPKV_URL=" + s.URL})
}

// needREADMEPrograms skips (fails, with CI set) a test of the README's
// shell examples when a program they use is missing.
func needREADMEPrograms(t *testing.T) {
	t.Helper()
	for _, prog := range []string{"bash", "curl", "jq"} {
		_, err := exec.LookPath(prog)
		e2e.NeedPrograms(t, "the README's examples need "+prog, err)
	}
}

// readREADME returns README.md and its fenced blocks.
func readREADME(t *testing.T) (string, []readmeBlock) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(string(text))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return string(text), blocks
}

// readmeScriptTimeout bounds one run of README examples: a bound on the
// test, not an assertion on timing.
const readmeScriptTimeout = 5 * time.Minute

// runREADME runs blocks of the README (text), in order, in one bash in
// dir, with address applied to every line and env added to the
// environment, and checks what the conventions above say: every curl's
// status, every stream's messages, and that the script ran to its end.
// It returns what the script printed.
func runREADME(t *testing.T, text string, blocks []readmeBlock, address func(string) string, dir string, env []string) []byte {
	t.Helper()
	want := announcements(blocks)
	// The script keeps the README's line numbers: line n of the README is
	// line n of the script, blank unless it is code that runs.
	lines := make([]string, strings.Count(text, "\n")+1)
	for _, b := range blocks {
		for i, l := range b.lines {
			lines[b.first-1+i] = readmeScriptLine(address(l), b.first+i)
		}
	}
	script := filepath.Join(dir, "readme.sh")
	if err := os.WriteFile(script, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var prelude strings.Builder
	prelude.WriteString("declare -A HTTPKV_WANT=(")
	for line, status := range want {
		fmt.Fprintf(&prelude, "[%d]=%d ", line, status)
	}
	prelude.WriteString(")\n")
	prelude.WriteString(readmePrelude)
	prelude.WriteString("source ./readme.sh\necho done >\"$HTTPKV_DIR/done\"\n")
	if err := os.WriteFile(filepath.Join(dir, "prelude.sh"), []byte(prelude.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), readmeScriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "prelude.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HTTPKV_DIR="+dir, "HTTPKV_STREAM_SECONDS="+strconv.Itoa(readmeStreamSeconds),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
		return strings.HasPrefix(kv, "B=") || strings.HasPrefix(kv, "HTTPKV_TOKEN=") ||
			strings.HasPrefix(kv, "HTTPKV_USER=") || strings.HasPrefix(kv, "HTTPKV_URL=")
	})
	cmd.Env = append(cmd.Env, env...)
	// The script's own background servers share its process group, which
	// is killed whatever happens.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, runErr := cmd.CombinedOutput()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if runErr != nil {
		t.Fatalf("the README's examples failed (%v); their output:\n%s", runErr, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		t.Fatalf("the README's examples did not run to the end; their output:\n%s", out)
	}
	t.Logf("the README's examples printed:\n%s", out)

	calls := readCurlLog(t, filepath.Join(dir, "curl.log"))
	for line, status := range want {
		if _, ok := calls[line]; !ok {
			t.Errorf("README.md:%d announces %d, but no curl ran on that line", line, status)
		}
	}
	ran := readExitLog(t, filepath.Join(dir, "exit.log"))
	for _, b := range blocks {
		for i, l := range b.lines {
			n := b.first + i
			if strings.HasPrefix(strings.TrimSpace(l), "curl ") && hasStreamFlag(l) {
				checkStream(t, dir, n, l)
			}
			if announcedExit.MatchString(l) && dataCommand.MatchString(l) && !ran[n] {
				t.Errorf("README.md:%d announces an exit status, but the command did not run", n)
			}
			if untilInterrupted(l) {
				checkInterrupted(t, dir, n, l)
			}
		}
	}
	return out
}

// readExitLog reads exit.log: the README lines whose data command ran
// with an announced status, or until interrupted.
func readExitLog(t *testing.T, path string) map[int]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	ran := map[int]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var line, status int
		if _, err := fmt.Sscan(l, &line, &status); err == nil {
			ran[line] = true
		}
	}
	return ran
}

// checkInterrupted fails the test unless the command on README line n,
// run until interrupted, printed something, and events if it watched
// from a past revision.
func checkInterrupted(t *testing.T, dir string, n int, line string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run.%d", n)))
	if err != nil || len(b) == 0 {
		t.Errorf("README.md:%d: %s\nprinted nothing (%v)", n, line, err)
		return
	}
	if strings.Contains(line, " watch ") && strings.Contains(line, "--rev") &&
		!strings.Contains(string(b), "PUT ") && !strings.Contains(string(b), `"type":"events"`) {
		t.Errorf("README.md:%d: %s\nwatches from a past revision but printed no events:\n%s", n, line, b)
	}
}

// hasStreamFlag reports whether a curl command line reads a stream (-N).
func hasStreamFlag(line string) bool {
	for _, w := range strings.Fields(line) {
		if w == "--no-buffer" || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "N")) {
			return true
		}
	}
	return false
}

// checkStream fails the test unless the stream read on README line n
// printed a created message and, from a past revision, data messages.
func checkStream(t *testing.T, dir string, n int, line string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("stream.%d", n)))
	if err != nil {
		t.Errorf("README.md:%d: the stream printed nothing (%v)", n, err)
		return
	}
	out := string(b)
	if strings.Contains(line, "/observe") {
		// An election's observe opens with who leads now, not created.
		if !strings.Contains(out, `"type":"leader"`) && !strings.Contains(out, `"type":"no_leader"`) {
			t.Errorf("README.md:%d: %s\nprinted no leader or no_leader message:\n%s", n, line, out)
		}
		return
	}
	created := strings.Contains(out, "event: created") || strings.Contains(out, `"type":"created"`)
	if !created {
		t.Errorf("README.md:%d: %s\nprinted no created message:\n%s", n, line, out)
	}
	if strings.Contains(line, "start_revision=") {
		data := strings.Contains(out, `"events":[{`)
		if !data {
			t.Errorf("README.md:%d: %s\nstarts from a past revision but printed no events:\n%s", n, line, out)
		}
	}
}

// readCurlLog reads curl.log: the status of the curls, by README line.
func readCurlLog(t *testing.T, path string) map[int][]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no curl ran: %v", err)
	}
	defer f.Close()
	calls := map[int][]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line, status, rc int
		if _, err := fmt.Sscan(sc.Text(), &line, &status, &rc); err != nil {
			t.Fatalf("curl.log: %q: %v", sc.Text(), err)
		}
		calls[line] = append(calls[line], status)
	}
	return calls
}

// checkShellSyntax fails the test unless a block bash does not run parses.
func checkShellSyntax(t *testing.T, b readmeBlock) {
	t.Helper()
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(strings.Join(b.lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("README.md:%d: the block is not valid shell (%v):\n%s", b.first-1, err, out)
	}
}
