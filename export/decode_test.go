package export

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
)

// Event bodies are untrusted input (any publisher on events.>): decode must
// never panic, and every event is either a row or a rejected row with its
// bytes intact.
func FuzzDecode(f *testing.F) {
	ev, _ := json.Marshal(evalEvent("e1", testTime))
	st, _ := json.Marshal(stepEvent("s1", testTime))
	f.Add(event.SubjectEvaluation, "e1", ev)
	f.Add(event.SubjectEpisodeStep, "s1", st)
	f.Add(event.SubjectEvaluation, "", []byte(`{"eval_id":"x","event_id":"y","ts":"2026-01-02T03:04:05Z"}`))
	f.Add(event.SubjectEpisodeStep, "x", []byte(`{"episode_id":"e","turn":1e400}`))
	f.Add(event.SubjectEvaluation, "x", []byte(`{"verdict":{"stage_ms":{"a":"b"}}}`))
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, subject, id string, data []byte) {
		for _, subj := range []string{subject, event.SubjectEvaluation, event.SubjectEpisodeStep} {
			d := decode(bus.Event{ID: id, Subject: subj, Data: data}, testTime, log)
			switch r := d.row.(type) {
			case nil:
				if !d.skip {
					t.Fatalf("no row and not skipped: %+v", d)
				}
			case Rejected:
				if !bytes.Equal(r.Data, data) || r.Error == "" || r.Subject != subj {
					t.Fatalf("rejected row lost the event: %+v", r)
				}
			case Evaluation:
				if d.id == "" || r.EventID != d.id || r.TS.Location() != time.UTC {
					t.Fatalf("evaluation row %q: id %q, ts %v", d.id, r.EventID, r.TS)
				}
			case EpisodeStep:
				if d.id == "" || r.EventID != d.id {
					t.Fatalf("episode step row %q: id %q", d.id, r.EventID)
				}
			default:
				t.Fatalf("unexpected row type %T", r)
			}
		}
	})
}
