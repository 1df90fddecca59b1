package bus

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// ackedBy returns whether a message of a work-queue or interest stream was
// acked by every consumer that reads its subject: the server deleted it
// then, and putting it back would hand it out again (a job evaluated
// twice, an event logged twice). A limits stream keeps what was acked.
func ackedBy(ctx context.Context, st jetstream.Stream, retention jetstream.RetentionPolicy) (func(subj string, seq uint64) bool, error) {
	if retention == jetstream.LimitsPolicy {
		return func(string, uint64) bool { return false }, nil
	}
	type floor struct {
		filters []string
		seq     uint64
	}
	var floors []floor
	l := st.ListConsumers(ctx)
	for ci := range l.Info() {
		f := floor{filters: ci.Config.FilterSubjects, seq: ci.AckFloor.Stream}
		if ci.Config.FilterSubject != "" {
			f.filters = append(f.filters, ci.Config.FilterSubject)
		}
		floors = append(floors, f)
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("listing the consumers: %w", err)
	}
	return func(subj string, seq uint64) bool {
		readers := 0
		for _, f := range floors {
			if !matchesAny(f.filters, subj) {
				continue
			}
			readers++
			if f.seq < seq {
				return false
			}
		}
		return readers > 0
	}, nil
}

// matchesAny reports whether subj is under one of filters (none: all).
func matchesAny(filters []string, subj string) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if subjectMatches(f, subj) {
			return true
		}
	}
	return false
}

// subjectMatches reports whether subj is under filter, with NATS wildcards
// ("*" one token, ">" the rest).
func subjectMatches(filter, subj string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subj, ".")
	for i, t := range ft {
		if t == ">" {
			return len(st) > i
		}
		if i >= len(st) || t != "*" && t != st[i] {
			return false
		}
	}
	return len(ft) == len(st)
}
