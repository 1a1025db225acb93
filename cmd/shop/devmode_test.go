package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestDefaultAddressIsLoopback: `go run ./cmd/shop` with nothing set
// listens on the loopback interface only.
func TestDefaultAddressIsLoopback(t *testing.T) {
	c, err := parseConfig("serve", nil, envOf(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" {
		t.Errorf("default address = %q, want 127.0.0.1:8080", c.Addr)
	}
	for _, s := range settings {
		if s.flag == "addr" && s.def != c.Addr {
			t.Errorf("the settings table says the default address is %q, parseConfig uses %q", s.def, c.Addr)
		}
	}
}

// TestDevTokensThroughRun: run serves dev tokens on a loopback address by
// default, not on every interface unless SHOP_DEV=true says so, and then
// warns at start.
func TestDevTokensThroughRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		served bool
		warns  bool
	}{
		{"LoopbackByDefault", []string{"SHOP_ADDR=127.0.0.1:0"}, true, false},
		{"EveryInterfaceByDefault", []string{"SHOP_ADDR=0.0.0.0:0"}, false, false},
		{"EveryInterfaceWithDevTrue", []string{"SHOP_ADDR=0.0.0.0:0", "SHOP_DEV=true"}, true, true},
		{"LoopbackWithDevFalse", []string{"SHOP_ADDR=127.0.0.1:0", "SHOP_DEV=false"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(shopEnv(t.TempDir(), "SHOP_WORKERS=false", "SHOP_LOG_LEVEL=warn"), tc.env...)
			base, before := runShop(t, env)
			code, body, err := httpDo(http.DefaultClient, "POST", base+"/v1/dev/token", "", map[string]any{"userId": "eve", "admin": true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := code == http.StatusOK; got != tc.served {
				t.Errorf("POST /v1/dev/token = %d, want served: %v; %s", code, tc.served, body)
			}
			if got := strings.Contains(before.String(), "dev tokens are served to anyone"); got != tc.warns {
				t.Errorf("warned: %v, want %v; output:\n%s", got, tc.warns, before)
			}
		})
	}
}

// TestDevTokensDecision: dev tokens need dev mode, and then a loopback
// listener or SHOP_DEV=true set explicitly.
func TestDevTokensDecision(t *testing.T) {
	addrs := []struct {
		addr     string
		loopback bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:8080", true},
		{"[::1]:8080", true},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.0.2.10:8080", false},
		{"[2001:db8::1]:8080", false},
	}
	for _, set := range []struct {
		name string
		env  []string
		// served on a loopback and on any other address
		loopback, other bool
	}{
		{"EmbeddedDefault", nil, true, false},
		{"DevTrue", []string{"SHOP_DEV=true"}, true, true},
		{"DevFalse", []string{"SHOP_DEV=false"}, false, false},
		{"CosmosDefault", []string{"COSMOS_ENDPOINT=https://a.documents.azure.com"}, false, false},
		{"CosmosDevTrue", []string{"COSMOS_ENDPOINT=https://a.documents.azure.com", "SHOP_DEV=true"}, true, true},
	} {
		cfg, err := parseConfig("serve", nil, envOf(set.env...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			addr, err := net.ResolveTCPAddr("tcp", a.addr)
			if err != nil {
				t.Fatal(err)
			}
			want := set.other
			if a.loopback {
				want = set.loopback
			}
			if got := devTokens(cfg, addr); got != want {
				t.Errorf("%s on %s: dev tokens %v, want %v", set.name, a.addr, got, want)
			}
		}
	}
	// The flag counts as explicit too.
	cfg, err := parseConfig("serve", []string{"--dev=true"}, envOf(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !devTokens(cfg, &net.TCPAddr{IP: net.IPv4zero, Port: 8080}) {
		t.Error("--dev=true on 0.0.0.0: no dev tokens, want them")
	}
}

// The profiles show the program's internals: served on loopback only.
func TestPprofAddrLoopbackOnly(t *testing.T) {
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"", true},
		{"127.0.0.1:6060", true},
		{"localhost:0", true},
		{"[::1]:6060", true},
		{":6060", false},
		{"0.0.0.0:6060", false},
		{"192.0.2.1:6060", false},
		{"6060", false},
	} {
		_, err := parseConfig("serve", nil, envOf("SHOP_PPROF_ADDR="+tt.addr), io.Discard)
		if got := err == nil; got != tt.ok {
			t.Errorf("SHOP_PPROF_ADDR=%q: err = %v, want accepted %v", tt.addr, err, tt.ok)
		}
	}
}
