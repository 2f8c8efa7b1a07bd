package watch

import (
	"fmt"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestLost: revisions lost to a compaction before they were published end
// the watchers that needed them with a compacted response (synced ones
// and one waiting for a future revision inside the gap); a watcher that
// starts after the gap goes on with what is published next.
func TestLost(t *testing.T) {
	h := &memHistory{}
	s := New(h, 10, Options{})
	defer s.Close()
	synced := mustWatch(t, s, kv.WatchRequest{Key: []byte("k"), End: []byte{0}})
	waiting := mustWatch(t, s, kv.WatchRequest{Key: []byte("k"), End: []byte{0}, StartRevision: 15})
	after := mustWatch(t, s, kv.WatchRequest{Key: []byte("k"), End: []byte{0}, StartRevision: 20})

	// Revisions 11 to 19 are gone: the history's compact revision is 20.
	h.mu.Lock()
	h.compact = 20
	h.mu.Unlock()
	s.Lost(20)
	for name, st := range map[string]*Stream{"synced": synced, "waiting from 15": waiting} {
		_, rs := recvEvents(t, st, 1)
		if len(rs) != 1 || rs[0].CompactRevision != 20 {
			t.Errorf("%s watcher after Lost(20) got %+v, want one compacted response at 20", name, rs)
		}
	}
	ch := putAt(20, "k1", "a")
	h.add(ch)
	s.Publish([]kv.Changes{ch})
	if got, _ := recvEvents(t, after, 1); fmt.Sprint(got) != "[k1=a@20]" {
		t.Errorf("watcher from 20 after Lost(20) got %q, want [k1=a@20]", got)
	}
}
