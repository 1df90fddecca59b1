package overview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Fetch reads a gateway's /metrics, /v1/gpus and slowest tasks over HTTP with an API key
// ("" sends none), for callers outside the gateway (kernelgate top). A
// refusal says what the API said: which scope the key lacks, say.
func Fetch(ctx context.Context, c *http.Client, baseURL, key string) (Snapshot, error) {
	base := strings.TrimRight(baseURL, "/")
	text, err := get(ctx, c, base+"/metrics", key)
	if err != nil {
		return Snapshot{}, err
	}
	s, err := FromMetrics(bytes.NewReader(text), time.Now())
	if err != nil {
		return Snapshot{}, err
	}
	gpus, err := get(ctx, c, base+"/v1/gpus", key)
	if err == nil {
		err = s.AddGPUs(gpus)
	}
	if err != nil {
		s.Missing = append(s.Missing, "GPUs: "+err.Error())
	}
	ready, err := get(ctx, c, base+"/readyz", key)
	var refused *HTTPError
	switch {
	case err == nil:
		s.AddReadyz(ready, "")
	case errors.As(err, &refused):
		s.AddReadyz(nil, refused.Message)
	}
	slow, err := get(ctx, c, base+SlowestPath, key)
	if err == nil {
		err = s.AddSlowest(slow)
	}
	if err != nil {
		s.Missing = append(s.Missing, "slowest tasks: "+err.Error())
	}
	return s, nil
}

func get(ctx context.Context, c *http.Client, url, key string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("overview: %w", err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("overview: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("overview: reading %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(body))
		}
		return nil, &HTTPError{URL: url, Status: resp.StatusCode, Code: e.Code, Message: e.Message}
	}
	return body, nil
}

// HTTPError is a gateway's refusal.
type HTTPError struct {
	URL     string
	Status  int
	Code    string
	Message string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: %d %s: %s", e.URL, e.Status, e.Code, e.Message)
}
