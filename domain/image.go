package domain

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"strings"
)

// A product's picture is drawn by the shop from its category and name
// (api/images.go) and served with a year-long immutable cache: the
// document stores only its URL, never the image. An item is at most 2 MB
// and every read of it is charged per KB, so bytes of a picture in the
// product would be paid again on every product page; on Azure the
// pictures of a real shop live in Blob Storage behind a CDN, and the
// document keeps their URL the same way (docs/architecture.md).

// imageRevision is the drawing's own version: changing how pictures are
// drawn changes every URL, so no cache keeps an old drawing.
const imageRevision = "1"

// ImageVersion is the version of the picture drawn from a category and a
// name: a rename or a move to another category changes it, and with it the
// URL, so the old picture can stay cached for ever.
func ImageVersion(categoryID, name string) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", imageRevision, categoryID, name)
	return fmt.Sprintf("%016x", h.Sum64())[:10]
}

// DrawnImageURL is the URL of p's drawn picture, the version in it.
func DrawnImageURL(p Product) string {
	return "/v1/products/" + url.PathEscape(p.ID) + "/image.svg?v=" + ImageVersion(p.CategoryID, p.Name)
}

// isDrawnImage reports whether u is a picture the shop draws (of any
// version), rather than one an admin pointed elsewhere.
func isDrawnImage(u string) bool {
	return strings.HasPrefix(u, "/v1/products/") && strings.Contains(u, "/image.svg")
}

// KeepImage points p.ImageURL at its drawn picture of the current name and
// category when it has no picture or a drawn one of an older version; a
// picture an admin set elsewhere is left alone. It reports whether the
// URL changed.
func (p *Product) KeepImage() bool {
	if p.ImageURL != "" && !isDrawnImage(p.ImageURL) {
		return false
	}
	u := DrawnImageURL(*p)
	if u == p.ImageURL {
		return false
	}
	p.ImageURL = u
	return true
}
