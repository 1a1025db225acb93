package api

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/reference-shop/shop/domain"
)

// Codes the HTTP layer adds to the domain's: they only exist on the wire.
const (
	eUnsupportedMedia = "unsupported_media_type"
	eMethodNotAllowed = "method_not_allowed"
)

// statusOf is THE map from error code to HTTP status, the one place a
// code becomes a status. Anything unknown is a 500.
var statusOf = map[string]int{
	domain.ENOTFOUND:      http.StatusNotFound,
	domain.ECONFLICT:      http.StatusConflict,
	domain.EOUTOFSTOCK:    http.StatusConflict,
	domain.EDECLINED:      http.StatusPaymentRequired,
	domain.EPRECONDITION:  http.StatusPreconditionFailed,
	domain.EINVALID:       http.StatusBadRequest,
	domain.ETOOLARGE:      http.StatusRequestEntityTooLarge,
	domain.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	domain.EUNAUTHORIZED:  http.StatusUnauthorized,
	domain.EFORBIDDEN:     http.StatusForbidden,
	domain.ETOOMANY:       http.StatusTooManyRequests,
	domain.EUNAVAILABLE:   http.StatusServiceUnavailable,
	domain.EPARTITIONFULL: http.StatusInsufficientStorage,
	domain.EINTERNAL:      http.StatusInternalServerError,
	eUnsupportedMedia:     http.StatusUnsupportedMediaType,
	eMethodNotAllowed:     http.StatusMethodNotAllowed,
}

// problemBase prefixes every problem type: the type names the error code,
// e.g. https://shop.example/problems/not-found (documented in openapi.yaml).
const problemBase = "https://shop.example/problems/"

// problem is an RFC 9457 problem document.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// Instance names the order a refused checkout left, rejected
	// (RFC 9457's occurrence of the problem).
	Instance string              `json:"instance,omitempty"`
	Errors   []domain.FieldError `json:"errors,omitempty"`
	// Items names the lines of an out-of-stock checkout.
	Items []domain.Shortage `json:"items,omitempty"`
	// DeclineCode is the provider's reason of a declined card
	// ("insufficient_funds").
	DeclineCode string `json:"declineCode,omitempty"`
}

// writeProblem answers err as application/problem+json. Only *domain.Error
// messages reach the client; anything else is a 500 with a fixed text,
// logged with its real cause.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	code := domain.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		code, status = domain.EINTERNAL, http.StatusInternalServerError
	}
	p := problem{
		Type:   problemBase + strings.ReplaceAll(code, "_", "-"),
		Title:  http.StatusText(status),
		Status: status,
		Detail: domain.ErrorMessage(err),
	}
	var de *domain.Error
	if errors.As(err, &de) {
		p.Errors = de.Fields
		p.Items = de.Shortages
		p.DeclineCode = de.DeclineCode
		if de.OrderID != "" {
			p.Instance = "/v1/orders/" + de.OrderID
		}
		if de.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(de.RetryAfter.Seconds()))))
		}
	}
	switch status {
	case http.StatusInternalServerError:
		p.Detail = "internal error"
		loggerFrom(r.Context()).ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "1")
		}
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="shop"`)
	}
	writeJSON(w, status, "application/problem+json", p)
}

func handleNotFound() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, domain.Errorf(domain.ENOTFOUND, "no such resource: %s", r.URL.Path))
	}
}

func handleMethodNotAllowed() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, domain.Errorf(eMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
	}
}

// ProblemHandler answers every request with err as the API answers it
// (application/problem+json, the status of its code, Retry-After on a
// 503), for answers made outside the router: the 503 the server writes
// to a connection it refuses (api/httpserver/conns.go).
func ProblemHandler(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, err)
	})
}
