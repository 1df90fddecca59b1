package harness

// ZygoteStats describes one zygote slot, for bench reports and health.
type ZygoteStats struct {
	Label         string `json:"label"` // "gpu0", "cpu"
	Up            bool   `json:"up"`
	PID           int    `json:"pid,omitempty"`
	InFlight      int    `json:"in_flight"`
	Concurrency   int    `json:"concurrency"`
	JobsDone      int64  `json:"jobs_done"`
	Restarts      int    `json:"restarts"`
	StartFailures int    `json:"start_failures"`
	LastError     string `json:"last_error,omitempty"`
}

// Stats returns one entry per zygote slot.
func (s *Supervisor) Stats() []ZygoteStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ZygoteStats, 0, len(s.workers))
	for _, w := range s.workers {
		st := ZygoteStats{
			Label: w.label, Up: w.z != nil, InFlight: w.inflight, Concurrency: w.conc,
			JobsDone: w.jobsDone, Restarts: w.restarts, StartFailures: w.startFailures,
		}
		if w.z != nil {
			st.PID = w.z.cmd.Process.Pid
		}
		if w.lastErr != nil {
			st.LastError = w.lastErr.Error()
		}
		out = append(out, st)
	}
	return out
}

// Hello returns the hello of the first zygote that has started, for doctor.
func (s *Supervisor) Hello() (Hello, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.workers {
		if w.hello.Type != "" {
			return w.hello, true
		}
	}
	return Hello{}, false
}
