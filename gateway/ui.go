package gateway

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/gateway/ui"
)

// uiRoutes mounts the dashboard (gateway/ui). Its pages are open routes
// (routeScopes): they hold no data, and every read they make goes through
// this server's own handler with the caller's key, so the API's scopes and
// limits apply to each (a key without one is told which it lacks).
func (s *Server) uiRoutes(r gin.IRoutes) {
	api := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { s.handler.ServeHTTP(w, req) })
	h := gin.WrapH(ui.New(ui.Config{API: api, Log: s.log}))
	r.GET("/ui/*page", h)
	r.POST("/ui/login", h)
	// The address serve prints leads to the dashboard.
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, "/ui/") })
}
