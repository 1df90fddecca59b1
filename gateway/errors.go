package gateway

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
)

// Code is a stable API error code (clients match on it: never rename).
type Code string

const (
	CodeBadJSON          Code = "bad_json"
	CodeInvalidRequest   Code = "invalid_request"
	CodeTooManyItems     Code = "too_many_items"
	CodeUnknownRewardFn  Code = "unknown_reward_fn"
	CodeInvalidOptions   Code = "invalid_options"
	CodeOptionAboveCap   Code = "option_above_cap" // within the harness's bounds, above this server's (caps.go)
	CodeBodyTooLarge     Code = "body_too_large"
	CodeTaskNotFound     Code = "task_not_found"
	CodeBatchNotFound    Code = "batch_not_found"
	CodeEvalNotFound     Code = "evaluation_not_found"
	CodeNotFound         Code = "not_found"
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeQueueFull        Code = "queue_full"
	CodeUnauthorized     Code = "unauthorized"
	CodeForbidden        Code = "forbidden"
	CodeRateLimited      Code = "rate_limited"
	CodeNotReady         Code = "not_ready"
	CodeStorageFull      Code = "insufficient_storage" // the store cannot take writes (a full disk); storage.go
	CodeUnavailable      Code = "unavailable"          // the queue or a store did not answer; retry
	CodeInternal         Code = "internal"
	CodeWaitTimeout      Code = "wait_timeout"           // a task check, episode step or OpenRLHF call that outlived its wait
	CodeKeyReused        Code = "idempotency_key_reused" // idempotency.go
	CodeInProgress       Code = "request_in_progress"    // idempotency.go

	// Tasks and episodes (tasks.go, episodes.go).
	CodeTaskExists      Code = "task_exists"
	CodeTaskInvalid     Code = "task_invalid"
	CodeEpisodeNotFound Code = "episode_not_found"
	CodeEpisodeExpired  Code = "episode_expired"
	CodeEpisodeDone     Code = "episode_done"
	CodeStepConflict    Code = "step_conflict"

	// Searches and skills (searches.go, skills.go).
	CodeSearchNotFound Code = "search_not_found"
	CodeSkillNotFound  Code = "skill_not_found"
	CodeSkillRetired   Code = "skill_retired"

	// Doors, quotas and task checks (doors.go, exports.go, taskchecks.go).
	CodeUnsupportedMediaType Code = "unsupported_media_type" // a body not sent as application/json
	CodeQuotaExceeded        Code = "quota_exceeded"         // a key's export quota
	CodeTaskCheckNotFound    Code = "task_check_not_found"   // an unknown or expired task check
	CodeRedteamNotFound      Code = "redteam_not_found"      // an unknown or expired red-team run (redteam.go)
)

// errorTable is the one place an error code gets its HTTP status.
var errorTable = map[Code]int{
	CodeBadJSON:          http.StatusBadRequest,
	CodeInvalidRequest:   http.StatusBadRequest,
	CodeTooManyItems:     http.StatusBadRequest,
	CodeUnknownRewardFn:  http.StatusBadRequest,
	CodeInvalidOptions:   http.StatusBadRequest,
	CodeOptionAboveCap:   http.StatusBadRequest,
	CodeBodyTooLarge:     http.StatusRequestEntityTooLarge,
	CodeTaskNotFound:     http.StatusNotFound,
	CodeBatchNotFound:    http.StatusNotFound,
	CodeEvalNotFound:     http.StatusNotFound,
	CodeNotFound:         http.StatusNotFound,
	CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	CodeQueueFull:        http.StatusTooManyRequests,
	CodeUnauthorized:     http.StatusUnauthorized,
	CodeForbidden:        http.StatusForbidden,
	CodeRateLimited:      http.StatusTooManyRequests,
	CodeNotReady:         http.StatusServiceUnavailable,
	CodeStorageFull:      http.StatusInsufficientStorage,
	CodeUnavailable:      http.StatusServiceUnavailable,
	CodeInternal:         http.StatusInternalServerError,
	CodeWaitTimeout:      http.StatusGatewayTimeout,
	CodeKeyReused:        http.StatusUnprocessableEntity,
	CodeInProgress:       http.StatusConflict,

	CodeTaskExists:      http.StatusConflict,
	CodeTaskInvalid:     http.StatusUnprocessableEntity,
	CodeEpisodeNotFound: http.StatusNotFound,
	CodeEpisodeExpired:  http.StatusGone,
	CodeEpisodeDone:     http.StatusConflict,
	CodeStepConflict:    http.StatusConflict,

	CodeSearchNotFound: http.StatusNotFound,
	CodeSkillNotFound:  http.StatusNotFound,
	CodeSkillRetired:   http.StatusConflict,

	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeQuotaExceeded:        http.StatusTooManyRequests,
	CodeTaskCheckNotFound:    http.StatusNotFound,
	CodeRedteamNotFound:      http.StatusNotFound,
}

// RetryAfter is the Retry-After (seconds) sent with queue_full.
const RetryAfter = 5

// apiError is the body of every 4xx and 5xx answer (schema Error).
type apiError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`

	status     int
	retryAfter int // seconds; sent as Retry-After when positive
}

func (e *apiError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// newError builds the answer for code; field names the request field at
// fault ("" when none).
func newError(code Code, field, format string, args ...any) *apiError {
	status, ok := errorTable[code]
	if !ok {
		code, status = CodeInternal, http.StatusInternalServerError
	}
	return &apiError{Code: code, Message: fmt.Sprintf(format, args...), Field: field, status: status}
}

func abort(c *gin.Context, e *apiError) {
	if (e.Code == CodeQueueFull || e.Code == CodeStorageFull || e.Code == CodeUnavailable) && e.retryAfter == 0 {
		e.retryAfter = RetryAfter
	}
	if e.retryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(e.retryAfter))
	}
	// PureJSON: a message reads "Bearer <key>", not "Bearer \u003ckey\u003e".
	c.Abort()
	c.PureJSON(e.status, e)
}
