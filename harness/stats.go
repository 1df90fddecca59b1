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
	out := make([]ZygoteStats, 0, len(s.slots))
	for _, sl := range s.slots {
		st := ZygoteStats{
			Label: sl.label, Up: sl.z != nil, InFlight: sl.inflight, Concurrency: sl.conc,
			JobsDone: sl.jobsDone, Restarts: sl.restarts, StartFailures: sl.startFailures,
		}
		if sl.z != nil {
			st.PID = sl.z.cmd.Process.Pid
		}
		if sl.lastErr != nil {
			st.LastError = sl.lastErr.Error()
		}
		out = append(out, st)
	}
	return out
}

// Hello returns the hello of the first zygote that has started, for doctor.
func (s *Supervisor) Hello() (Hello, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.slots {
		if sl.hello.Type != "" {
			return sl.hello, true
		}
	}
	return Hello{}, false
}
