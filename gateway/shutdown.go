package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// errShuttingDown is why /readyz answers 503 once shutdown has begun.
var errShuttingDown = errors.New("shutting down")

// ready is /readyz's answer: nil when a worker can take jobs, the store can
// take writes (storage.go) and the server is not shutting down.
func (s *Server) ready() error {
	if s.draining.Load() {
		return errShuttingDown
	}
	if s.deps.Bus != nil {
		if err := s.deps.Bus.Writable(); err != nil {
			return err
		}
	}
	return s.deps.Ready()
}

// shutdown drains srv once Serve's ctx has ended. /readyz answers 503 at
// once; for DrainDelay requests are still served, so that a load balancer
// polling /readyz stops sending new ones; then the listener closes and the
// requests in flight get ShutdownTimeout to finish. Past it their
// connections are closed (their contexts end) and shutdown returns nil all
// the same: a bounded drain that ran out is not a failure of the server.
// errc receives srv.Serve's result.
func (s *Server) shutdown(srv *http.Server, errc <-chan error) error {
	s.draining.Store(true)
	s.log.Info("shutting down: /readyz answers 503", "drain_delay", s.cfg.DrainDelay, "timeout", s.cfg.ShutdownTimeout)
	if s.cfg.DrainDelay > 0 {
		select {
		case <-time.After(s.cfg.DrainDelay):
		case err := <-errc: // the server failed meanwhile
			return fmt.Errorf("gateway.Serve: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	// Requests waiting on batches get most of the drain to finish; then they
	// answer 202 (their batches stay readable) and streams end, so the drain
	// ends by itself instead of cutting connections.
	late := time.AfterFunc(s.cfg.ShutdownTimeout*9/10, s.stop)
	defer late.Stop()
	if err := srv.Shutdown(sctx); err != nil {
		s.log.Warn("requests still running after the shutdown timeout; closing their connections",
			"timeout", s.cfg.ShutdownTimeout, "err", err)
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("gateway.Serve: %w", err)
	}
	s.log.Info("HTTP server stopped")
	return nil
}

// Batches outlive requests, so shutdown need not wait for them to the end:
// near the drain's deadline (shutdown above), waiting requests answer 202 and
// streams end; clients read the rest from GET /v1/batches/{id} later.

// stop tells waiting requests and streams that shutdown has started.
func (s *Server) stop() { s.stopOnce.Do(func() { close(s.stopping) }) }

// untilStopping returns ctx, also cancelled when shutdown starts.
func (s *Server) untilStopping(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
