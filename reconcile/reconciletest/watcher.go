package reconciletest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// watcher reads the events of every key under t/.
type watcher struct{ st kv.WatchStream }

func watch(t *testing.T, b Backend, from int64) *watcher {
	t.Helper()
	st, err := b.Watch(ctx, kv.WatchRequest{Key: all.Key, End: all.End, StartRevision: from})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &watcher{st: st}
}

// next returns the next response with events, as "@rev put k=v delete
// k...": one response is one message of a watch stream.
func (w *watcher) next(t *testing.T) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		rs := w.st.Next()
		for _, r := range rs {
			if r.Canceled || r.CompactRevision != 0 {
				t.Fatalf("the watch ended: %+v", r)
			}
			if len(r.Events) == 0 {
				continue
			}
			out := []string{fmt.Sprint("@", r.Revision)}
			revs := map[int64]bool{}
			for _, ev := range r.Events {
				revs[ev.KV.ModRevision] = true
				if ev.Type == kv.EventDelete {
					out = append(out, "delete "+string(ev.KV.Key))
				} else {
					out = append(out, "put "+string(ev.KV.Key)+"="+string(ev.KV.Value))
				}
			}
			if len(revs) != 1 {
				t.Errorf("one response holds the events of revisions %v", slices.Collect(maps.Keys(revs)))
			}
			w.st.Release()
			return strings.Join(out, " ")
		}
		w.st.Release()
		select {
		case <-w.st.Ready():
		case <-deadline:
			t.Fatal("no events within 30s")
		}
	}
}
