// Package ssetest reads text/event-stream answers for tests: one strict
// parser that every test of the watch, stream and observe endpoints uses,
// so that what they accept is what the HTML standard's EventSource does,
// minus what it would silently repair.
package ssetest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Message is one block of a text/event-stream: the fields of the lines
// up to a blank line.
type Message struct {
	Event    string // the event type; "" is the default type, "message"
	Data     string // the data lines joined by "\n"
	HasData  bool
	ID       string
	HasID    bool
	Retry    int64 // reconnection time in milliseconds
	HasRetry bool
	Comments []string // comment lines inside the block, without the colon
	// Raw is the block as received, terminators included, for failure
	// messages and for tests of the framing itself.
	Raw string
}

func (m Message) String() string {
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

// Parser reads a text/event-stream as the HTML standard defines it
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
type Parser struct {
	r         *bufio.Reader
	line      int    // lines read so far, for messages
	started   bool   // past the optional byte order mark
	pendingCR bool   // the last line ended with CR: a following LF is part of it
	raw       []byte // the bytes of the block being read
	// Comments counts every comment line read, inside blocks or alone.
	Comments int
}

// NewParser returns a Parser reading r.
func NewParser(r io.Reader) *Parser {
	return &Parser{r: bufio.NewReader(r)}
}

// ErrSyntax is wrapped by every error for a malformed stream.
var ErrSyntax = errors.New("malformed event stream")

func (p *Parser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, p.line, fmt.Sprintf(format, args...))
}

// readLine returns the next line without its terminator; io.EOF at the
// end of the stream between lines, and io.ErrUnexpectedEOF for a last
// line with no terminator. A CR is taken as a whole terminator at once, so
// a reader never waits for the byte after it.
func (p *Parser) readLine() (string, error) {
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
		p.raw = append(p.raw, c)
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
// wrapping ErrSyntax for a malformed stream.
func (p *Parser) Next() (Message, error) {
	var m Message
	p.raw = p.raw[:0]
	fields := 0
	var data []string
	for {
		line, err := p.readLine()
		if err != nil {
			switch {
			case err == io.EOF && fields == 0 && len(m.Comments) == 0:
				return Message{}, io.EOF
			case err == io.EOF:
				return Message{}, p.fail("the stream ended inside a block, with no blank line after it")
			case err == io.ErrUnexpectedEOF:
				return Message{}, p.fail("the stream ended inside a line")
			}
			return Message{}, err
		}
		if !p.started {
			p.started = true
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if !utf8.ValidString(line) {
			return Message{}, p.fail("invalid UTF-8 %q", line)
		}
		if line == "" {
			if fields == 0 {
				m.Comments = nil // a keep-alive block, or a spare blank line
				p.raw = p.raw[:0]
				continue
			}
			if (m.HasID || m.Event != "") && !m.HasData {
				return Message{}, p.fail("a block with id or event but no data: %v", m)
			}
			m.Data = strings.Join(data, "\n")
			m.Raw = string(p.raw)
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
				return Message{}, p.fail("a second event field in one block")
			}
			if value == "" {
				return Message{}, p.fail("an empty event field")
			}
			m.Event = value
		case "id":
			if m.HasID {
				return Message{}, p.fail("a second id field in one block")
			}
			if strings.ContainsRune(value, 0) {
				return Message{}, p.fail("an id holding NUL")
			}
			m.ID, m.HasID = value, true
		case "retry":
			if m.HasRetry {
				return Message{}, p.fail("a second retry field in one block")
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || value == "" || strings.Trim(value, "0123456789") != "" {
				return Message{}, p.fail("retry %q is not a number of milliseconds", value)
			}
			m.Retry, m.HasRetry = n, true
		default:
			return Message{}, p.fail("unknown field %q", name)
		}
	}
}
