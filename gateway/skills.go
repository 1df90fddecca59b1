package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// SkillAdmin is what the skill endpoints need of the skill memory.
type SkillAdmin interface {
	// Rules returns the latest version of every rule.
	Rules(ctx context.Context) ([]skills.Rule, error)
	// Retire retires a rule by hand: skills.ErrNotFound, skills.ErrRetired.
	Retire(ctx context.Context, id, reason string) error
}

var _ SkillAdmin = (*skills.Memory)(nil)

// skillList is GET /v1/skills's body (schema SkillList).
type skillList struct {
	Skills []skills.Rule `json:"skills"`
}

// retireRequest is POST /v1/skills/{id}/retire's body (schema RetireRequest).
type retireRequest struct {
	Reason string `json:"reason"`
}

// maxRetireReason bounds the reason, which is stored with every later
// version of the rule.
const maxRetireReason = 1000

func (s *Server) skillRoutes(r gin.IRoutes) {
	r.GET("/v1/skills", s.listSkills)
	r.POST("/v1/skills/:id/retire", s.retireSkill)
}

// skillAdmin is Deps.Skills, or a 503 when the server keeps no skill memory.
func (s *Server) skillAdmin(c *gin.Context) (SkillAdmin, bool) {
	if s.deps.Skills == nil {
		abort(c, newError(CodeNotReady, "", "skills are not configured on this server (no skill memory)"))
		return nil, false
	}
	return s.deps.Skills, true
}

// listSkills is GET /v1/skills: the latest version of each rule, active
// first, optionally only those with ?status=active|retired.
func (s *Server) listSkills(c *gin.Context) {
	mem, ok := s.skillAdmin(c)
	if !ok {
		return
	}
	status := c.Query("status")
	if status != "" && status != export.SkillActive && status != export.SkillRetired {
		abort(c, newError(CodeInvalidRequest, "status", "status must be %s or %s, got %q", export.SkillActive, export.SkillRetired, status))
		return
	}
	rules, err := mem.Rules(c.Request.Context())
	if err != nil {
		s.skillsFailed(c, "listing skills", "", err)
		return
	}
	out := skillList{Skills: make([]skills.Rule, 0, len(rules))}
	for _, r := range rules {
		if status == "" || r.Status == status {
			out.Skills = append(out.Skills, r)
		}
	}
	c.JSON(http.StatusOK, out)
}

// retireSkill is POST /v1/skills/{id}/retire: 200 with the retired rule's
// new version; 404 for an unknown rule, 409 for one already retired.
func (s *Server) retireSkill(c *gin.Context) {
	mem, ok := s.skillAdmin(c)
	if !ok {
		return
	}
	var req retireRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	req.Reason = strings.TrimSpace(req.Reason)
	switch {
	case req.Reason == "":
		abort(c, newError(CodeInvalidRequest, "reason", "a reason is required: it is recorded with the retired rule"))
		return
	case len(req.Reason) > maxRetireReason:
		abort(c, newError(CodeInvalidRequest, "reason", "reason is %d bytes; at most %d", len(req.Reason), maxRetireReason))
		return
	}
	ctx, id := c.Request.Context(), c.Param("id")
	err := mem.Retire(ctx, id, req.Reason)
	switch {
	case errors.Is(err, skills.ErrNotFound):
		abort(c, newError(CodeSkillNotFound, "id", "no skill %q", id))
		return
	case errors.Is(err, skills.ErrRetired):
		abort(c, newError(CodeSkillRetired, "id", "skill %q is already retired", id))
		return
	case err != nil:
		s.skillsFailed(c, "retiring a skill", id, err)
		return
	}
	s.log.Info("skill retired by hand", "skill", id, "reason", req.Reason, "caller", c.GetString(callerKey))
	rules, err := mem.Rules(ctx)
	if err != nil {
		s.skillsFailed(c, "reading the retired skill", id, err)
		return
	}
	for _, r := range rules {
		if r.ID == id {
			c.JSON(http.StatusOK, r)
			return
		}
	}
	s.skillsFailed(c, "reading the retired skill", id, errors.New("the rule vanished after its retirement"))
}

// skillsFailed logs an unexpected skill memory error and answers 500.
func (s *Server) skillsFailed(c *gin.Context, what, id string, err error) {
	if c.Request.Context().Err() != nil {
		return
	}
	s.log.Error(what+" failed", "skill", id, "err", err)
	abort(c, newError(CodeInternal, "", "%s failed; see the server's log", what))
}
