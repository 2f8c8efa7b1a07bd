package web

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func serve(t *testing.T, h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlerServesConsole(t *testing.T) {
	h := Handler()
	tests := []struct {
		path, contentType, contains string
	}{
		{"/", "text/html", "<title>httpkv console</title>"},
		{"/console.js", "javascript", "new Live("},
		{"/console.css", "text/css", "font"},
		{"/console/live.js", "javascript", "new EventSource"},
		{"/console/vendor/js-yaml-5.5.0.mjs", "javascript", "js-yaml 5.5.0"},
		{"/console/vendor/js-yaml-5.5.0.LICENSE", "", "MIT"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := serve(t, h, tt.path)
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), tt.contentType) || !strings.Contains(string(body), tt.contains) {
				t.Fatalf("GET %s = %d %q (%d bytes), want 200 %s containing %q", tt.path, rec.Code, rec.Header().Get("Content-Type"), len(body), tt.contentType, tt.contains)
			}
			csp := rec.Header().Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self'", "style-src 'self';", "frame-ancestors 'none'", "default-src 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("GET %s: Content-Security-Policy %q lacks %q", tt.path, csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("GET %s: Content-Security-Policy %q allows something unsafe", tt.path, csp)
			}
			if xfo, nosniff := rec.Header().Get("X-Frame-Options"), rec.Header().Get("X-Content-Type-Options"); xfo != "DENY" || nosniff != "nosniff" {
				t.Errorf("GET %s: X-Frame-Options %q, X-Content-Type-Options %q; want DENY, nosniff", tt.path, xfo, nosniff)
			}
		})
	}
}

// TestHandlerRefuses checks that only the embedded files are served: no
// directory listings, no index.html under another name, nothing outside.
func TestHandlerRefuses(t *testing.T) {
	h := Handler()
	for _, path := range []string{"/console/", "/console/vendor/", "/index.html", "/console/nope.js", "/../web.go", "/static/console.js"} {
		if rec := serve(t, h, path); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, rec.Code)
		}
	}
}

// TestHandlerRevalidates checks the ETag: the same file answers 304 to
// it, and the page is never cached without asking.
func TestHandlerRevalidates(t *testing.T) {
	h := Handler()
	rec := serve(t, h, "/console.js")
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET /console.js: ETag %q, Cache-Control %q; want an ETag and no-cache", etag, rec.Header().Get("Cache-Control"))
	}
	if rec := serve(t, h, "/console.js", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("GET /console.js with If-None-Match %s = %d, want 304", etag, rec.Code)
	}
	if rec := serve(t, h, "/console.css", "If-None-Match", etag); rec.Code != http.StatusOK {
		t.Errorf("GET /console.css with the ETag of console.js = %d, want 200", rec.Code)
	}
}

// TestNoInlineCode checks what the CSP would otherwise catch only in a
// browser: no inline script, style attribute or event handler attribute
// in the page, and no HTML parsed from strings in the modules.
func TestNoInlineCode(t *testing.T) {
	page, err := static.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s+[^>]*)?>\s*[^<\s]`),
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
	} {
		if m := re.Find(page); m != nil {
			t.Errorf("index.html has inline code: %q", m)
		}
	}
	err = fs.WalkDir(static, "static/console", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		src, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s uses %s", p, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
