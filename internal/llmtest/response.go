package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// completion builds the OpenAI chat.completion object for sc.
func completion(req Request, sc Script, n int) map[string]any {
	finish := sc.FinishReason
	if finish == "" {
		finish = "stop"
	}
	model := req.Model
	if model == "" {
		model = "llmtest"
	}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]string{"role": "assistant", "content": sc.Text},
			"finish_reason": finish,
		}},
	}
	if !sc.NoUsage {
		in, comp := sc.PromptTokens, sc.CompletionTokens
		if in == 0 {
			for _, m := range req.Messages {
				in += Estimate(m.Content)
			}
		}
		if comp == 0 {
			comp = Estimate(sc.Text)
		}
		out["usage"] = map[string]int{"prompt_tokens": in, "completion_tokens": comp, "total_tokens": in + comp}
	}
	return out
}

// Estimate is the token count the server reports when a Script gives none:
// len(text)/4, rounded up.
func Estimate(text string) int { return (len(text) + 3) / 4 }

// writeError writes an OpenAI-shaped error body, which go-openai decodes
// into an *openai.APIError carrying the status.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
