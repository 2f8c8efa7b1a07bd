package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// openConcurrency bounds the watches being opened at once, so that
	// ten thousand connects do not overflow the server's accept queue.
	openConcurrency = 64
	// histShards spreads the watchers' latency recording over a few
	// histograms.
	histShards = 16
	// settle is how long the server is left alone before its memory is
	// read.
	settle = 2 * time.Second
	// drainStall ends the wait for deliveries when none arrived this long.
	drainStall = 5 * time.Second
)

// runWatch opens cfg.watchers watches on the prefix, spread over srvs in
// turn, then has cfg.clients writers put under it through the first and
// measures what the watchers receive: events per
// second summed over the watchers, and each event's latency from the send
// of its put to its receipt. It returns the writers' row and the
// deliveries' row.
func runWatch(ctx context.Context, cfg config, srvs []server, stdout io.Writer) ([]result, error) {
	srv := srvs[0]
	wctx, stopWatchers := context.WithCancel(ctx)
	defer stopWatchers()

	var rssBefore int64
	if cfg.serverPID > 0 {
		var err error
		if rssBefore, err = readRSS(cfg.serverPID); err != nil {
			return nil, err
		}
	}

	shards := make([]Histogram, histShards)
	ws := make([]*watcher, cfg.watchers)
	var (
		running sync.WaitGroup
		opened  sync.WaitGroup
		lost    atomic.Int64 // streams that ended before the run did
		openErr errorLog
	)
	defer running.Wait()
	defer stopWatchers() // runs before running.Wait
	sem := make(chan struct{}, openConcurrency)
	openCtx, openCancel := context.WithTimeout(wctx, cfg.openTimeout)
	defer openCancel()
	openStart := time.Now()
open:
	for i := range ws {
		select {
		case sem <- struct{}{}:
		case <-openCtx.Done():
			break open
		}
		w := &watcher{hist: &shards[i%histShards]}
		ws[i] = w
		through := srvs[i%len(srvs)]
		running.Add(1)
		opened.Add(1)
		go func() {
			defer running.Done()
			var once sync.Once
			isCreated := false
			created := func() {
				once.Do(func() {
					isCreated = true
					<-sem
					opened.Done()
				})
			}
			err := through.Watch(wctx, cfg.prefix, 0, w, created)
			if !isCreated {
				openErr.add(err)
				created()
				stopWatchers()
			} else if wctx.Err() == nil {
				lost.Add(1)
			}
		}()
	}
	waitOrDone(&opened, openCtx)
	if openErr.first != nil {
		return nil, fmt.Errorf("opening watch %d of %d: %w", openErr.n.Load(), cfg.watchers, openErr.first)
	}
	if err := openCtx.Err(); err != nil {
		return nil, fmt.Errorf("opening %d watches took over --open-timeout=%s", cfg.watchers, cfg.openTimeout)
	}
	fmt.Fprintf(stdout, "opened %d watchers in %s\n", cfg.watchers, time.Since(openStart).Round(time.Millisecond))
	if cfg.serverPID > 0 {
		time.Sleep(settle)
		after, err := readRSS(cfg.serverPID)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "server RSS %.1f MiB before, %.1f MiB with %d idle watchers: %.1f KiB per watcher\n",
			float64(rssBefore)/(1<<20), float64(after)/(1<<20), cfg.watchers,
			float64(after-rssBefore)/1024/float64(cfg.watchers))
	}

	// Writers.
	keys := newKeyNamer(cfg.prefix, cfg.keySize, cfg.keys)
	hists := make([]Histogram, cfg.clients)
	var (
		errs errorLog
		ok   atomic.Int64
		wg   sync.WaitGroup
	)
	cpu, err := startCPU(cfg.serverPID)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	p := newPlan(cfg, start)
	for c := range cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			value := bytes.Repeat([]byte{'x'}, cfg.valueSize)
			for k := 0; p.next(ctx, start, k); k++ {
				t := time.Now()
				putStamp(value, t)
				if _, err := srv.Put(ctx, keys.name((k*cfg.clients+c)%cfg.keys), value); err != nil {
					if ctx.Err() != nil {
						return
					}
					errs.add(err)
					if errs.tooMany(ok.Load()) {
						return
					}
					continue
				}
				hists[c].Record(time.Since(t))
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	writeEnd := time.Now()
	puts := result{op: "put", count: ok.Load(), errors: errs.n.Load(), elapsed: writeEnd.Sub(start), hist: new(Histogram)}
	for i := range hists {
		puts.hist.Merge(&hists[i])
	}

	// Wait for the watchers to receive every acknowledged put.
	expected := puts.count * int64(cfg.watchers)
	received := func() (n int64) {
		for _, w := range ws {
			n += w.events.Load()
		}
		return n
	}
	drainEnd := time.Now().Add(cfg.drainTimeout)
	lastN, lastChange := received(), time.Now()
	for lastN < expected && time.Now().Before(drainEnd) && time.Since(lastChange) < drainStall && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		if n := received(); n != lastN {
			lastN, lastChange = n, time.Now()
		}
	}
	cpu.report(stdout, received(), "event delivered")
	stopWatchers()
	running.Wait()

	deliveries := result{op: "deliver", count: received(), hist: new(Histogram)}
	deliveries.errors = max(expected-deliveries.count, 0)
	var last int64
	for _, w := range ws {
		last = max(last, w.last.Load())
	}
	if last > 0 {
		deliveries.elapsed = time.Unix(0, last).Sub(start)
	}
	for i := range shards {
		deliveries.hist.Merge(&shards[i])
	}
	rows := []result{puts, deliveries}
	var problems []error
	if errs.first != nil {
		problems = append(problems, fmt.Errorf("%d of %d puts failed, the first with: %w", puts.errors, puts.errors+puts.count, errs.first))
	}
	if n := lost.Load(); n > 0 {
		problems = append(problems, fmt.Errorf("%d of %d watch streams ended early", n, cfg.watchers))
	}
	if deliveries.errors > 0 {
		problems = append(problems, fmt.Errorf("%d of %d events were not delivered within --drain-timeout=%s", deliveries.errors, expected, cfg.drainTimeout))
	}
	if len(problems) > 0 {
		return rows, errors.Join(append([]error{errPartial}, problems...)...)
	}
	return rows, nil
}

// waitOrDone waits for wg or ctx, whichever is first.
func waitOrDone(wg *sync.WaitGroup, ctx context.Context) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// clockTicks is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux platform Go runs on).
const clockTicks = 100

// readCPU returns the CPU time (user and system) process pid has used,
// from /proc/PID/stat.
func readCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("--server-pid: %w", err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	f := bytes.Fields(b[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("--server-pid: cannot parse /proc/%d/stat", pid)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("--server-pid: cannot parse /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// cpuMeter reports how much CPU the server, and the tool itself, used
// over a part of a run: on a machine they share, the tool's own use is
// taken from the server.
type cpuMeter struct {
	pid         int
	start, self time.Duration
}

func startCPU(pid int) (*cpuMeter, error) {
	if pid <= 0 {
		return nil, nil
	}
	t, err := readCPU(pid)
	if err != nil {
		return nil, err
	}
	self, err := readCPU(os.Getpid())
	if err != nil {
		return nil, err
	}
	return &cpuMeter{pid: pid, start: t, self: self}, nil
}

// report prints the server's CPU time since start, and per operation.
func (m *cpuMeter) report(w io.Writer, ops int64, what string) {
	if m == nil {
		return
	}
	t, err := readCPU(m.pid)
	if err != nil {
		fmt.Fprintf(w, "server CPU: %v\n", err)
		return
	}
	self, _ := readCPU(os.Getpid())
	used, selfUsed := t-m.start, self-m.self
	fmt.Fprintf(w, "server CPU %.2fs, bench CPU %.2fs", used.Seconds(), selfUsed.Seconds())
	if ops > 0 {
		fmt.Fprintf(w, ": %.2fus and %.2fus per %s", float64(used.Microseconds())/float64(ops),
			float64(selfUsed.Microseconds())/float64(ops), what)
	}
	fmt.Fprintln(w)
}

// readRSS returns the resident set size of process pid, in bytes, from
// VmRSS in /proc/PID/status.
func readRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("--server-pid: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) != 2 || string(f[1]) != "kB" {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				break
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("--server-pid: no VmRSS in /proc/%d/status", pid)
}
