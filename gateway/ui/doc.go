// Package ui is the dashboard at /ui: server-rendered pages (html/template)
// with a small script, all embedded, over the gateway's own API.
//
// The pages hold no data of their own. Every number on them comes from a
// GET that the handler makes into the gateway's API in-process (Config.API),
// with the caller's key: a bearer header, or the HttpOnly cookie that
// POST /ui/login sets. So the API's scopes decide what a key sees (the
// overview and red-team runs need admin, batches and tasks reward,
// searches and skills search), a key without one is told which, and the UI
// itself needs no rule of its own beyond "open": without a key it shows the
// login form and nothing else. The script's live parts (overview polling,
// batch and red-team progress, the search stream) read the API through
// /ui/api/, a GET-only pass-through to an allowlist of read endpoints.
//
// It imports neither gin nor the gateway: gateway/ui.go mounts it.
package ui
