package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reference-shop/shop/store/embedded"
)

// TestABusyAddressFailsBeforeTheStore: a first `go run ./cmd/shop` on a
// machine where a port is taken must not write the sample data into a
// new data directory and then fail: every address the shop listens on
// (the API's, and the metrics' and profiles' when set) is bound first,
// and the error names the setting that picks another.
func TestABusyAddressFailsBeforeTheStore(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, setting := range []string{"SHOP_ADDR", "SHOP_METRICS_ADDR", "SHOP_PPROF_ADDR"} {
		t.Run(setting, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			env := shopEnv(dir, "SHOP_ADDR=127.0.0.1:0", "SHOP_SEED=true", setting+"="+busy.Addr().String())
			err := run(context.Background(), []string{"shop"}, envOf(env...), io.Discard)
			if err == nil || !strings.Contains(err.Error(), setting) {
				t.Errorf("run with %s busy = %v, want an error that names %s", setting, err, setting)
			}
			if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
				t.Errorf("the data directory exists after a failed start (%v): the store was opened before the address was bound", statErr)
			}
		})
	}
}

// TestASecondShopOnOneDataDirectorySaysSo: the embedded store's file can
// be open in one process only; a second shop on the same directory says
// that another process holds it and which setting picks another.
func TestASecondShopOnOneDataDirectorySaysSo(t *testing.T) {
	dir := t.TempDir()
	held, err := embedded.Open(filepath.Join(dir, "shop.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	err = run(context.Background(), []string{"shop"}, envOf(shopEnv(dir)...), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "another process") || !strings.Contains(err.Error(), "SHOP_DATA_DIR") {
		t.Errorf("run on a held data directory = %v, want an error that says another process holds it and names SHOP_DATA_DIR", err)
	}
}
