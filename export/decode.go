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
		return decodeBody(ev, received, log, EvaluationRow)
	case SubjectEpisodeStep:
		return decodeBody(ev, received, log, EpisodeStepRow)
	default:
		log.Warn("unknown event subject; skipped", "subject", ev.Subject, "event", ev.ID, "bytes", len(ev.Data))
		return decoded{skip: true}
	}
}

// body is what every event type carries: its id, its time and the key that
// names what it is about (eval_id, episode_id), which must not be empty.
type body interface {
	header() (id *string, ts *time.Time, key, keyName string)
}

func (e *EvaluationEvent) header() (*string, *time.Time, string, string) {
	return &e.EventID, &e.Time, e.EvalID, "eval_id"
}

func (e *EpisodeStepEvent) header() (*string, *time.Time, string, string) {
	return &e.EventID, &e.Time, e.EpisodeID, "episode_id"
}

// decodeBody is decode for one event type T, turned into its table's row R.
func decodeBody[T any, R any, P interface {
	*T
	body
}](ev bus.Event, received time.Time, log *slog.Logger, toRow func(T) R) decoded {
	var e T
	err := unmarshal(ev.Data, P(&e))
	id, ts, key, keyName := P(&e).header()
	if err == nil && key == "" {
		err = fmt.Errorf("missing %s", keyName)
	}
	if err == nil {
		*id, err = eventID(ev, *id, log)
	}
	if err != nil {
		return reject(ev, received, err)
	}
	if ts.IsZero() {
		*ts = received
	}
	return decoded{id: *id, row: toRow(e)}
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
