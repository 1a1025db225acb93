package main

import (
	"fmt"
	"strings"
)

// environment lists the variables read outside the settings table: the
// Cosmos connection (store/cosmos.ConfigFromEnv) and the OpenTelemetry
// standard ones (api/telemetry). Together with settings it is the README's
// configuration table, which a test keeps in step with this file.
var environment = []setting{
	{"", "COSMOS_ENDPOINT", "", "Cosmos account endpoint; set, the shop uses Cosmos instead of the embedded store"},
	{"", "COSMOS_KEY", "", "account key (omit with COSMOS_USE_ENTRA_ID)"},
	{"", "COSMOS_CONNECTION_STRING", "", "instead of endpoint and key"},
	{"", "COSMOS_DATABASE", "shop", "database name"},
	{"", "COSMOS_USE_ENTRA_ID", "false", "keyless: Microsoft Entra ID through DefaultAzureCredential"},
	{"", "COSMOS_EMULATOR", "false (true with the emulator's well-known key)", "talk to the Cosmos emulator"},
	{"", "COSMOS_INSECURE_SKIP_VERIFY", "false", "skip TLS certificate checks (the emulator over https only)"},
	{"", "COSMOS_AUTOSCALE_MAX_RU", "0 (no database throughput)", "autoscale maximum RU/s of a database `shop migrate` creates, shared by its containers; unset on a provisioned-throughput account, Cosmos gives each container it creates 400 RU/s manual (10 containers: 4,000 RU/s); leave it unset on serverless"},
	{"", "OTEL_TRACES_EXPORTER", "none", "otlp, console or none"},
	{"", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318", "where otlp traces go (OTLP over HTTP)"},
	{"", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", "the traces endpoint itself, overriding the one above"},
	{"", "OTEL_SERVICE_NAME", "shop", "service name on traces and metrics"},
	{"", "GOGC", "400 (Go's own default is 100)", "the garbage collector's target, read by the Go runtime: `shop serve` sets 400 when it is unset, collecting a quarter as often as Go's default for a heap a few MB larger (docs/performance.md); GOMEMLIMIT bounds the heap as usual"},
}

// settingsTable renders the configuration table as Markdown.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| flag | environment | default | what it does |\n|---|---|---|---|\n")
	for _, s := range append(append([]setting{}, settings...), environment...) {
		flag := ""
		if s.flag != "" {
			flag = "`--" + s.flag + "`"
		}
		def := s.def
		if def != "" && !strings.Contains(def, " ") {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", flag, s.env, def, s.help)
	}
	return b.String()
}
