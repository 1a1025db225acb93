// Command shop runs the shop: the HTTP API and sample frontend with the
// change-feed workers in process (serve, the default), and the tools around
// it (migrate, seed, token, workers, audit, containers, cost, bench, scale).
//
//	go run ./cmd/shop              # serve on 127.0.0.1:8080 with the embedded store in ./data
//	go run ./cmd/shop seed --products 10000 --reviews 10000 --users 10000
//	go run ./cmd/shop token --user alice --admin
//	go run ./cmd/shop token '{"userId":"rita","admin":true}'  # the dev endpoint's body
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/reference-shop/shop/cmd/shop/internal/costlab"
	"github.com/reference-shop/shop/cmd/shop/internal/loadbench"
	"github.com/reference-shop/shop/cmd/shop/internal/scale"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// commands maps each subcommand to its function.
var commands = map[string]func(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error{
	"serve":   serve,
	"migrate": migrate,
	"seed":    seed,
	"token":   token,
	"workers": workers,
	"cost":    costlab.Run,
	"bench":   loadbench.Run,
	"scale":   scale.Run,
	"audit":   audit,
	// containers prints the containers as Bicep or az commands.
	"containers": containers,
}

// run is the whole program, so that tests can start it as it runs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cmd, rest := "serve", args[1:]
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		cmd, rest = rest[0], rest[1:]
	}
	f, ok := commands[cmd]
	if !ok {
		return fmt.Errorf("unknown command %q; commands: serve (default), migrate, seed, token, workers, audit, containers, cost, bench, scale", cmd)
	}
	return f(ctx, rest, getenv, stdout)
}
