package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate"
	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/gateway/history"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/tasks"
)

// Defaults of Config.
const (
	DefaultAddr = "127.0.0.1:8080"
	// A GRPO step's 512 completions of ~8 KB are 4 MiB; a 50 MB body is a mistake.
	DefaultMaxBodyBytes    = 16 << 20
	DefaultMaxItems        = 4096
	DefaultWait            = 600 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultResultPoll      = 10 * time.Second
	DefaultStoreWait       = 5 * time.Second
)

// Config configures the server. Zero values take the defaults above.
type Config struct {
	Addr            string        // listen address (DefaultAddr)
	MaxBodyBytes    int64         // request body limit; past it 413
	MaxItems        int           // completions or codes per request; past it 400
	DefaultWait     time.Duration // wait_s when the request gives none
	ShutdownTimeout time.Duration // how long Run lets requests finish after ctx ends
	DrainDelay      time.Duration // after ctx ends, how long /readyz says 503 before the listener closes (0: none)
	RateLimit       float64       // requests/s per API key (0: no limit; the serve flag defaults to DefaultRateLimit)
	RateBurst       int           // token bucket size per key (below 1: max(1, RateLimit))
	// ResultPoll: how long a waiting request goes without a result
	// notification before it re-reads the stored results (a notification
	// lost in a reconnect then costs this much, not the wait).
	ResultPoll time.Duration
	// StoreWait bounds a batch read's store requests (GET /v1/batches/{id},
	// its stream's start): past it the answer is 503 with Retry-After.
	StoreWait time.Duration
	// MaxTimeoutS and MaxMemoryMB cap timeout_s and memory_limit_mb in every
	// request's options (caps.go): above a cap is 400 option_above_cap, and a
	// request that gives none gets the harness default lowered to the cap.
	// MaxTimeoutS 0 means DefaultMaxTimeoutS; MaxMemoryMB 0 means no cap
	// (serve always sets one, derived from the host's memory).
	MaxTimeoutS int
	MaxMemoryMB int
	// Doors: open mode, the loopback Host/Origin allowlist and the limit on
	// failed authentications (doors.go).
	Doors Doors
	// ExportsPerHour: POST /v1/exports a key may make per hour;
	// 0: DefaultExportsPerHour, negative: no quota (exports.go).
	ExportsPerHour int
}

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxItems <= 0 {
		c.MaxItems = DefaultMaxItems
	}
	if c.DefaultWait <= 0 {
		c.DefaultWait = DefaultWait
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.ResultPoll <= 0 {
		c.ResultPoll = DefaultResultPoll
	}
	if c.StoreWait <= 0 {
		c.StoreWait = DefaultStoreWait
	}
	if c.MaxTimeoutS <= 0 {
		c.MaxTimeoutS = DefaultMaxTimeoutS
	}
	if c.ExportsPerHour == 0 {
		c.ExportsPerHour = DefaultExportsPerHour
	}
	c.Doors = c.Doors.withDefaults()
	return c
}

// Deps are what the server talks to.
type Deps struct {
	Bus *bus.Bus
	// Ready reports whether a worker can take jobs (nil error: ready).
	Ready func() error
	// TimingMode is the harness's timing mode, for the verdicts the gateway
	// makes itself (invalid_submission).
	TimingMode func() string
	// Envs are the environments of the workers that would run a job now
	// (dispatch.PoolEnvs); a cached verdict is served only when it was made
	// in one of them. Nil: those of GPUs when it can say (dispatch.Pool, as a
	// *harness.Supervisor), else none, and the cache answers nothing.
	Envs func() []dispatch.Env
	// Evals is the evaluation service (nil: one over Bus, with TimingMode,
	// Envs and Config.ResultPoll).
	Evals *dispatch.Service
	// Tasks resolves task ids (nil: no suites, API tasks kept in memory).
	Tasks *tasks.Registry
	// Episodes keeps episodes (nil: the episode endpoints answer 503).
	Episodes *episode.Store
	// Keys are the API keys (auth.go says when they are enforced); nil: none.
	Keys *apikey.Keyring
	// GPUs is the local harness, for /v1/gpus and the worker metrics; nil: none.
	GPUs GPUSource
	// Exports lets POST /v1/exports write exports (exports.go); zero: 503.
	Exports Exports
	// Searches runs searches (/v1/searches); nil: those endpoints answer 503
	// (no LLM endpoint configured).
	Searches runner.Service
	// Skills is the skill memory behind /v1/skills; nil: 503.
	Skills SkillAdmin
	Log    *slog.Logger
}

// Server is the HTTP API.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	handler http.Handler

	limiter     *limiter    // nil: no rate limit
	authFails   *authFails  // nil: failed authentications not limited
	exportQuota *limiter    // nil: no export quota (exports.go)
	taskChecks  *taskChecks // task checks in flight or recently done (taskchecks.go)
	rlGroups    rlGroups    // OpenRLHF samples waiting for the rest of their group (openrlhf_group.go)
	evals       *dispatch.Service
	metrics     *metrics
	redteams    *redteamRuns     // red-team runs in flight or recently done (redteam.go)
	history     *history.History // history.go: GET /v1/stats/history
	historyIDs  *slowest         // its task ids, remembered
	batchMemo   batchMemo
	batchIndex  batchIndex     // batches_list.go
	requireKeys atomic.Bool    // listening beyond loopback: keys enforced even when none exist
	draining    atomic.Bool    // shutting down: /readyz answers 503
	reconcile   reconcileState // the pass over batches left running (reconcile.go): /readyz says degraded
	// stopping is closed when shutdown starts: waiting requests answer 202
	// and streams end, so the drain does not wait for batches to finish.
	stopping chan struct{}
	stopOnce sync.Once
}

// New builds the server; Run serves it.
func New(cfg Config, deps Deps) *Server {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Ready == nil {
		deps.Ready = func() error { return errors.New("no worker") }
	}
	if deps.TimingMode == nil {
		deps.TimingMode = func() string { return "" }
	}
	if deps.Envs == nil {
		deps.Envs = func() []dispatch.Env { return nil }
		if p, ok := deps.GPUs.(dispatch.Pool); ok {
			deps.Envs = func() []dispatch.Env { return dispatch.PoolEnvs(p) }
		}
	}
	if deps.Tasks == nil {
		deps.Tasks, _ = tasks.NewRegistry(nil, nil) // no suite: cannot fail
	}
	s := &Server{cfg: cfg.withDefaults(), deps: deps, log: deps.Log.With("component", "gateway"), stopping: make(chan struct{})}
	s.evals = deps.Evals
	if s.evals == nil {
		s.evals = &dispatch.Service{Bus: deps.Bus, Mode: deps.TimingMode, Envs: deps.Envs, Poll: s.cfg.ResultPoll, Log: s.log}
	}
	s.limiter = newLimiter(s.cfg.RateLimit, s.cfg.RateBurst, time.Now)
	s.authFails = newAuthFails(s.cfg.Doors.AuthFailLimit, s.cfg.Doors.AuthFailWindow, time.Now)
	s.exportQuota = newExportQuota(s.cfg.ExportsPerHour, time.Now)
	s.taskChecks = newTaskChecks(time.Now)
	s.redteams = newRedteamRuns(time.Now)
	s.requireKeys.Store(!IsLoopback(s.cfg.Addr))
	s.metrics = newMetrics(s)
	s.history, s.historyIDs = history.New(nil), newSlowest(0, time.Now)
	s.handler = s.routes()
	return s
}

// Handler is the server's http.Handler (tests use it with httptest).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(s.logRequests, s.metrics.instrument, gin.CustomRecovery(func(c *gin.Context, rec any) {
		s.log.Error("panic in handler", "path", c.Request.URL.Path, "panic", rec)
		abort(c, newError(CodeInternal, "", "internal error"))
	}), s.checkDoors, s.authenticate, s.rateLimit, s.requireJSON, s.rejectRepeatedQuery, s.identify)
	r.NoRoute(func(c *gin.Context) {
		abort(c, newError(CodeNotFound, "", "no such endpoint: %s %s", c.Request.Method, c.Request.URL.Path))
	})
	r.NoMethod(func(c *gin.Context) {
		abort(c, newError(CodeMethodNotAllowed, "", "method %s not allowed on %s", c.Request.Method, c.Request.URL.Path))
	})
	r.Use(s.storageGate) // storage.go: writes get 507 while the store cannot take them
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, health{Status: "ok"}) })
	r.GET("/readyz", s.readyz)
	r.GET("/openapi.yaml", func(c *gin.Context) { c.Data(http.StatusOK, "application/yaml", kernelgate.OpenAPI) })
	r.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", kernelgate.OpenAPIJSON) })
	r.POST("/v1/rewards", s.rewards)
	s.taskRoutes(r)    // tasks.go
	s.episodeRoutes(r) // episodes.go
	r.POST("/openrlhf/reward", s.openRLHF)
	r.GET("/v1/gpus", s.gpus)
	r.GET("/metrics", s.metrics.handler())
	r.GET("/v1/stats/slowest-tasks", s.slowestTasks) // slowest.go
	r.GET("/v1/stats/history", s.statsHistory)       // history.go
	r.GET("/v1/batches", s.listBatches)              // batches_list.go
	r.GET("/v1/batches/:id", s.getBatch)
	r.GET("/v1/batches/:id/stream", s.streamBatch)
	r.GET("/v1/batches/:id/code", s.getBatchCode) // batch_code.go
	r.POST("/v1/evaluations", s.evaluate)
	r.GET("/v1/evaluations/:id", s.getEvaluation)
	s.exportRoutes(r) // exports.go
	s.searchRoutes(r) // searches.go
	s.skillRoutes(r)  // skills.go
	s.uiRoutes(r)     // ui.go: the dashboard at /ui
	s.redteamRoutes(r)
	return r
}

type health struct {
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

func (s *Server) readyz(c *gin.Context) {
	if err := s.ready(); err != nil {
		abort(c, newError(CodeNotReady, "", "not ready: %v", err))
		return
	}
	if detail := s.reconcile.detail(); detail != "" {
		c.JSON(http.StatusOK, health{Status: "degraded", Detail: detail})
		return
	}
	c.JSON(http.StatusOK, health{Status: "ready"})
}

func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	s.log.Info("request", "method", c.Request.Method, "path", c.Request.URL.Path,
		"status", c.Writer.Status(), "ms", time.Since(start).Milliseconds())
}

// Run listens on cfg.Addr and serves until ctx ends, then shuts down
// gracefully (shutdown.go: /readyz 503, DrainDelay, in-flight requests get
// ShutdownTimeout to finish). It returns nil after a shutdown.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("gateway.Run: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened. It refuses (and closes ln)
// when ln is beyond loopback and there are no API keys.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := CheckKeys(ln.Addr().String(), s.deps.Keys); err != nil {
		ln.Close()
		return err
	}
	if !IsLoopback(ln.Addr().String()) {
		s.requireKeys.Store(true)
	}
	// Evaluations are counted while the drain lets requests finish.
	stopObserving, err := s.observeResults(context.WithoutCancel(ctx))
	if err != nil {
		ln.Close()
		return fmt.Errorf("gateway.Serve: %w", err)
	}
	defer stopObserving()
	defer s.startHistory(context.WithoutCancel(ctx))()
	reconciled := s.startReconcile(ctx)
	defer reconciled()
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.log.Info("listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }() // returns once Shutdown is called below
	select {
	case err := <-errc:
		return fmt.Errorf("gateway.Serve: %w", err)
	case <-ctx.Done():
	}
	return s.shutdown(srv, errc)
}
