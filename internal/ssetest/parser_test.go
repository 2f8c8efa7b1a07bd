package ssetest

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestParser checks the parser the watch tests rely on: what it must
// accept as the standard says, and what it must reject.
func TestParser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []Message
		wantErr bool // after the messages of want
	}{
		{
			name: "watch preamble and a message",
			in:   "retry: 1000\n\nevent: created\ndata: {\"a\":1}\n\nid: 42\ndata: {}\n\n",
			want: []Message{
				{Retry: 1000, HasRetry: true},
				{Event: "created", Data: `{"a":1}`, HasData: true},
				{ID: "42", HasID: true, Data: "{}", HasData: true},
			},
		},
		{
			name: "comments anywhere",
			in:   ": hi\n\n: keep-alive\nid: 1\n: inside\ndata: x\n:\n\n\n\n: tail\n\n",
			want: []Message{{ID: "1", HasID: true, Data: "x", HasData: true, Comments: []string{" keep-alive", " inside", ""}}},
		},
		{
			name: "data lines join with LF",
			in:   "data: a\ndata\ndata:b\ndata:  c\n\n",
			want: []Message{{Data: "a\n\nb\n c", HasData: true}},
		},
		{
			name: "CRLF and CR line ends",
			in:   "id: 1\r\ndata: x\r\n\r\nid: 2\rdata: y\r\r",
			want: []Message{{ID: "1", HasID: true, Data: "x", HasData: true}, {ID: "2", HasID: true, Data: "y", HasData: true}},
		},
		{
			name: "leading byte order mark",
			in:   "\uFEFFdata: x\n\n",
			want: []Message{{Data: "x", HasData: true}},
		},
		{
			name: "empty stream",
			in:   "",
		},
		{name: "unknown field", in: "colour: red\ndata: x\n\n", wantErr: true},
		{name: "field name with a space", in: "data : x\n\n", wantErr: true},
		{name: "retry not a number", in: "retry: 1s\n\n", wantErr: true},
		{name: "retry negative", in: "retry: -1\n\n", wantErr: true},
		{name: "retry empty", in: "retry\n\n", wantErr: true},
		{name: "second id", in: "id: 1\nid: 2\ndata: x\n\n", wantErr: true},
		{name: "second event", in: "event: a\nevent: b\ndata: x\n\n", wantErr: true},
		{name: "id with NUL", in: "id: 1\x002\ndata: x\n\n", wantErr: true},
		{name: "id without data", in: "id: 7\n\n", wantErr: true},
		{name: "event without data", in: "event: progress\n\n", wantErr: true},
		{name: "invalid UTF-8", in: "data: \xff\n\n", wantErr: true},
		{
			name:    "ends inside a block",
			in:      "data: x\n\nid: 3\ndata: y\n",
			want:    []Message{{Data: "x", HasData: true}},
			wantErr: true,
		},
		{name: "ends inside a line", in: "data: x", wantErr: true},
		{name: "byte order mark later", in: "data: x\n\n\uFEFFdata: y\n\n", want: []Message{{Data: "x", HasData: true}}, wantErr: true},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			name := tt.name
			if oneByte {
				name += "/one byte a read"
			}
			t.Run(name, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				p := NewParser(r)
				var got []Message
				var err error
				for {
					var m Message
					if m, err = p.Next(); err != nil {
						break
					}
					got = append(got, m)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("Next() on %q gave %v, then %v; want %v", tt.in, got, err, tt.want)
				}
				for i := range got {
					if !sameMessage(got[i], tt.want[i]) {
						t.Errorf("Next() #%d on %q = %#v, want %#v", i, tt.in, got[i], tt.want[i])
					}
				}
				switch {
				case tt.wantErr && !errors.Is(err, ErrSyntax):
					t.Errorf("Next() on %q ended with %v, want a syntax error", tt.in, err)
				case !tt.wantErr && err != io.EOF:
					t.Errorf("Next() on %q ended with %v, want io.EOF", tt.in, err)
				}
			})
		}
	}
}

func sameMessage(a, b Message) bool {
	return a.Event == b.Event && a.Data == b.Data && a.HasData == b.HasData &&
		a.ID == b.ID && a.HasID == b.HasID && a.Retry == b.Retry && a.HasRetry == b.HasRetry &&
		slices.Equal(a.Comments, b.Comments)
}
