package ui

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures the dashboard.
type Config struct {
	// API is the gateway's own handler: every page reads it with GETs.
	API http.Handler
	Log *slog.Logger
}

// Handler serves /ui/... (its routes are in routes).
type Handler struct {
	api   http.Handler
	log   *slog.Logger
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New builds the dashboard. It panics when an embedded template does not
// parse: that is a build mistake the package's tests catch.
func New(cfg Config) *Handler {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{api: cfg.API, log: cfg.Log.With("component", "ui"), mux: http.NewServeMux(), pages: parsePages()}
	h.routes()
	return h
}

func (h *Handler) routes() {
	static, _ := fs.Sub(staticFS, "static") // cannot fail: the folder is embedded
	h.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", cacheable(http.FileServerFS(static))))
	h.mux.HandleFunc("GET /ui/{$}", h.overview)
	h.mux.HandleFunc("GET /ui/overview.json", h.overviewJSON)
	h.mux.HandleFunc("GET /ui/batches", h.batches)
	h.mux.HandleFunc("GET /ui/batches/{id}", h.batch)
	h.mux.HandleFunc("GET /ui/searches", h.searches)
	h.mux.HandleFunc("GET /ui/searches/{id}", h.search)
	h.mux.HandleFunc("GET /ui/skills", h.skills)
	h.mux.HandleFunc("GET /ui/tasks", h.tasks)
	h.mux.HandleFunc("GET /ui/redteam/{id}", h.redteam)
	h.mux.HandleFunc("GET /ui/api/", h.passThrough)
	h.mux.HandleFunc("POST /ui/login", h.login)
	h.mux.HandleFunc("GET /ui/logout", h.logout)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "error", page{Title: "Not found", Error: "no such page: " + r.URL.Path})
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// cacheable lets the browser keep the embedded assets for a while; they
// change only with the binary.
func cacheable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		next.ServeHTTP(w, r)
	})
}
