package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"
)

// exportLine is the key and value of one line of an export.
type exportLine struct {
	Key, KeyBase64, Value, ValueBase64 string
	Header                             *struct{ Revision int64 }
	Count                              int64
	Error                              *struct{ Code, Message string }
}

// ImportNDJSON posts body to /v1/import?query and decodes the answer.
func (s *Server) ImportNDJSON(tb testing.TB, query string, body []byte, want int, header ...string) RewriteAnswer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r, err := s.SendWith(s.Streams, ctx, "POST", "/v1/import"+query, body, append([]string{"Content-Type", "application/x-ndjson"}, header...)...)
	if err != nil {
		tb.Fatal(err)
	}
	CheckReply(tb, r)
	var a RewriteAnswer
	r.Ok(tb, want, &a)
	return a
}

// RewriteAnswer is the answer of an import or a restore.
type RewriteAnswer struct {
	Header                               struct{ Revision int64 }
	Created, Updated, Deleted, Unchanged int64
	Keys                                 struct{ Created, Updated, Deleted []string }
}

// ExportTo streams GET /v1/export?query into a file, and returns its
// header and a hash of its key and value lines.
func (s *Server) ExportTo(tb testing.TB, query, file string) (rev, count int64, lines int, hash string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/export"+query, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := s.Streams.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("GET /v1/export%s = %d %s %s", query, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	f, err := os.Create(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(resp.Body, f))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var l exportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			tb.Fatalf("export line %d %q: %v", lines+1, sc.Text(), err)
		}
		switch {
		case l.Error != nil:
			tb.Fatalf("the export ended with an error: %+v", l.Error)
		case lines == 0:
			if l.Header == nil {
				tb.Fatalf("the export's first line %q has no header", sc.Text())
			}
			rev, count = l.Header.Revision, l.Count
		default:
			if lines < 100 {
				checkKeyValueLine(tb, sc.Bytes())
			}
			fmt.Fprintf(h, "%q %q %q %q\n", l.Key, l.KeyBase64, l.Value, l.ValueBase64)
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("reading the export: %v", err)
	}
	return rev, count, lines, fmt.Sprintf("%x", h.Sum(nil))
}

// checkKeyValueLine fails unless a line of an export is a KeyValue of
// the OpenAPI document, with no key-like field beside its twin.
func checkKeyValueLine(tb testing.TB, line []byte) {
	tb.Helper()
	doc, _, err := LoadAPIDoc()
	if err == nil {
		err = MatchSchema(doc, "KeyValue", line)
	}
	if err == nil {
		err = CheckTwins(line)
	}
	if err != nil {
		tb.Fatalf("export line %s: %v", line, err)
	}
}
