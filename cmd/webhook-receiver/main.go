// Command webhook-receiver is an example receiver of the shop's webhooks:
// it verifies each request's signature (client.WebhookHandler) and prints
// every event it accepts as one JSON line on stdout; a request it cannot
// verify gets a 400 and a line on stderr.
//
// Against a local shop (dev mode on loopback lets the webhooks reach
// http:// receivers on this machine; see SHOP_WEBHOOKS_ALLOW_PRIVATE and
// SHOP_WEBHOOKS_ALLOW_INSECURE in the README):
//
//	go run ./cmd/shop                          # terminal 1
//	# create a subscription with an admin token (POST /v1/admin/webhooks,
//	# url http://127.0.0.1:9090/webhooks); it answers the secret once
//	SHOP_WEBHOOK_SECRET=whsec_... go run ./cmd/webhook-receiver -addr 127.0.0.1:9090
//
// then place, ship or cancel an order, or change a product's price, and
// watch the events arrive in order per order and per product. Usage:
//
//	webhook-receiver [-addr 127.0.0.1:9090] [-path /webhooks] [-secret whsec_...] [-tolerance 5m]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/reference-shop/shop/api/client"
)

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(2)
	}
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9090", "address to listen on")
	path := fs.String("path", "/webhooks", "path the subscription's URL names")
	secret := fs.String("secret", "", "the subscription's signing secret (default: $SHOP_WEBHOOK_SECRET)")
	tolerance := fs.Duration("tolerance", 5*time.Minute, "how far a signature's time may be from this machine's clock")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *secret == "" {
		*secret = getenv("SHOP_WEBHOOK_SECRET")
	}
	if *secret == "" {
		return errors.New("no secret: pass -secret or set SHOP_WEBHOOK_SECRET (the secret the shop answered when the subscription was created)")
	}
	srv := &http.Server{Addr: *addr, Handler: handler(*path, *secret, *tolerance, stdout, stderr), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		<-c
		srv.Close()
	}()
	fmt.Fprintf(stderr, "webhook-receiver: listening on http://%s%s\n", *addr, *path)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler serves the receiver: each verified event is one JSON line on
// stdout.
func handler(path, secret string, tolerance time.Duration, stdout, stderr io.Writer) http.Handler {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	hooks := client.WebhookHandler(secret, tolerance, func(e client.WebhookEvent) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(e)
	})
	mux := http.NewServeMux()
	mux.Handle("POST "+path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w}
		hooks.ServeHTTP(rec, r)
		if rec.status == http.StatusBadRequest {
			fmt.Fprintf(stderr, "refused a request (event %q): bad signature or body\n", r.Header.Get(client.WebhookEventIDHeader))
		}
	}))
	return mux
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
