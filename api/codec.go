package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/reference-shop/shop/domain"
)

// MaxBodyBytes bounds every request body (413 beyond it).
const MaxBodyBytes = 64 << 10

// maxDepth bounds the nesting of a request body: the shop's bodies are at
// most two objects deep, so anything deeper is an attack, not a request.
const maxDepth = 8

// encode writes v as JSON with the given status: the ONE way a handler
// answers with a body. It encodes into a pooled buffer first, so a failure
// is a clean 500 rather than half a body, and Content-Length is known.
func encode[T any](w http.ResponseWriter, status int, v T) {
	writeJSON(w, status, "application/json", v)
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps one huge response from pinning its buffer forever.
const maxPooledBuffer = 256 << 10

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buffers.Put(buf)
		}
	}()
	if err := encodeTo(buf, v); err != nil {
		writeEncodeFailure(w)
		return
	}
	writeBody(w, status, contentType, buf.Bytes())
}

// encodeTo is the one JSON encoding of a response body.
func encodeTo(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	// "Coffee & Tea", not "Coffee \u0026 Tea": the body is JSON, not HTML.
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// render is v's body as encode would write it, in a slice of its own (to
// keep, as the product page's cache does).
func render(v any) ([]byte, error) {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buffers.Put(buf)
		}
	}()
	if err := encodeTo(buf, v); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// writeEncodeFailure is the clean 500 of a body that did not encode.
func writeEncodeFailure(w http.ResponseWriter) {
	writeBody(w, http.StatusInternalServerError, "application/problem+json",
		[]byte(`{"type":"`+problemBase+`internal","title":"Internal Server Error","status":500,"detail":"internal error"}`+"\n"))
}

// writeBody writes an encoded body with its type and length.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	// Both values in one array, an allocation less per answer; each
	// slice is full, so an Add elsewhere copies rather than overwrites.
	v := [...]string{contentType, strconv.Itoa(len(body))}
	vs := v[:]
	h["Content-Type"] = vs[0:1:1]
	h["Content-Length"] = vs[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decode reads a JSON body into a T and validates it: the ONE way a
// handler reads a body. The body must be of T's media type (mediaTypeOf),
// else 415. Beyond encoding/json it refuses what would let a client
// smuggle a field (encoding/json matches keys case-insensitively and keeps
// the last of duplicate keys): every key must be exactly a field name of
// T, appear once, and not be null.
func decode[T any](r *http.Request) (T, error) {
	var v T
	contentType := r.Header.Get("Content-Type")
	if contentType != "" {
		if err := checkMediaType(contentType, mediaTypeOf[T]()); err != nil {
			return v, err
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return v, domain.Errorf(domain.ETOOLARGE, "the body is over %d bytes", MaxBodyBytes)
		}
		return v, domain.Errorf(domain.EINVALID, "cannot read the body")
	}
	if contentType == "" && len(body) > 0 {
		// Without a type the bytes could be anything: a form, a CSRF
		// probe. An empty body falls through to "not valid JSON".
		return v, unsupportedMedia(mediaTypeOf[T]())
	}
	if err := prescan(body, reflect.TypeFor[T]()); err != nil {
		return v, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, jsonError(err)
	}
	return v, validate(v)
}

const (
	mediaJSON       = "application/json"
	mediaMergePatch = "application/merge-patch+json"
)

// mediaTyper is a request body read as another type than application/json
// (a merge patch): the media type is part of the body's contract, so the
// body type says it.
type mediaTyper interface{ mediaType() string }

// mediaTypeOf is the media type a body of type T must be sent as.
func mediaTypeOf[T any]() string {
	var v T
	if m, ok := any(v).(mediaTyper); ok {
		return m.mediaType()
	}
	return mediaJSON
}

// checkMediaType answers 415 unless contentType is want, with no parameter
// but charset=utf-8: JSON is UTF-8 (RFC 8259), and a decoder that ignored
// another charset or an unknown parameter would misread the body.
func checkMediaType(contentType, want string) error {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != want {
		return unsupportedMedia(want)
	}
	for k, val := range params {
		if k != "charset" || !strings.EqualFold(val, "utf-8") {
			return unsupportedMedia(want)
		}
	}
	return nil
}

func unsupportedMedia(want string) error {
	return domain.Errorf(eUnsupportedMedia, "the body must be %s (charset utf-8, if any)", want)
}

func jsonError(err error) error {
	if e, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		ptr := "/" + strings.ReplaceAll(e.Field, ".", "/")
		return &domain.Error{Code: domain.EINVALID, Message: "the body has a value of the wrong type",
			Fields: []domain.FieldError{{Pointer: ptr, Detail: "must be " + jsonKind(e.Type)}}}
	}
	return domain.Errorf(domain.EINVALID, "the body is not valid JSON")
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// fieldSet maps the exact JSON names of a struct's fields to their types.
type fieldSet map[string]reflect.Type

var fieldSets sync.Map // reflect.Type -> fieldSet

func fieldsOf(t reflect.Type) fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(fieldSet)
	}
	fs := fieldSet{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range fieldsOf(f.Type) {
				fs[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs[name] = f.Type
	}
	fieldSets.Store(t, fs)
	return fs
}

// prescan walks the body's tokens against t before anything is decoded.
func prescan(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := scanValue(dec, t, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return domain.Errorf(domain.EINVALID, "the body must hold exactly one JSON value")
	}
	return nil
}

func fieldError(ptr, detail string) error {
	if ptr == "" {
		ptr = "/"
	}
	return &domain.Error{Code: domain.EINVALID, Message: fmt.Sprintf("%s %s", ptr, detail),
		Fields: []domain.FieldError{{Pointer: ptr, Detail: detail}}}
}

func scanValue(dec *json.Decoder, t reflect.Type, ptr string, depth int) error {
	if depth > maxDepth {
		return domain.Errorf(domain.EINVALID, "the body is nested more than %d levels deep", maxDepth)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return domain.Errorf(domain.EINVALID, "the body is not valid JSON")
	}
	switch tok {
	case nil:
		// No request field is nullable: null would read as "absent" and
		// hide a client's mistake.
		return fieldError(ptr, "must not be null")
	case json.Delim('{'):
		var fs fieldSet
		var elem reflect.Type // a map's values: any key names one
		switch {
		case t != nil && t.Kind() == reflect.Struct:
			fs = fieldsOf(t)
		case t != nil && t.Kind() == reflect.Map:
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return domain.Errorf(domain.EINVALID, "the body is not valid JSON")
			}
			key := kt.(string)
			kp := ptr + "/" + escapePointer(key)
			if seen[key] {
				return fieldError(kp, "appears more than once")
			}
			seen[key] = true
			ft, ok := fs[key]
			if elem != nil {
				ft, ok = elem, true
			}
			if !ok {
				return fieldError(kp, "is not a known field")
			}
			if err := scanValue(dec, ft, kp, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
	case json.Delim('['):
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := scanValue(dec, et, ptr+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
	}
	if err != nil {
		return domain.Errorf(domain.EINVALID, "the body is not valid JSON")
	}
	return nil
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
