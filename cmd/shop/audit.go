package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reference-shop/shop/feedworkers"
	"github.com/reference-shop/shop/store"
	"github.com/reference-shop/shop/store/repo"
	"github.com/reference-shop/shop/store/writes"
)

// DefaultAuditBudget is the Request Units per second `shop audit` spends
// unless told otherwise: a small share of a production container's
// throughput, so the audit can run beside the shop's own traffic.
const DefaultAuditBudget = 200

// audit finds, and with --repair repairs, every copy that differs from
// its source (feedworkers.Audit): what an operator runs after an incident
// (a feed stuck, a dead letter, a restore). On the embedded store the
// shop must be stopped first: bbolt lets one process open the file.
func audit(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(stdout)
	repair := fs.Bool("repair", false, "rewrite each divergent copy from its current source, through the feed's own path (guarded by version)")
	budget := fs.Float64("ru-per-second", DefaultAuditBudget, "Request Units per second the audit may spend (0: no bound)")
	pageSize := fs.Int("page-size", 100, "documents of one query page")
	dataDir := fs.String("data-dir", "", "embedded store directory (env SHOP_DATA_DIR, default ./data)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *budget < 0 || *pageSize < 1 || *pageSize > store.MaxQueryPageSize {
		return fmt.Errorf("audit: --ru-per-second must be 0 or more, --page-size 1 to %d", store.MaxQueryPageSize)
	}
	cfg, err := configWithDataDir("audit", *dataDir, getenv, stdout)
	if err != nil {
		return err
	}
	s, desc, err := openStore(ctx, cfg, getenv, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	bound := "no bound"
	if *budget > 0 {
		bound = fmt.Sprintf("at most %.0f RU/s", *budget)
	}
	fmt.Fprintf(stdout, "auditing %s, %s%s\n", desc, bound, map[bool]string{true: ", repairing"}[*repair])

	metered := store.Metered(s)
	h := feedworkers.NewHandlers(metered, writes.New(repo.New(metered, cfg.StatusBuckets), nil, nil), feedworkers.HandlersConfig{})
	var last feedworkers.AuditProgress
	lastAt := time.Now()
	progress := func(p feedworkers.AuditProgress) {
		if last.Container != "" && (p.Container != last.Container || time.Since(lastAt) > 2*time.Second) {
			printProgress(stdout, last)
			lastAt = time.Now()
		}
		last = p
	}
	r, err := h.Audit(ctx, feedworkers.AuditOptions{Repair: *repair, RUPerSecond: *budget, PageSize: *pageSize, Progress: progress})
	if last.Container != "" {
		printProgress(stdout, last)
	}
	if err != nil {
		return err
	}
	return printAudit(stdout, r)
}

func printProgress(w io.Writer, p feedworkers.AuditProgress) {
	fmt.Fprintf(w, "  %-20s %6d documents read  %4d differences so far  %9.2f RU  %6.1f s\n",
		p.Container, p.Documents, p.Differences, p.RequestUnits, p.Elapsed.Seconds())
}

// printAudit prints every difference, the table of copies and the cost;
// it fails when a difference is left unrepaired, so a script can tell.
func printAudit(w io.Writer, r feedworkers.AuditReport) error {
	left := 0
	for _, d := range r.Differences {
		state := "not repaired"
		switch {
		case d.Repaired:
			state = "repaired"
		case d.RepairError != "":
			state = "not repaired: " + d.RepairError
		}
		if !d.Repaired {
			left++
		}
		fmt.Fprintf(w, "DIFFERS %s [%s]\n", d, state)
	}
	differ, repaired := map[string]int{}, map[string]int{}
	for _, d := range r.Differences {
		differ[d.Copy]++
		if d.Repaired {
			repaired[d.Copy]++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "copy\tchecked\tdiffer\trepaired\t")
	for _, c := range append(feedworkers.Copies, feedworkers.CopyUnknown) {
		if c == feedworkers.CopyUnknown && differ[c] == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", c, r.Checked[c], differ[c], repaired[c])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rate := 0.0
	if s := r.Elapsed.Seconds(); s > 0 {
		rate = r.RequestUnits / s
	}
	fmt.Fprintf(w, "cost: %d operations, %.2f RU in %.1f s (%.0f RU/s)\n", r.Operations, r.RequestUnits, r.Elapsed.Seconds(), rate)
	if left > 0 {
		return fmt.Errorf("%d copies differ from their sources%s", left, map[bool]string{true: " (shop audit --repair rewrites them)"}[left == len(r.Differences)])
	}
	return nil
}
