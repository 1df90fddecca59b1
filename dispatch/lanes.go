package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// Fair share between API keys. Bulk jobs that require no environment are
// queued on one of Lanes subjects, and a worker's free slot takes from the
// lanes in turn (bus.Queue.Group): while two keys have jobs queued, each
// gets half the slots, however many the other queued first. A key holds a
// lane while it submits (a lease in the lanes bucket, refreshed by its
// batches, free laneLease after its last); with more active keys than
// lanes, or a store that does not answer, a key shares the lane its name
// hashes to, first come first served within it. Requests without a key
// (open loopback) use lane 0. Jobs that require an environment, task
// checks and a search's evaluations (interactive, ahead of all of these)
// have no lanes.

// Lanes is the number of bulk lanes: the keys that get a share of their own.
const Lanes = 4

const (
	lanesBucket = "lanes"
	// laneLease: a lane is free this long after its key's last batch; long
	// enough that a key's queued backlog keeps its lane while it drains.
	laneLease = time.Hour
	// laneRefresh: a key's batch renews its lease when it is older than this.
	laneRefresh = 5 * time.Minute
)

type laneHolder struct {
	Client string    `json:"client"`
	At     time.Time `json:"at"`
}

func laneKey(i int) string { return "lane." + string(rune('0'+i)) }

// homeLane is the lane client hashes to.
func homeLane(client string) int {
	h := fnv.New32a()
	h.Write([]byte(client))
	return int(h.Sum32() % Lanes)
}

// lane is the lane client's bulk jobs go to: the one it holds, else a free
// one it takes, else its home lane.
func (s *Service) lane(ctx context.Context, client string) int {
	if client == "" {
		return 0
	}
	home := homeLane(client)
	bkt, err := s.laneBucket(ctx)
	if err != nil {
		s.log().Warn("the lanes bucket is unavailable; sharing a lane", "err", err)
		return home
	}
	free := -1
	for k := range Lanes {
		i := (home + k) % Lanes
		data, _, ok, err := bkt.Get(ctx, laneKey(i))
		if err != nil {
			s.log().Warn("reading a lane failed; sharing a lane", "err", err)
			return home
		}
		var h laneHolder
		if !ok || json.Unmarshal(data, &h) != nil {
			if free < 0 {
				free = i
			}
			continue
		}
		if h.Client == client {
			if time.Since(h.At) > laneRefresh {
				if data, err := json.Marshal(laneHolder{client, time.Now().UTC()}); err == nil {
					if _, err := bkt.Put(ctx, laneKey(i), data); err != nil {
						s.log().Warn("renewing a lane failed", "lane", i, "err", err)
					}
				}
			}
			return i
		}
	}
	if free < 0 {
		return home
	}
	data, _ := json.Marshal(laneHolder{client, time.Now().UTC()})
	if _, err := bkt.Create(ctx, laneKey(free), data); err != nil {
		if !errors.Is(err, bus.ErrKeyExists) {
			s.log().Warn("taking a lane failed; sharing a lane", "err", err)
		}
		return home // another key took it first
	}
	s.log().Info("an API key took a lane of its own", "client", client, "lane", free)
	return free
}

// laneBucket opens the lanes bucket once.
func (s *Service) laneBucket(ctx context.Context) (*bus.Bucket, error) {
	s.lanesMu.Lock()
	defer s.lanesMu.Unlock()
	if s.lanes == nil {
		b, err := s.Bus.SmallBucket(ctx, lanesBucket, "kernelgate lanes: lane.<i> -> the API key whose bulk jobs it holds (fair share)", laneLease)
		if err != nil {
			return nil, err
		}
		s.lanes = b
	}
	return s.lanes, nil
}
