package cosmos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/reference-shop/shop/domain"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Config
		code string
	}{
		{
			name: "nothing set: database defaults to shop",
			env:  nil,
			want: Config{Database: "shop", MaxRetries429: DefaultMaxRetries429, MaxRetryWait: DefaultMaxRetryWait},
		},
		{
			name: "account with a key and autoscale",
			env: map[string]string{
				"COSMOS_ENDPOINT": "https://acct.documents.azure.com:443/", "COSMOS_KEY": "a2V5",
				"COSMOS_DATABASE": "shop-test", "COSMOS_AUTOSCALE_MAX_RU": "4000",
			},
			want: Config{
				Endpoint: "https://acct.documents.azure.com:443/", Key: "a2V5", Database: "shop-test",
				Throughput: 4000, MaxRetries429: DefaultMaxRetries429, MaxRetryWait: DefaultMaxRetryWait,
			},
		},
		{
			name: "keyless",
			env:  map[string]string{"COSMOS_ENDPOINT": "https://acct.documents.azure.com/", "COSMOS_USE_ENTRA_ID": "1"},
			want: Config{
				Endpoint: "https://acct.documents.azure.com/", UseEntraID: true, Database: "shop",
				MaxRetries429: DefaultMaxRetries429, MaxRetryWait: DefaultMaxRetryWait,
			},
		},
		{
			name: "the emulator's well-known key implies the emulator",
			env:  map[string]string{"COSMOS_ENDPOINT": "http://cosmos:8081", "COSMOS_KEY": EmulatorKey},
			want: Config{
				Endpoint: "http://cosmos:8081", Key: EmulatorKey, Database: "shop", Emulator: true,
				MaxRetries429: DefaultMaxRetries429, MaxRetryWait: DefaultMaxRetryWait,
			},
		},
		{
			name: "emulator over https without certificate checks",
			env: map[string]string{
				"COSMOS_CONNECTION_STRING":    "AccountEndpoint=https://localhost:8081/;AccountKey=" + EmulatorKey + ";",
				"COSMOS_INSECURE_SKIP_VERIFY": "true",
			},
			want: Config{
				ConnectionString: "AccountEndpoint=https://localhost:8081/;AccountKey=" + EmulatorKey + ";",
				Database:         "shop", InsecureSkipVerify: true, Emulator: true,
				MaxRetries429: DefaultMaxRetries429, MaxRetryWait: DefaultMaxRetryWait,
			},
		},
		{name: "bad flag", env: map[string]string{"COSMOS_USE_ENTRA_ID": "yes please"}, code: domain.EINVALID},
		{name: "autoscale below the minimum", env: map[string]string{"COSMOS_AUTOSCALE_MAX_RU": "400"}, code: domain.EINVALID},
		{name: "autoscale not a step of 1000", env: map[string]string{"COSMOS_AUTOSCALE_MAX_RU": "1500"}, code: domain.EINVALID},
		{name: "autoscale not a number", env: map[string]string{"COSMOS_AUTOSCALE_MAX_RU": "lots"}, code: domain.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigFromEnv(env(tc.env))
			if gotCode := domain.ErrorCode(err); gotCode != tc.code {
				t.Fatalf("code = %q (%v), want %q", gotCode, err, tc.code)
			}
			if tc.code != "" {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name         string
		cfg          Config
		wantEndpoint string
		code         string
	}{
		{"endpoint and key", Config{Endpoint: "https://a.documents.azure.com/", Key: "k", Database: "shop"}, "https://a.documents.azure.com/", ""},
		{"endpoint and Entra ID", Config{Endpoint: "https://a.documents.azure.com/", UseEntraID: true, Database: "shop"}, "https://a.documents.azure.com/", ""},
		{"connection string", Config{ConnectionString: "AccountEndpoint=https://a.documents.azure.com/;AccountKey=k;", Database: "shop"}, "https://a.documents.azure.com/", ""},
		{"emulator over http", Config{Endpoint: "http://localhost:8081", Key: EmulatorKey, Emulator: true, Database: "shop"}, "http://localhost:8081", ""},
		{"http to a real account", Config{Endpoint: "http://a.documents.azure.com/", Key: "k", Database: "shop"}, "", domain.EINVALID},
		{"no endpoint", Config{Key: "k", Database: "shop"}, "", domain.EINVALID},
		{"no credentials", Config{Endpoint: "https://a.documents.azure.com/", Database: "shop"}, "", domain.EINVALID},
		{"key and Entra ID", Config{Endpoint: "https://a/", Key: "k", UseEntraID: true, Database: "shop"}, "", domain.EINVALID},
		{"connection string and key", Config{ConnectionString: "AccountEndpoint=https://a/;AccountKey=k;", Key: "k", Database: "shop"}, "", domain.EINVALID},
		{"connection string without endpoint", Config{ConnectionString: "AccountKey=k;", Database: "shop"}, "", domain.EINVALID},
		{"not a URL", Config{Endpoint: "acct.documents.azure.com", Key: "k", Database: "shop"}, "", domain.EINVALID},
		{"no database", Config{Endpoint: "https://a/", Key: "k"}, "", domain.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.validate()
			if gotCode := domain.ErrorCode(err); gotCode != tc.code {
				t.Fatalf("code = %q (%v), want %q", gotCode, err, tc.code)
			}
			if got != tc.wantEndpoint {
				t.Errorf("endpoint = %q, want %q", got, tc.wantEndpoint)
			}
		})
	}
}

func TestRetryLimitsDefaults(t *testing.T) {
	n, wait := Config{}.retryLimits()
	if n != DefaultMaxRetries429 || wait != DefaultMaxRetryWait {
		t.Errorf("defaults = %d, %v; want %d, %v", n, wait, DefaultMaxRetries429, DefaultMaxRetryWait)
	}
	n, wait = Config{MaxRetries429: -1, MaxRetryWait: 5 * time.Second}.retryLimits()
	if n != -1 || wait != 5*time.Second {
		t.Errorf("configured = %d, %v; want -1, 5s", n, wait)
	}
}

// One client per account and credential, shared by every Store on it and
// closed with the last of them (sdk-singleton-client). No request is made.
func TestOpenSharesOneClient(t *testing.T) {
	ctx := t.Context()
	cfg := Config{Endpoint: "http://127.0.0.1:1", Key: EmulatorKey, Emulator: true, Database: "a"}
	s1, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "b"
	s2, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s1.shared != s2.shared {
		t.Fatal("two Stores on one account got two clients")
	}
	key := s1.shared.key
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	clientsMu.Lock()
	_, alive := clients[key]
	clientsMu.Unlock()
	if !alive {
		t.Fatal("closing one Store (twice) closed the client the other still uses")
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	clientsMu.Lock()
	_, alive = clients[key]
	clientsMu.Unlock()
	if alive {
		t.Error("the client outlived its last Store")
	}
}

// With a TracerProvider the SDK's own spans are on (azotel); without one
// the SDK traces nothing.
func TestClientOptionsTracing(t *testing.T) {
	for _, tc := range []struct {
		name string
		tp   trace.TracerProvider
		want bool
	}{
		{"Off", nil, false},
		{"On", sdktrace.NewTracerProvider(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := clientOptions("https://example.documents.azure.com:443/", Config{TracerProvider: tc.tp}, newSessions())
			if err != nil {
				t.Fatal(err)
			}
			if got := opts.TracingProvider.NewTracer("azcosmos", "v1.5.0").Enabled(); got != tc.want {
				t.Errorf("SDK tracer enabled = %v, want %v", got, tc.want)
			}
		})
	}
}
