package console

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleDeletesBinaryKey shows two keys a careless console would
// show alike: the bytes ff fe, which are not UTF-8, and the UTF-8 key
// "base64:" + their base64. The console shows the first escaped, and
// deleting it from the page deletes the bytes ff fe, not the other key.
func TestConsoleDeletesBinaryKey(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	binary := "\xff\xfe"
	lookalike := "base64:" + base64.StdEncoding.EncodeToString([]byte(binary))
	s.Put(t, binary, "bytes")
	s.Put(t, lookalike, "text")

	p := e2e.OpenConsole(t, s, "#/keys", 1280, 800)
	p.WaitText(".children a.key", `\xff\xfe`)
	p.WaitText(".children a.folder", "base64:/") // the lookalike holds the separator
	p.Click(".children a.key", `\xff\xfe`)
	p.WaitText(".key-pane h2", `\xff\xfe`)
	p.WaitText(".key-pane .value", "bytes")
	p.Click(".key-pane button", "Delete")
	p.Confirm("Delete")
	p.WaitText("#notice", `Deleted \xff\xfe`)
	p.WaitNoText(".children a.key", `\xff\xfe`)

	s.Do(t, "GET", e2e.KeyPath(binary), nil).WantError(t, http.StatusNotFound, "key_not_found")
	if kv := s.Get(t, lookalike); e2e.ValueOf(&kv) != "text" {
		t.Errorf("%q = %q after deleting the bytes ff fe, want it untouched", lookalike, e2e.ValueOf(&kv))
	}
	p.GoTo("#/keys?q=base64:")
	p.WaitText(".children a.key", lookalike)
}
