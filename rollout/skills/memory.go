package skills

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout"
)

// Errors of Retire.
var (
	ErrNotFound = errors.New("skills: no such rule")
	ErrRetired  = errors.New("skills: rule already retired")
)

// Memory is the skill memory; safe for concurrent use by several searches.
type Memory struct {
	store Store
	llm   rollout.LLM
	cfg   Config
	log   *slog.Logger

	// emitMu orders changes with their OnChange calls; mu guards the state
	// and is never held across an LLM call or a callback.
	emitMu   sync.Mutex
	mu       sync.Mutex
	loaded   bool
	rules    map[string]Rule     // latest version of each rule
	counts   map[string]*pending // failures per signature not yet a rule
	patterns map[string]*regexp.Regexp
	triton   string // last observed triton version
	queued   []event
}

type event struct {
	rule   Rule
	reason string
}

var _ rollout.SkillMemory = (*Memory)(nil)

// New returns a memory over store; the store is read on first use (or by
// Load). Settings that fail Validate take their defaults (callers that want
// to report them call Validate first).
func New(store Store, llm rollout.LLM, cfg Config, log *slog.Logger) *Memory {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Memory{
		store:    store,
		llm:      llm,
		cfg:      cfg.withDefaults(),
		log:      log.With("component", "skills"),
		rules:    map[string]Rule{},
		counts:   map[string]*pending{},
		patterns: map[string]*regexp.Regexp{},
	}
}

// Load reads the store now, so that a bad store fails at startup rather
// than at the first search.
func (m *Memory) Load(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loadLocked(ctx)
}

func (m *Memory) loadLocked(ctx context.Context) error {
	if m.loaded {
		return nil
	}
	all, err := m.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("skills.Load: %w", err)
	}
	for _, r := range all {
		if cur, ok := m.rules[r.ID]; !ok || r.Version > cur.Version {
			m.rules[r.ID] = r.clone()
		}
	}
	m.loaded = true
	return nil
}

// Rules returns the latest version of every rule, active first, then by id.
func (m *Memory) Rules(ctx context.Context) ([]Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.loadLocked(ctx); err != nil {
		return nil, err
	}
	out := make([]Rule, 0, len(m.rules))
	for _, r := range m.rules {
		out = append(out, r.clone())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Active() != out[j].Active() {
			return out[i].Active()
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// change runs f under the state lock, then hands the versions f committed to
// OnChange, in order, outside the state lock.
func (m *Memory) change(ctx context.Context, f func() error) error {
	m.emitMu.Lock()
	defer m.emitMu.Unlock()
	m.mu.Lock()
	err := m.loadLocked(ctx)
	if err == nil {
		err = f()
	}
	evs := m.queued
	m.queued = nil
	m.mu.Unlock()
	for _, e := range evs {
		m.log.Info("skill changed", "skill", e.rule.ID, "version", e.rule.Version, "reason", e.reason,
			"hits", e.rule.Hits, "status", e.rule.Status, "signature", e.rule.Signature)
		if m.cfg.OnChange != nil {
			m.cfg.OnChange(e.rule.clone(), e.reason)
		}
	}
	return err
}

// commitLocked stores r as the next version of its rule and queues the event.
// The in-memory rule changes only once the store has it.
func (m *Memory) commitLocked(ctx context.Context, r Rule, reason string) error {
	r = r.clone()
	r.Version = m.rules[r.ID].Version + 1
	if err := m.store.Put(ctx, r); err != nil {
		return fmt.Errorf("skills: store %s v%d (%s): %w", r.ID, r.Version, reason, err)
	}
	m.rules[r.ID] = r
	m.queued = append(m.queued, event{r, reason})
	return nil
}

// Retire retires rule id by hand; reason is recorded on the new version.
func (m *Memory) Retire(ctx context.Context, id, reason string) error {
	return m.change(ctx, func() error {
		r, ok := m.rules[id]
		if !ok {
			return fmt.Errorf("skills.Retire %s: %w", id, ErrNotFound)
		}
		if !r.Active() {
			return fmt.Errorf("skills.Retire %s: %w", id, ErrRetired)
		}
		return m.retireLocked(ctx, r, ReasonRetiredManual, "manual: "+reason)
	})
}

func (m *Memory) retireLocked(ctx context.Context, r Rule, reason, detail string) error {
	r.Status = export.SkillRetired
	r.RetiredReason = detail
	r.LastSeen = m.cfg.Now().UTC()
	return m.commitLocked(ctx, r, reason)
}

// newID is a random rule id: ids are minted by several gateways later.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "sk-" + hex.EncodeToString(b[:])
}

// minorVersion is "3.6" of "3.6.0+git1234": rules hold across patch releases.
func minorVersion(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
