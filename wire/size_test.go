package wire

import (
	"math/rand/v2"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestEventsFieldSize: the sizes computed ahead are those written, for
// keys and values of every kind of byte JSON treats apart (control bytes,
// quotes, U+2028, runes of every length, bytes that are not UTF-8) and
// revisions of every sign and length.
func TestEventsFieldSize(t *testing.T) {
	pieces := [][]byte{
		[]byte("plain text "), {0x01}, {0x00}, {0x1f}, {0x7f}, []byte(`"`), []byte(`\`), []byte("\n\r\t"),
		[]byte("é"), []byte("€"), []byte("😀"), []byte("\u2028"), []byte("\u2029"), {0xff}, {0xe2, 0x80},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	bytesOf := func() []byte {
		var b []byte
		for range rnd.IntN(12) {
			b = append(b, pieces[rnd.IntN(len(pieces))]...)
		}
		return b
	}
	ints := []int64{0, 1, 9, 10, 99, 12345, -1, -10, 1<<63 - 1, -1 << 63}
	kvOf := func() kv.KeyValue {
		return kv.KeyValue{
			Key: bytesOf(), Value: bytesOf(),
			CreateRevision: ints[rnd.IntN(len(ints))], ModRevision: ints[rnd.IntN(len(ints))],
			Version: ints[rnd.IntN(len(ints))], Lease: ints[rnd.IntN(len(ints))],
		}
	}
	for i := range 5000 {
		evs := make([]kv.Event, rnd.IntN(4)+1)
		for j := range evs {
			evs[j].Type = kv.EventType(rnd.IntN(2))
			evs[j].KV = kvOf()
			if rnd.IntN(2) == 0 {
				p := kvOf()
				evs[j].PrevKV = &p
			}
		}
		if got, want := EventsFieldSize(evs), len(AppendEventsField(nil, evs)); got != want {
			t.Fatalf("case %d: eventsFieldSize = %d, AppendEventsField wrote %d bytes: %s", i, got, want, AppendEventsField(nil, evs))
		}
	}
}
