package bench

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestScanEvents(t *testing.T) {
	sent := time.Unix(1700000000, 0)
	value := make([]byte, 24)
	copy(value, "xxxxxxxxxxxxxxxxxxxxxxxx")
	putStamp(value, sent)
	now := sent.Add(3 * time.Millisecond).UnixNano()

	httpkvMsg := `{"header":{"revision":42},"events":[` +
		`{"type":"put","kv":{"key":"bench/w/1","value":"` + string(value) + `","create_revision":2,"mod_revision":42,"version":1,"lease":0}},` +
		`{"type":"put","kv":{"key":"bench/w/2","value":"` + string(value) + `","create_revision":42,"mod_revision":42,"version":1,"lease":0}}]}`
	b64 := base64.StdEncoding.EncodeToString(value)
	etcdMsg := `{"result":{"header":{"cluster_id":"1","member_id":"2","revision":"42","raft_term":"2"},"events":[` +
		`{"kv":{"key":"YmVuY2gvdy8x","create_revision":"2","mod_revision":"42","version":"3","value":"` + b64 + `"}}]}}`

	tests := []struct {
		name         string
		msg          string
		b64          bool
		want         int // events
		wantMeasured int // latencies recorded, each 3ms
	}{
		{"httpkv, two events of one revision", httpkvMsg, false, 2, 2},
		{"etcd, base64 value", etcdMsg, true, 1, 1},
		{"no events", `{"header":{"revision":41},"start_revision":42}`, false, 0, 0},
		{"value without a stamp counts, unmeasured", `{"events":[{"type":"put","kv":{"key":"k","value":"abc"}}]}`, false, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			n := scanEvents([]byte(tt.msg), tt.b64, now, &h)
			if n != tt.want {
				t.Fatalf("scanEvents(%.60q...) = %d events, want %d", tt.msg, n, tt.want)
			}
			if int(h.Count()) != tt.wantMeasured || tt.wantMeasured > 0 && h.Max() != 3*time.Millisecond {
				t.Errorf("scanEvents recorded %d latencies, max %v; want %d of 3ms", h.Count(), h.Max(), tt.wantMeasured)
			}
		})
	}
}

func TestReadSSE(t *testing.T) {
	value := []byte("0000000000000000001xxxx")
	stream := "retry: 1000\n\n" +
		"event: created\ndata: {\"header\":{\"revision\":1},\"start_revision\":2}\n\n" +
		": keep-alive\n\n" +
		"id: 2\ndata: {\"header\":{\"revision\":2},\"events\":[{\"type\":\"put\",\"kv\":{\"key\":\"a\",\"value\":\"" + string(value) + "\"}}]}\n\n" +
		"id: 3\r\ndata: {\"events\":[{\"kv\":{\"value\":\"" + string(value) + "\"}},{\"kv\":{\"value\":\"" + string(value) + "\"}}]}\r\n\r\n" +
		"event: canceled\ndata: {\"reason\":\"shutting down\"}\n\n"
	w := &watcher{hist: new(Histogram)}
	created := 0
	err := w.readSSE(strings.NewReader(stream), func() { created++ })
	if err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("readSSE ended with %v, want the canceled event", err)
	}
	if created != 1 || w.events.Load() != 3 {
		t.Errorf("readSSE saw created %d times and %d events, want 1 and 3", created, w.events.Load())
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{412 * time.Microsecond, "0.412ms"},
		{4050 * time.Microsecond, "4.05ms"},
		{66300 * time.Microsecond, "66.3ms"},
		{152 * time.Millisecond, "152ms"},
		{2160 * time.Millisecond, "2.16s"},
		{12300 * time.Millisecond, "12.3s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestKeyNamer(t *testing.T) {
	tests := []struct {
		prefix         string
		keySize, count int
		i              int
		want           string
	}{
		{"bench/put/", 16, 1000, 7, "bench/put/000007"},
		{"p/", 0, 1000, 7, "p/007"},
		{"p/", 3, 100000, 12345, "p/12345"},
	}
	for _, tt := range tests {
		if got := newKeyNamer(tt.prefix, tt.keySize, tt.count).name(tt.i); got != tt.want {
			t.Errorf("newKeyNamer(%q, %d, %d).name(%d) = %q, want %q", tt.prefix, tt.keySize, tt.count, tt.i, got, tt.want)
		}
	}
}
