package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The queue and GPU samples are in no log, so Save writes them to a file
// of their own (the gateway does every minute and when it stops) and Load
// reads them back at start: a restart keeps them too.

// savedGauges is the file's form; V lets it change.
type savedGauges struct {
	V     int         `json:"v"`
	Steps []savedStep `json:"steps"`
}

type savedStep struct {
	Coarse bool                  `json:"coarse"`
	Start  time.Time             `json:"start"`
	Queue  savedGauge            `json:"queue"`
	GPUs   map[int][2]savedGauge `json:"gpus,omitempty"` // utilisation, memory used
}

type savedGauge struct {
	N   int     `json:"n"`
	Sum float64 `json:"sum"`
	Max float64 `json:"max"`
}

const gaugesVersion = 1

func save(g gauge) savedGauge { return savedGauge{g.n, g.sum, g.max} }
func load(s savedGauge) gauge { return gauge{s.N, s.Sum, s.Max} }

// Save writes the samples kept to path (atomically: a temp file renamed).
func (h *History) Save(path string) error {
	h.mu.Lock()
	out := savedGauges{V: gaugesVersion}
	for _, r := range []*ring{&h.fine, &h.coarse} {
		for i := range r.buckets {
			b := &r.buckets[i]
			if b.start.IsZero() || b.queue.n == 0 && len(b.gpus) == 0 {
				continue
			}
			st := savedStep{Coarse: r == &h.coarse, Start: b.start, Queue: save(b.queue)}
			for idx, g := range b.gpus {
				if st.GPUs == nil {
					st.GPUs = map[int][2]savedGauge{}
				}
				st.GPUs[idx] = [2]savedGauge{save(g.util), save(g.mem)}
			}
			out.Steps = append(out.Steps, st)
		}
	}
	h.mu.Unlock()
	data, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("history.Save: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("history.Save: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("history.Save: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("history.Save: %w", err)
	}
	return nil
}

// Load adds the samples Save wrote to path; no file is no error. Steps
// older than the rings reach are dropped.
func (h *History) Load(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("history.Load: %w", err)
	}
	var in savedGauges
	if err := json.Unmarshal(data, &in); err != nil || in.V != gaugesVersion {
		return fmt.Errorf("history.Load: %s is not a samples file of version %d (%v)", path, gaugesVersion, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for _, st := range in.Steps {
		r := &h.fine
		if st.Coarse {
			r = &h.coarse
		}
		if !st.Start.Equal(st.Start.Truncate(r.step)) {
			continue
		}
		b := r.at(st.Start, now)
		if b == nil {
			continue
		}
		b.queue = load(st.Queue)
		for idx, g := range st.GPUs {
			b.gpus[idx] = &gpuGauge{util: load(g[0]), mem: load(g[1])}
		}
	}
	return nil
}
