package ui

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/kernelgate/kernelgate/gateway/apikey"
)

// cookieName holds the caller's API key for the dashboard's reads. It is
// HttpOnly (the page's script never sees the key), SameSite=Strict (no
// other site's page sends it) and scoped to /ui, and only the UI's GETs
// use it: the API's own routes read bearer headers only.
const cookieName = "kernelgate_ui_key"

func sessionKey(r *http.Request) string {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return ""
	}
	return c.Value
}

// login is POST /ui/login {"key": "kg_..."}: it keeps the key in the
// cookie. It checks only the key's shape (as the API does first): the next
// page's reads go through the API, which refuses an unknown key and shows
// the form again.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key string `json:"key"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	switch {
	case err != nil:
		writeJSONError(w, http.StatusBadRequest, "invalid_request", `send {"key": "kg_..."}: `+err.Error())
		return
	case !apikey.LooksLikeKey(body.Key):
		writeJSONError(w, http.StatusBadRequest, "invalid_request",
			"key must be a kernelgate API key: "+apikey.Prefix+" followed by 52 base32 characters (kernelgate keys create)")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: body.Key, Path: "/ui", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	w.WriteHeader(http.StatusNoContent)
}

// logout forgets the key.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: "/ui", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}
