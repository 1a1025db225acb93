package webhooks_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/reference-shop/shop/domain"
	"github.com/reference-shop/shop/feedworkers/webhooks"
)

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"https://hooks.example.com/shop", false, true},
		{"https://hooks.example.com:8443/shop?token=x", false, true},
		{"https://93.184.215.14/", false, true},
		{"http://hooks.example.com/shop", false, false}, // http without allowInsecure
		{"http://hooks.example.com/shop", true, true},
		{"https://user:pw@hooks.example.com/", false, false},
		{"https://127.0.0.1/", false, false},
		{"https://[::1]/", false, false},
		{"https://10.0.0.1/", false, false},
		{"https://172.16.3.4/", false, false},
		{"https://192.168.1.1/", false, false},
		{"https://169.254.169.254/latest/meta-data/", false, false},
		{"https://[::ffff:127.0.0.1]/", false, false},
		{"https://[fe80::1]/", false, false},
		{"https://[fc00::1]/", false, false},
		{"https://100.64.0.1/", false, false},
		{"https://0.0.0.0/", false, false},
		{"https://224.0.0.1/", false, false},
		{"ftp://hooks.example.com/", true, false},
		{"/relative", true, false},
		{"https:///nohost", false, false},
		{"https://hooks.example.com:0/", false, false},
		{"not a url at all", true, false},
	} {
		err := webhooks.CheckURL(tc.url, tc.insecure)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q, %v) = %v, want ok %v", tc.url, tc.insecure, err, tc.ok)
		}
		if err != nil && !domain.IsCode(err, domain.EINVALID) {
			t.Errorf("CheckURL(%q): %v is not EINVALID", tc.url, err)
		}
	}
	if err := (webhooks.Policy{AllowPrivate: true, AllowInsecure: true}).Check("http://127.0.0.1:8080/"); err != nil {
		t.Errorf("AllowPrivate refuses loopback: %v", err)
	}
}

func TestBlocked(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "172.31.255.255", "169.254.169.254",
		"::ffff:127.0.0.1", "::ffff:10.1.2.3", "::127.0.0.1", "2002:7f00:1::", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "fe80::1", "fd12::1", "100.64.0.1",
		"0.0.0.0", "::", "ff02::1", "239.1.1.1", "255.255.255.255"} {
		if !webhooks.Blocked(netip.MustParseAddr(a)) {
			t.Errorf("%s is not blocked", a)
		}
	}
	for _, a := range []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "8.8.8.8", "172.32.0.1", "100.128.0.1", "64:ff9b::808:808"} {
		if webhooks.Blocked(netip.MustParseAddr(a)) {
			t.Errorf("%s is blocked", a)
		}
	}
}

// The dial refuses what a name resolves to, whatever the check of the URL
// said: "localhost" is a name, not an IP literal, and passes CheckURL.
func TestDialRefusesInternalAddresses(t *testing.T) {
	c := webhooks.Policy{AllowInsecure: true}.Client(2 * time.Second)
	for _, u := range []string{
		"http://localhost:9/", "http://127.0.0.1:9/", "http://[::1]:9/", "http://10.0.0.1:9/",
		"http://192.168.1.1:9/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]:9/",
	} {
		resp, err := c.Post(u, "application/json", nil)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: answered %s", u, resp.Status)
			continue
		}
		if !errors.Is(err, webhooks.ErrBlockedAddress) {
			t.Errorf("%s: %v, want ErrBlockedAddress", u, err)
		}
	}
	if err := webhooks.CheckURL("https://localhost/", false); err != nil {
		t.Errorf("a name passes CheckURL (the dial checks it): %v", err)
	}
}
