// Package web is the shop's sample frontend: static HTML, JavaScript modules
// and CSS with no build step, embedded in the binary and served at "/".
// Every screen calls one /v1 endpoint and shows what that read cost, and
// what the write before it cost, from the X-Store-Operations,
// X-Request-Charge, X-Request-Charge-Estimated and Server-Timing headers.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed index.html app.js api.js ui.js styles.css favicon.svg views/*.js
var files embed.FS

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	etag        string
	contentType string
}

// contentTypes pins the types the browser relies on: a module script
// served with any other type is refused, and mime's table can be
// extended by the host system.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// aliases serve a file under a second name: browsers ask for
// /favicon.ico whatever the page's <link rel="icon"> says.
var aliases = map[string]string{"favicon.ico": "favicon.svg"}

// contentSecurityPolicy allows only same-origin scripts, styles and API
// calls: the frontend builds its DOM without innerHTML, so nothing inline
// needs to run. Product images may come from any https origin.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data: https:; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the embedded frontend: index.html for "/", each file with
// its content type and a content hash as ETag, so `Cache-Control: no-cache`
// costs a 304 rather than the file. Anything else is 404, including
// directories (no listing).
func Handler() http.Handler {
	assets, err := load(files)
	if err != nil {
		// The files are compiled in: failing here means the binary is broken.
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		if to, ok := aliases[name]; ok {
			name = to
		}
		a, ok := assets[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Referrer-Policy", "same-origin")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

// load reads every embedded file once and computes its ETag.
func load(fsys fs.FS) (map[string]asset, error) {
	assets := map[string]asset{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(name)
		ctype, ok := contentTypes[ext]
		if !ok {
			ctype = mime.TypeByExtension(ext)
		}
		assets[name] = asset{
			body:        body,
			etag:        `"` + hex.EncodeToString(sum[:8]) + `"`,
			contentType: ctype,
		}
		return nil
	})
	return assets, err
}
