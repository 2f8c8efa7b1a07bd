package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// sseMessage is one block of a text/event-stream: the fields of the lines
// up to a blank line.
type sseMessage struct {
	Event    string // the event type; "" is the default type, "message"
	Data     string // the data lines joined by "\n"
	HasData  bool
	ID       string
	HasID    bool
	Retry    int64 // reconnection time in milliseconds
	HasRetry bool
	Comments []string // comment lines inside the block, without the colon
}

func (m sseMessage) String() string {
	var b strings.Builder
	if m.HasRetry {
		fmt.Fprintf(&b, "retry: %d; ", m.Retry)
	}
	if m.HasID {
		fmt.Fprintf(&b, "id: %s; ", m.ID)
	}
	if m.Event != "" {
		fmt.Fprintf(&b, "event: %s; ", m.Event)
	}
	if m.HasData {
		fmt.Fprintf(&b, "data: %s", m.Data)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// sseParser reads a text/event-stream as the HTML standard defines it
// ("Interpreting an event stream"), and rejects, as a test should, what
// the standard would silently ignore or repair: invalid UTF-8, unknown
// fields, a retry that is not a number, an id holding NUL, a field given
// twice in a block, an id or event with no data, and a stream that ends
// inside a block or a line.
//
// Lines end with CRLF, LF or CR. A line starting with a colon is a
// comment. "name: value" and "name:value" set a field (one space after the
// colon is dropped); a line without a colon is a field with an empty
// value. A blank line ends the block.
type sseParser struct {
	r         *bufio.Reader
	line      int  // lines read so far, for messages
	started   bool // past the optional byte order mark
	pendingCR bool // the last line ended with CR: a following LF is part of it
	// Comments counts every comment line read, inside blocks or alone.
	Comments int
}

func newSSEParser(r io.Reader) *sseParser {
	return &sseParser{r: bufio.NewReader(r)}
}

// errSSESyntax is wrapped by every error for a malformed stream.
var errSSESyntax = errors.New("malformed event stream")

func (p *sseParser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", errSSESyntax, p.line, fmt.Sprintf(format, args...))
}

// readLine returns the next line without its terminator; io.EOF at the
// end of the stream between lines, and io.ErrUnexpectedEOF for a last
// line with no terminator. A CR is taken as a whole terminator at once, so
// a reader never waits for the byte after it.
func (p *sseParser) readLine() (string, error) {
	var line []byte
	for {
		c, err := p.r.ReadByte()
		if err == io.EOF {
			if len(line) == 0 {
				return "", io.EOF
			}
			return "", io.ErrUnexpectedEOF
		}
		if err != nil {
			return "", err
		}
		if p.pendingCR {
			p.pendingCR = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			p.line++
			return string(line), nil
		case '\r':
			p.pendingCR = true
			p.line++
			return string(line), nil
		}
		line = append(line, c)
	}
}

// Next returns the next block that holds a field. Blocks of comments only
// (keep-alives) and extra blank lines are skipped, their comments counted.
// It returns io.EOF when the stream ends between blocks, and an error
// wrapping errSSESyntax for a malformed stream.
func (p *sseParser) Next() (sseMessage, error) {
	var m sseMessage
	fields := 0
	var data []string
	for {
		line, err := p.readLine()
		if err != nil {
			switch {
			case err == io.EOF && fields == 0 && len(m.Comments) == 0:
				return sseMessage{}, io.EOF
			case err == io.EOF:
				return sseMessage{}, p.fail("the stream ended inside a block, with no blank line after it")
			case err == io.ErrUnexpectedEOF:
				return sseMessage{}, p.fail("the stream ended inside a line")
			}
			return sseMessage{}, err
		}
		if !p.started {
			p.started = true
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if !utf8.ValidString(line) {
			return sseMessage{}, p.fail("invalid UTF-8 %q", line)
		}
		if line == "" {
			if fields == 0 {
				m.Comments = nil // a keep-alive block, or a spare blank line
				continue
			}
			if (m.HasID || m.Event != "") && !m.HasData {
				return sseMessage{}, p.fail("a block with id or event but no data: %v", m)
			}
			m.Data = strings.Join(data, "\n")
			return m, nil
		}
		if line[0] == ':' {
			p.Comments++
			m.Comments = append(m.Comments, line[1:])
			continue
		}
		name, value, hasColon := strings.Cut(line, ":")
		if hasColon {
			value = strings.TrimPrefix(value, " ")
		}
		fields++
		switch name {
		case "data":
			m.HasData = true
			data = append(data, value)
		case "event":
			if m.Event != "" {
				return sseMessage{}, p.fail("a second event field in one block")
			}
			if value == "" {
				return sseMessage{}, p.fail("an empty event field")
			}
			m.Event = value
		case "id":
			if m.HasID {
				return sseMessage{}, p.fail("a second id field in one block")
			}
			if strings.ContainsRune(value, 0) {
				return sseMessage{}, p.fail("an id holding NUL")
			}
			m.ID, m.HasID = value, true
		case "retry":
			if m.HasRetry {
				return sseMessage{}, p.fail("a second retry field in one block")
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || value == "" || strings.Trim(value, "0123456789") != "" {
				return sseMessage{}, p.fail("retry %q is not a number of milliseconds", value)
			}
			m.Retry, m.HasRetry = n, true
		default:
			return sseMessage{}, p.fail("unknown field %q", name)
		}
	}
}

// TestSSEParser checks the parser the watch tests rely on: what it must
// accept as the standard says, and what it must reject.
func TestSSEParser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []sseMessage
		wantErr bool // after the messages of want
	}{
		{
			name: "watch preamble and a message",
			in:   "retry: 1000\n\nevent: created\ndata: {\"a\":1}\n\nid: 42\ndata: {}\n\n",
			want: []sseMessage{
				{Retry: 1000, HasRetry: true},
				{Event: "created", Data: `{"a":1}`, HasData: true},
				{ID: "42", HasID: true, Data: "{}", HasData: true},
			},
		},
		{
			name: "comments anywhere",
			in:   ": hi\n\n: keep-alive\nid: 1\n: inside\ndata: x\n:\n\n\n\n: tail\n\n",
			want: []sseMessage{{ID: "1", HasID: true, Data: "x", HasData: true, Comments: []string{" keep-alive", " inside", ""}}},
		},
		{
			name: "data lines join with LF",
			in:   "data: a\ndata\ndata:b\ndata:  c\n\n",
			want: []sseMessage{{Data: "a\n\nb\n c", HasData: true}},
		},
		{
			name: "CRLF and CR line ends",
			in:   "id: 1\r\ndata: x\r\n\r\nid: 2\rdata: y\r\r",
			want: []sseMessage{{ID: "1", HasID: true, Data: "x", HasData: true}, {ID: "2", HasID: true, Data: "y", HasData: true}},
		},
		{
			name: "leading byte order mark",
			in:   "\uFEFFdata: x\n\n",
			want: []sseMessage{{Data: "x", HasData: true}},
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
			want:    []sseMessage{{Data: "x", HasData: true}},
			wantErr: true,
		},
		{name: "ends inside a line", in: "data: x", wantErr: true},
		{name: "byte order mark later", in: "data: x\n\n\uFEFFdata: y\n\n", want: []sseMessage{{Data: "x", HasData: true}}, wantErr: true},
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
				p := newSSEParser(r)
				var got []sseMessage
				var err error
				for {
					var m sseMessage
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
				case tt.wantErr && !errors.Is(err, errSSESyntax):
					t.Errorf("Next() on %q ended with %v, want a syntax error", tt.in, err)
				case !tt.wantErr && err != io.EOF:
					t.Errorf("Next() on %q ended with %v, want io.EOF", tt.in, err)
				}
			})
		}
	}
}

func sameMessage(a, b sseMessage) bool {
	return a.Event == b.Event && a.Data == b.Data && a.HasData == b.HasData &&
		a.ID == b.ID && a.HasID == b.HasID && a.Retry == b.Retry && a.HasRetry == b.HasRetry &&
		slices.Equal(a.Comments, b.Comments)
}
