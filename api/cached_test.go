package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reference-shop/shop/api/readcache"
)

// TestCachedWaiterReadsItselfAfterAFailedRead: a request that waited for
// another's read of the same page gets that answer only when it is the
// page's (a 200, or a 404 that any read would give). A read that failed
// for its own reasons (its client went away, the partition was
// throttled) is no answer for the others: each reads for itself.
func TestCachedWaiterReadsItselfAfterAFailedRead(t *testing.T) {
	c := readcache.New(readcache.Config{})
	release := make(chan struct{})
	var calls atomic.Int32
	h := cached(c, categoriesKey, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-release
			http.Error(w, "the reader's own failure", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "categories")
	})
	first := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/v1/categories", nil))
		first <- rec.Code
	}()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan *httptest.ResponseRecorder)
	go func() {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/v1/categories", nil))
		second <- rec
	}()
	// The second request is waiting for the first's read.
	time.Sleep(20 * time.Millisecond)
	close(release)
	if got := <-first; got != http.StatusServiceUnavailable {
		t.Fatalf("first: status %d, want its own 503", got)
	}
	rec := <-second
	if rec.Code != http.StatusOK || rec.Body.String() != "categories" {
		t.Errorf("second: %d %q, want its own read's 200 \"categories\"", rec.Code, rec.Body)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("%d reads, want 2 (the failed one and the waiter's own)", got)
	}
}
