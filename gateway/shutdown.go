package gateway

import "context"

// Batches outlive requests, so shutdown need not wait for them: when it
// starts (http.Server.RegisterOnShutdown), waiting requests answer 202 and
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
