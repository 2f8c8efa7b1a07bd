package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/httpkv/httpkv/client"
)

// printer writes a command's answers in the format -o names: simple,
// for people; json, the API's answers as they are, one JSON a line; or
// value, bare values, for scripts.
type printer struct {
	w      io.Writer
	format string
}

func (p printer) json() bool   { return p.format == "json" }
func (p printer) value() bool  { return p.format == "value" }
func (p printer) simple() bool { return p.format == "simple" }

// raw writes an answer's JSON on one line.
func (p printer) raw(b json.RawMessage) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		buf.Reset()
		buf.Write(bytes.TrimSpace(b))
	}
	buf.WriteByte('\n')
	p.w.Write(buf.Bytes())
}

// answer prints an answer of the API: as it is with -o json, value
// with -o value (nothing when value is ""), and simple, lines for
// people, otherwise (nothing when simple is "").
func (p printer) answer(raw json.RawMessage, value, simple string) {
	switch {
	case p.json():
		p.raw(raw)
	case p.value():
		if value != "" {
			p.linef("%s", value)
		}
	case simple != "":
		p.linef("%s", simple)
	}
}

// linef writes a line.
func (p printer) linef(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// bytes writes b as it is, and a newline after it.
func (p printer) line(b []byte) {
	p.w.Write(append(b[:len(b):len(b)], '\n'))
}

// kv writes a key and its value for people, as etcdctl does: the key on
// a line, the value on the next (none with keys only).
func (p printer) kv(kv *client.KeyValue, keysOnly bool) {
	p.line(printable(kv.Key))
	if !keysOnly {
		p.line(printable(kv.Value))
	}
}

// printable is b for a terminal: as it is when it is text, and quoted
// as a Go string when it is not valid UTF-8 or holds control bytes
// other than newlines and tabs, which would garble the screen.
func printable(b []byte) []byte {
	if !utf8.Valid(b) || bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }) {
		return []byte(strconv.Quote(string(b)))
	}
	return b
}
