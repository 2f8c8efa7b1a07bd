package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is the console's: its own script and style only,
// and no page may frame it (a framed console holding a token could be
// clicked through by the page around it).
const ContentSecurityPolicy = "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"

// Handler serves the console.
//
//	@Summary		The web console
//	@Description	A page that lists keys by prefix, reads, writes and deletes them, and shows a live watch of the prefix, through this same API. Its script and style sheet are /console.js and /console.css.
//	@Tags			service
//	@ID				console
//	@Produce		html
//	@Success		200	{string}	string	"The console's HTML page."
//	@Router			/ [get]
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// The embedded tree is fixed at build time; this cannot happen.
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		// For browsers that do not know frame-ancestors.
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
