package telemetry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reference-shop/shop/api/telemetry"
)

func TestLoggerAddsTraceIDs(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(t.Context(), "work")
	defer span.End()
	traceID, spanID := span.SpanContext().TraceID().String(), span.SpanContext().SpanID().String()

	t.Run("JSON", func(t *testing.T) {
		var buf bytes.Buffer
		log := telemetry.NewLogger(&buf, false, slog.LevelInfo)
		log.With("component", "test").WithGroup("g").ErrorContext(ctx, "boom", "n", 1)
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("not one JSON object: %q: %v", buf.String(), err)
		}
		// Inside a group the ids land in it, as every attribute does.
		g, _ := line["g"].(map[string]any)
		if got, want := g["trace_id"], any(traceID); got != want {
			t.Errorf("trace_id = %v, want %v (line %s)", got, want, buf.String())
		}
		if got, want := g["span_id"], any(spanID); got != want {
			t.Errorf("span_id = %v, want %v", got, want)
		}
		if got, want := line["component"], any("test"); got != want {
			t.Errorf("component = %v, want %v", got, want)
		}
	})
	t.Run("Text", func(t *testing.T) {
		var buf bytes.Buffer
		telemetry.NewLogger(&buf, true, slog.LevelInfo).InfoContext(ctx, "hello")
		if got, want := buf.String(), "trace_id="+traceID+" span_id="+spanID; !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
		if strings.HasPrefix(buf.String(), "{") {
			t.Errorf("text line is JSON: %q", buf.String())
		}
	})
	t.Run("NoSpan", func(t *testing.T) {
		var buf bytes.Buffer
		telemetry.NewLogger(&buf, false, slog.LevelInfo).InfoContext(t.Context(), "hello")
		if strings.Contains(buf.String(), "trace_id") {
			t.Errorf("line without a span has a trace_id: %q", buf.String())
		}
	})
	t.Run("Level", func(t *testing.T) {
		var buf bytes.Buffer
		telemetry.NewLogger(&buf, false, slog.LevelWarn).InfoContext(ctx, "hello")
		if buf.Len() != 0 {
			t.Errorf("info logged at level warn: %q", buf.String())
		}
	})
}

func TestIsTerminal(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tt := range []struct {
		name string
		w    interface{ Write([]byte) (int, error) }
	}{
		{"Buffer", new(bytes.Buffer)},
		{"File", file},
		{"DevNull", devNull}, // a character device, yet no terminal
	} {
		t.Run(tt.name, func(t *testing.T) {
			if telemetry.IsTerminal(tt.w) {
				t.Errorf("IsTerminal = true, want false")
			}
		})
	}
}
