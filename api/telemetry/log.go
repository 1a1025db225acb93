package telemetry

import (
	"context"
	"io"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/term"
)

// NewLogger returns the shop's logger: JSON lines for machines (a file, a
// pipe, a container's log collector), text for a person at a terminal.
// Every record logged with a context that holds a span carries trace_id and
// span_id, so a log line leads to its trace.
func NewLogger(w io.Writer, isTerminal bool, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if isTerminal {
		h = slog.NewTextHandler(w, opts)
	} else {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(TraceHandler(h))
}

// IsTerminal reports whether w is a terminal rather than a file or a pipe.
// It asks the terminal driver (x/term): a mode check for a character device
// would also say yes for /dev/null.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TraceHandler decorates h: records logged with a context that holds a
// valid span get its trace_id and span_id.
func TraceHandler(h slog.Handler) slog.Handler { return traceHandler{h} }

type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(
			slog.String("trace_id", sc.TraceID().String()),
			slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
