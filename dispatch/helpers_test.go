package dispatch

import (
	"log/slog"
	"os"
	"testing"

	"github.com/kernelgate/kernelgate/bus"
)

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func startBus(t *testing.T, opts bus.Options) *bus.Bus {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	b, err := bus.Open(t.Context(), opts, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}
