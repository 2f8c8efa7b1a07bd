package client

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	stream := "retry: 1000\n\n: keep-alive\n\nevent: created\ndata: {\"a\":1}\n\n" +
		"id: 42\r\ndata: one\r\ndata:two\r\n\r\n" +
		"id: bad\x00id\nid: 43\ndata: x\n\n" +
		"data: cut"
	r := newSSEReader(strings.NewReader(stream))
	want := []sseEvent{
		{event: "created", data: []byte(`{"a":1}`)},
		{id: "42", hasID: true, data: []byte("one\ntwo")},
		{id: "43", hasID: true, data: []byte("x")},
	}
	for i, w := range want {
		ev, err := r.next()
		if err != nil || ev.id != w.id || ev.hasID != w.hasID || ev.event != w.event || string(ev.data) != string(w.data) {
			t.Fatalf("message %d = %+v (%q), %v; want %+v (%q)", i, ev, ev.data, err, w, w.data)
		}
	}
	if r.retry != 1000 {
		t.Errorf("retry = %d, want 1000", r.retry)
	}
	if _, err := r.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a stream cut inside a message: next() = %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := newSSEReader(strings.NewReader("data: x\n\n")).next(); err != nil {
		t.Fatal(err)
	}
	r = newSSEReader(strings.NewReader(": only a comment\n\n"))
	if _, err := r.next(); err != io.EOF {
		t.Errorf("a stream that ends between messages: next() = %v, want io.EOF", err)
	}
}

// FuzzSSEReader: whatever the bytes, the reader returns messages or an
// error, and stops.
func FuzzSSEReader(f *testing.F) {
	f.Add("id: 1\ndata: {}\n\n")
	f.Add("retry: x\r\n:c\n\nevent: e\ndata\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		r := newSSEReader(strings.NewReader(s))
		for range len(s) + 1 {
			if _, err := r.next(); err != nil {
				return
			}
		}
		t.Fatalf("more messages than bytes in %q", s)
	})
}
