package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/reference-shop/shop/domain"
)

// A subscription's URL is chosen by whoever holds an admin token, and the
// shop POSTs to it from inside its own network: without a check, a
// webhook is a way to make the shop call its metadata service
// (169.254.169.254), a database's HTTP port or an admin page on
// localhost (server-side request forgery). So a URL is checked twice:
// when it is written (CheckURL: its form, and its host if that is an IP
// literal) and when each request dials (Policy.Client: every address the
// name resolves to, at connect time, so a name that resolved to a public
// address at the check and to a private one now, DNS rebinding, is
// refused too).

// ErrBlockedAddress is in the chain of the error of a request, or of
// CheckURL, to an address the policy refuses.
var ErrBlockedAddress = errors.New("webhooks: address not allowed (loopback, private, link-local or otherwise internal)")

// Policy says which receivers the shop may call.
type Policy struct {
	// AllowPrivate lets requests reach loopback, private and link-local
	// addresses: for local development and tests only.
	AllowPrivate bool
	// AllowInsecure lets a URL be http://, not only https://: for local
	// development and tests only.
	AllowInsecure bool
}

// CheckURL checks a subscription's URL as the admin API writes it: an
// absolute http(s) URL, https unless allowInsecure, with a host and no
// user or password, and a host that, when it is an IP literal, is not a
// refused address (see Policy.Client). A name is not resolved here: the
// dial checks what it resolves to. A refusal is EINVALID.
func CheckURL(raw string, allowInsecure bool) error {
	return Policy{AllowInsecure: allowInsecure}.Check(raw)
}

// Check is CheckURL under p: with AllowPrivate an IP literal may be any
// address.
func (p Policy) Check(raw string) error {
	bad := func(why string) error {
		return &domain.Error{Code: domain.EINVALID, Message: "webhook url: " + why,
			Fields: []domain.FieldError{{Pointer: "/url", Detail: why}}}
	}
	if len(raw) > 2048 {
		return bad("longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("not a URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowInsecure:
	case u.Scheme == "http":
		return bad("must be https")
	default:
		return bad("must be an https URL")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return bad("must have a host")
	}
	if u.User != nil {
		return bad("must not carry a user or password")
	}
	if port := u.Port(); port != "" {
		if n, err := netip.ParseAddrPort("0.0.0.0:" + port); err != nil || n.Port() == 0 {
			return bad("bad port")
		}
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !p.AllowPrivate && Blocked(ip) {
		return bad("the address " + ip.String() + " is internal: " + ErrBlockedAddress.Error())
	}
	return nil
}

// blockedPrefixes are the ranges Blocked refuses beyond what netip's
// predicates name.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("2001:10::/28"),    // ORCHID
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
}

// nat64 is the well-known NAT64 prefix (RFC 6052).
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Blocked reports whether the shop refuses to call ip: loopback, private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, with
// the cloud metadata address 169.254.169.254, and fe80::/10),
// unspecified, multicast, carrier-grade NAT (100.64/10) and the other
// special-purpose ranges above; an IPv4 address in IPv6 form
// (::ffff:127.0.0.1) is judged as the IPv4 address it is.
func Blocked(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d, which a
	// NAT64 gateway turns into that IPv4 address) and 6to4
	// (2002:a.b.c.d::) forms carry an IPv4 address too.
	if ip.Is6() {
		b := ip.As16()
		if [12]byte(b[:12]) == [12]byte{} || nat64.Contains(ip) {
			return Blocked(netip.AddrFrom4([4]byte(b[12:])))
		}
		if b[0] == 0x20 && b[1] == 0x02 {
			return Blocked(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return false
}

// control is the dialer's check of the address it is about to connect
// to, after name resolution.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	if p.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return ErrBlockedAddress
	}
	if Blocked(ap.Addr()) {
		return ErrBlockedAddress
	}
	return nil
}

// MaxResponseBody is the most of a receiver's answer the shop reads: it
// needs the status; a little of the body goes into LastError.
const MaxResponseBody = 4 << 10

// Client returns the HTTP client that calls receivers under p: each
// request bounded by timeout; no proxy from the environment (the proxy
// would dial, not the checked dialer); every connection's address checked
// at dial time; redirects not followed (a 3xx is the answer, a failed
// attempt: following one would let a public receiver send the shop to a
// private address the dial check then refuses anyway, and a receiver
// that moved should have its subscription changed); no keep-alive pool
// shared with anything else.
func (p Policy) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: min(timeout, 5*time.Second), Control: p.control}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			TLSHandshakeTimeout:   min(timeout, 5*time.Second),
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
