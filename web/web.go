package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// contentSecurityPolicy lets the console load only its own files and talk
// only to its own origin: no inline script or style, no eval, no string
// assigned as HTML (Trusted Types with no policy), no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'; require-trusted-types-for 'script'"

// asset is one embedded file, read once.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the console: its page at /, its entry script and style
// sheet at /console.js and /console.css, and its other modules under
// /console/. Anything else, directories included, is 404.
//
//	@Summary		The web console
//	@Description	The web console: browse the keys a level at a time, edit values with compare-and-swap, read and restore history, follow changes live, and administer leases, the cluster and users, all through this same API. The page loads /console.js, /console.css and the modules under /console/.
//	@Tags			service
//	@ID				getConsole
//	@Produce		html
//	@Success		200	{string}	string	"The console's HTML page."
//	@Router			/ [get]
func Handler() http.Handler {
	assets := loadAssets()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		a, ok := assets[name]
		if !ok || (name == "index.html" && r.URL.Path != "/") {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Content-Type", a.contentType)
		// Revalidate every time: a new binary serves new modules at the
		// same paths, and the ETag makes the check cheap.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

// loadAssets reads every embedded file with its type and a strong ETag
// over its content.
func loadAssets() map[string]asset {
	assets := map[string]asset{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		assets[strings.TrimPrefix(p, "static/")] = asset{
			body:        body,
			contentType: ct,
			etag:        `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`,
		}
		return nil
	})
	if err != nil {
		// The embedded tree is fixed at build time; this cannot happen.
		panic(err)
	}
	return assets
}
