package watch

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

var padding = bytes.Repeat([]byte{' '}, 256)

// heapInUse returns the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestBoundedMemory: a reader stops while 100,000 keys are written; the
// watcher holds at most its queue and one revision, and the heap does not
// grow with the writes. Once the reader resumes, it receives every event,
// in order.
func TestBoundedMemory(t *testing.T) {
	const (
		writers    = 4
		perTxn     = 100
		txns       = 1000 // 100,000 puts
		queueLimit = DefaultQueueLimit
		valueSize  = 256
		keys       = 1000
		// What the heap may grow by while the reader is stopped: the
		// index's revisions and bbolt's bookkeeping, far less than the
		// ~35 MiB the unread events would take.
		maxGrowth = 16 << 20
	)
	s := newTestStore(t, Options{})
	st := mustWatch(t, s, kv.WatchRequest{Key: []byte("k/"), End: []byte("k0")})
	start := st.StartRevision()

	// Which txn made each revision: writer w's n-th txn puts keys
	// k/<(w*txns/writers + n)*perTxn + i mod keys>, values "w.n.i" padded.
	var revsMu sync.Mutex
	txnOf := make(map[int64][2]int, txns)
	key := func(w, n, i int) []byte {
		return strconv.AppendInt([]byte("k/"), int64(((w*txns/writers+n)*perTxn+i)%keys), 10)
	}
	value := func(w, n, i int) []byte {
		v := make([]byte, 0, valueSize)
		v = strconv.AppendInt(v, int64(w), 10)
		v = strconv.AppendInt(append(v, '.'), int64(n), 10)
		v = strconv.AppendInt(append(v, '.'), int64(i), 10)
		return append(v, padding[:valueSize-len(v)]...)
	}

	base := heapInUse()
	var maxHeap, maxPending atomic.Int64
	var writing sync.WaitGroup
	var writeErr atomic.Pointer[error]
	for w := range writers {
		writing.Go(func() {
			for n := range txns / writers {
				ops := make([]kv.Op, perTxn)
				for i := range ops {
					ops[i].Put = &kv.PutRequest{Key: key(w, n, i), Value: value(w, n, i)}
				}
				ch, err := s.Write(func(tx *mvcc.WriteTxn) error {
					_, err := tx.Txn(kv.TxnRequest{Success: ops})
					return err
				})
				if err != nil {
					writeErr.CompareAndSwap(nil, &err)
					return
				}
				revsMu.Lock()
				txnOf[ch.Revision] = [2]int{w, n}
				revsMu.Unlock()
			}
		})
	}
	writesDone := make(chan struct{})
	go func() {
		writing.Wait()
		close(writesDone)
	}()
	// While the reader is stopped: sample what the watcher holds often,
	// and the heap now and then.
	for i := 0; ; i++ {
		stopped := false
		select {
		case <-writesDone:
			stopped = true
		case <-time.After(5 * time.Millisecond):
		}
		maxPending.Store(max(maxPending.Load(), s.Stats().PendingEvents))
		if i%50 == 0 || stopped {
			maxHeap.Store(max(maxHeap.Load(), int64(heapInUse())))
		}
		if stopped {
			break
		}
	}
	if p := writeErr.Load(); p != nil {
		t.Fatalf("write: %v", *p)
	}
	growth := maxHeap.Load() - int64(base)
	t.Logf("reader stopped for %d puts: heap grew by at most %.1f MiB; at most %d events pending; stats %+v",
		txns*perTxn, float64(growth)/(1<<20), maxPending.Load(), s.Stats())
	if growth > maxGrowth {
		t.Errorf("heap grew by %.1f MiB while the reader was stopped, want under %d MiB", float64(growth)/(1<<20), maxGrowth>>20)
	}
	if p := maxPending.Load(); p > queueLimit+perTxn {
		t.Errorf("Stats().PendingEvents reached %d, want at most the queue limit %d and one revision of %d", p, queueLimit, perTxn)
	}

	// Resume: every event arrives, in revision order, each revision whole.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	rev, i := start, 0 // the event expected next: revision rev's i-th
	for rev < start+txns {
		rs, err := st.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv at revision %d: %v; stats %+v", rev, err, s.Stats())
		}
		for _, r := range rs {
			if len(r.Events) == 0 {
				t.Fatalf("at revision %d: got %s, want events", rev, fmtResponse(r))
			}
			for _, ev := range r.Events {
				wn := txnOf[rev]
				if ev.KV.ModRevision != rev || !bytes.Equal(ev.KV.Key, key(wn[0], wn[1], i)) || !bytes.Equal(ev.KV.Value, value(wn[0], wn[1], i)) {
					t.Fatalf("got %s, want put %q at revision %d", fmtEvent(ev), key(wn[0], wn[1], i), rev)
				}
				if i++; i == perTxn {
					rev, i = rev+1, 0
				}
			}
			if i != 0 {
				t.Fatalf("response %s splits revision %d", fmtResponse(r), rev)
			}
		}
	}
	t.Logf("resumed reader caught up with %d puts in %v", txns*perTxn, time.Since(began))
}
