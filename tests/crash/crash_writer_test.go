package crash

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

const (
	// envCrashChild, set to a store path, makes the test binary the crash
	// writer for that store instead of running tests.
	envCrashChild = "HTTPKV_CRASH_CHILD"
	// envCrashPrefix is the prefix of every key the crash writer writes,
	// distinct per round so that no two rounds write the same key.
	envCrashPrefix = "HTTPKV_CRASH_PREFIX"

	// crashWriters is how many goroutines of the crash writer write at once.
	crashWriters = 16
	// crashWriterLimit ends a crash writer that was never killed, so that
	// one orphaned by a dead test does not write forever.
	crashWriterLimit = time.Minute
)

// runCrashChild is the crash writer: it opens the store at path with fsync
// on and writes from crashWriters goroutines until it is killed, printing
// to stdout, as each write returns, one line that acknowledges it:
//
//	ready <rev>                                  once open, at revision rev
//	ack <writer> <rev> put:<key>=<value> ...     a put or a txn of puts
//	ack <writer> <rev> del:<key> ...             a delete
//
// The events of an ack line are, in order, every event its revision holds.
// It returns the process exit code.
func runCrashChild(path, prefix string, stdout, stderr io.Writer) int {
	s, err := mvcc.Open(path, nil, nil, mvcc.Options{})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	out := &ackWriter{w: bufio.NewWriter(stdout)}
	if err := out.printf("ready %d", s.Rev()); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), crashWriterLimit)
	defer cancel()
	errc := make(chan error, crashWriters)
	for w := range crashWriters {
		go func() { errc <- crashWrite(ctx, s, out, prefix, w) }()
	}
	for range crashWriters {
		if err := <-errc; err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "crash writer not killed within %v\n", crashWriterLimit)
	return 1
}

// ackWriter prints whole lines from many goroutines, each flushed at once
// so that a line printed is a line the parent can read even if the process
// dies right after.
type ackWriter struct {
	mu sync.Mutex // serialises lines
	w  *bufio.Writer
}

func (a *ackWriter) printf(format string, args ...any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.w, format+"\n", args...)
	return a.w.Flush()
}

// crashWrite is one writer goroutine. Step i writes name <prefix>/wNN/<i>:
// mostly a put of that key; every fifth step a txn that creates the group
// name/a, name/b, name/c; and now and then a delete of one of its own
// earlier puts or a range delete of one of its groups. Only this goroutine
// writes its keys, so every delete must find what it deletes.
func crashWrite(ctx context.Context, s *mvcc.Store, out *ackWriter, prefix string, w int) error {
	var puts, groups []string // written by this goroutine and not deleted
	for i := 0; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("%s/w%02d/%06d", prefix, w, i)
		var (
			rev    int64
			events []string
		)
		switch {
		case i%10 == 9 && len(groups) > 0:
			g := groups[0]
			groups = groups[1:]
			// [g/, g0) holds exactly the group: '0' follows '/'.
			res, err := s.DeleteRange(kv.DeleteRequest{Key: []byte(g + "/"), End: []byte(g + "0")})
			if err != nil {
				return fmt.Errorf("DeleteRange(%q): %w", g+"/", err)
			}
			if res.Deleted != 3 {
				return fmt.Errorf("DeleteRange(%q) deleted %d keys, want 3", g+"/", res.Deleted)
			}
			rev = res.Revision
			events = []string{"del:" + g + "/a", "del:" + g + "/b", "del:" + g + "/c"}
		case i%10 == 4 && len(puts) > 0:
			k := puts[0]
			puts = puts[1:]
			res, err := s.DeleteRange(kv.DeleteRequest{Key: []byte(k)})
			if err != nil {
				return fmt.Errorf("DeleteRange(%q): %w", k, err)
			}
			if res.Deleted != 1 {
				return fmt.Errorf("DeleteRange(%q) deleted %d keys, want 1", k, res.Deleted)
			}
			rev = res.Revision
			events = []string{"del:" + k}
		case i%5 == 2:
			req := kv.TxnRequest{Compare: []kv.Compare{{
				Key: []byte(name + "/a"), Target: kv.CompareCreate, Result: kv.CompareEqual, Number: 0,
			}}}
			for _, sub := range []string{"a", "b", "c"} {
				k, v := name+"/"+sub, crashValue(name+"/"+sub)
				req.Success = append(req.Success, kv.Op{Put: &kv.PutRequest{Key: []byte(k), Value: []byte(v)}})
				events = append(events, "put:"+k+"="+v)
			}
			res, err := s.Txn(req)
			if err != nil {
				return fmt.Errorf("Txn(%q): %w", name, err)
			}
			if !res.Succeeded {
				return fmt.Errorf("Txn(%q) did not succeed: %q/a exists", name, name)
			}
			rev = res.Revision
			groups = append(groups, name)
		default:
			v := crashValue(name)
			res, err := s.Put(kv.PutRequest{Key: []byte(name), Value: []byte(v)})
			if err != nil {
				return fmt.Errorf("Put(%q): %w", name, err)
			}
			rev = res.Revision
			events = []string{"put:" + name + "=" + v}
			puts = append(puts, name)
		}
		if err := out.printf("ack %d %d %s", w, rev, strings.Join(events, " ")); err != nil {
			return err
		}
	}
	return nil
}

// crashValue returns a value for key no other write has: the key and a
// random suffix.
func crashValue(key string) string {
	return fmt.Sprintf("%s#%016x", key, rand.Uint64())
}
