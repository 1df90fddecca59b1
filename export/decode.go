package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
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
	case event.SubjectEvaluation:
		return decodeBody(ev, received, log, evaluationHeader, EvaluationRow)
	case event.SubjectEpisodeStep:
		return decodeBody(ev, received, log, episodeStepHeader, EpisodeStepRow)
	default:
		log.Warn("unknown event subject; skipped", "subject", ev.Subject, "event", ev.ID, "bytes", len(ev.Data))
		return decoded{skip: true}
	}
}

// header is what every event carries, as the sink checks it: its id, its
// time and the key that names what it is about (eval_id, episode_id), which
// must not be empty.
type header struct {
	id           *string
	ts           *time.Time
	key, keyName string
}

func evaluationHeader(e *event.Evaluation) header {
	return header{&e.EventID, &e.Time, e.EvalID, "eval_id"}
}

func episodeStepHeader(e *event.EpisodeStep) header {
	return header{&e.EventID, &e.Time, e.EpisodeID, "episode_id"}
}

// decodeBody is decode for one event type T, whose header head reads,
// turned into its table's row R.
func decodeBody[T, R any](ev bus.Event, received time.Time, log *slog.Logger, head func(*T) header, toRow func(T) R) decoded {
	var e T
	err := unmarshal(ev.Data, &e)
	h := head(&e)
	if err == nil && h.key == "" {
		err = fmt.Errorf("missing %s", h.keyName)
	}
	if err == nil {
		*h.id, err = eventID(ev, *h.id, log)
	}
	if err != nil {
		return reject(ev, received, err)
	}
	if h.ts.IsZero() {
		*h.ts = received
	}
	return decoded{id: *h.id, row: toRow(e)}
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
