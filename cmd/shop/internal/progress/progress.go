// Package progress draws the progress bars of the commands that load data
// (seed, cost, bench) when they run in a terminal, and nothing otherwise.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Default returns a progress callback drawing progressbar's default bar,
// or nil when w is not a terminal.
func Default(w io.Writer, description string) func(done, total int) {
	if !IsTerminal(w) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.Default(int64(total), description)
		}
		_ = bar.Set(done)
	}
}

// OnStderr returns a progress callback drawing a bar on standard error,
// cleared once full, or nil when standard error is not a terminal. The
// labs print their report on standard output, which the bar stays out of.
func OnStderr(description string) func(done, total int) {
	if !IsTerminal(os.Stderr) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(description), progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		_ = bar.Set(done)
	}
}
