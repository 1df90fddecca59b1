package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/gateway/ui/overview"
)

// page is what every template gets.
type page struct {
	Title string
	Nav   string // which tab is lit
	Error string // shown above the content
	Login bool   // the API refused the caller's key: show the form
	Data  any
}

// pageNames are the templates under templates/, each drawn inside layout.html.
var pageNames = []string{"overview", "batches", "batch", "searches", "search", "skills", "tasks", "redteam", "error"}

func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.New("layout.html").Funcs(funcs)
		out[name] = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// render draws a page; a template that fails mid-page is logged and the
// client gets what was drawn (a header is out by then).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	if err := h.pages[name].Execute(&buf, p); err != nil {
		h.log.Error("rendering a page", "page", name, "path", r.URL.Path, "err", err)
		http.Error(w, "the dashboard could not draw this page; see the server's log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail shows an API refusal: the login form for a 401, the API's message
// (which names the missing scope for a 403) otherwise.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, name string, p page, e *apiError) {
	p.Error = e.Message
	if e.Status == http.StatusUnauthorized {
		p.Login = true
	}
	status := e.Status
	if status < 400 {
		status = http.StatusBadGateway
	}
	p.Data = nil
	h.render(w, r, status, "error", p)
}

var funcs = template.FuncMap{
	"num":     num,
	"seconds": overview.Seconds,
	"pct":     pct,
	"share":   func(v float64) string { return pct(&v) },
	"flags":   flags,
	"signed":  func(v float64) string { return fmt.Sprintf("%+.3f", v) },
	"gib":     func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) },
	"ago":     ago,
	"json":    prettyJSON,
	"join":    strings.Join,
	"short":   func(s string, n int) string { return shorten(s, n) },
	"trimHash": func(h string) string {
		_, hex, ok := strings.Cut(h, ":")
		if ok {
			return hex
		}
		return h
	},
}

// num formats a number or a pointer to one; nil is "–".
func num(v any) string {
	f, ok := deref(v).(float64)
	if !ok {
		if i, isInt := deref(v).(int); isInt {
			return fmt.Sprint(i)
		}
		return "–"
	}
	switch {
	case math.IsNaN(f):
		return "–"
	case f == math.Trunc(f) && math.Abs(f) < 1e9:
		return fmt.Sprintf("%.0f", f)
	case math.Abs(f) >= 100:
		return fmt.Sprintf("%.0f", f)
	default:
		return fmt.Sprintf("%.3g", f)
	}
}

// pct formats a share (a *float64 in 0..1) as a percentage; nil is "–".
func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *v*100)
}

// deref unwraps a pointer (nil stays nil) so templates can test and print it.
func deref(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil
	}
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		return rv.Elem().Interface()
	}
	return v
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func prettyJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
