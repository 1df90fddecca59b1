package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// decoded is one event turned into a row of some table, or skipped.
type decoded struct {
	skip bool   // unknown subject: logged, not written
	id   string // dedup key: the bus message id, else the body's event_id
	row  any    // Evaluation, EpisodeStep or Rejected
}

// decode turns an event into a row. It never fails: what cannot be decoded
// becomes a Rejected row holding the raw bytes and the reason; an unknown
// subject is logged and skipped (a newer publisher's table, not bad data).
// received stamps rejected rows and events that carry no time.
func decode(ev bus.Event, received time.Time, log *slog.Logger) decoded {
	switch ev.Subject {
	case SubjectEvaluation:
		var e EvaluationEvent
		err := unmarshal(ev.Data, &e)
		if err == nil && e.EvalID == "" {
			err = errors.New("missing eval_id")
		}
		if err == nil {
			e.EventID, err = eventID(ev, e.EventID, log)
		}
		if err != nil {
			return reject(ev, received, err)
		}
		if e.Time.IsZero() {
			e.Time = received
		}
		return decoded{id: e.EventID, row: EvaluationRow(e)}
	case SubjectEpisodeStep:
		var e EpisodeStepEvent
		err := unmarshal(ev.Data, &e)
		if err == nil && e.EpisodeID == "" {
			err = errors.New("missing episode_id")
		}
		if err == nil {
			e.EventID, err = eventID(ev, e.EventID, log)
		}
		if err != nil {
			return reject(ev, received, err)
		}
		if e.Time.IsZero() {
			e.Time = received
		}
		return decoded{id: e.EventID, row: EpisodeStepRow(e)}
	default:
		log.Warn("unknown event subject; skipped", "subject", ev.Subject, "event", ev.ID, "bytes", len(ev.Data))
		return decoded{skip: true}
	}
}

func unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// eventID picks the dedup key. The bus id (Nats-Msg-Id) is what JetStream
// deduplicated on, so it wins; a body that disagrees is logged.
func eventID(ev bus.Event, body string, log *slog.Logger) (string, error) {
	switch {
	case ev.ID == "" && body == "":
		return "", errors.New("no event id (neither message id nor event_id)")
	case ev.ID == "":
		return body, nil
	case body != "" && body != ev.ID:
		log.Warn("event_id differs from message id; using the message id", "event", ev.ID, "body_event_id", body)
	}
	return ev.ID, nil
}

func reject(ev bus.Event, received time.Time, err error) decoded {
	data := ev.Data
	if data == nil {
		data = []byte{}
	}
	return decoded{id: ev.ID, row: Rejected{
		EventID: ev.ID, TS: rowTime(received), Subject: ev.Subject, Data: data,
		Error: err.Error(), NumDelivered: int64(ev.NumDelivered),
	}}
}
