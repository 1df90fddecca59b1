package bus

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string // substring; empty means valid
	}{
		{"embedded", Options{DataDir: "/tmp/x"}, ""},
		{"external", Options{URL: "nats://10.0.0.1:4222"}, ""},
		{"cluster list", Options{URL: "nats://a:4222, nats://b:4222"}, ""},
		{"neither", Options{}, "DataDir is required"},
		{"bad url", Options{URL: "::nope"}, "invalid NATS URL"},
		{"negative queue", Options{DataDir: "d", MaxQueuedJobs: -1}, "MaxQueuedJobs"},
		{"negative deliver", Options{DataDir: "d", MaxDeliver: -2}, "MaxDeliver"},
		{"negative ttl", Options{DataDir: "d", CacheTTL: -time.Second}, "CacheTTL"},
		{"negative result ttl", Options{DataDir: "d", ResultTTL: -time.Second}, "ResultTTL"},
		{"short ackwait", Options{DataDir: "d", JobAckWait: 100 * time.Millisecond}, "at least 1s"},
		{"listen on loopback", Options{DataDir: "d", Listen: "127.0.0.1:0"}, ""},
		{"listen beyond loopback with a token", Options{DataDir: "d", Listen: "0.0.0.0:4222", Token: "t"}, ""},
		{"listen beyond loopback without one", Options{DataDir: "d", Listen: ":4222"}, "needs a token"},
		{"listen on a name", Options{DataDir: "d", Listen: "gateway.example:4222"}, "needs a token"},
		{"listen without a port", Options{DataDir: "d", Listen: "127.0.0.1"}, "want HOST:PORT"},
		{"listen with an external url", Options{URL: "nats://a:4222", Listen: "127.0.0.1:0"}, "embedded server"},
		{"creds without an external url", Options{DataDir: "d", CredsFile: "x.creds"}, "external URL"},
		{"full", Options{DataDir: "d", MaxQueuedJobs: 5, JobAckWait: time.Minute, MaxDeliver: 5, CacheTTL: time.Hour}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{DataDir: "d"}.withDefaults()
	if o.MaxQueuedJobs != 10000 || o.JobAckWait != time.Minute || o.MaxDeliver != 3 || o.CacheTTL != 24*time.Hour || o.ResultTTL != 24*time.Hour {
		t.Fatalf("defaults: %+v", o)
	}
}

func TestOptionsValidateStorage(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{DataDir: "d", MinFree: -1}, "MinFree"},
		{Options{DataDir: "d", Limits: Limits{Events: 100}}, "Limits.Events"},
		{Options{DataDir: "d", Limits: Limits{Store: 1 << 30, Events: 1 << 20}}, ""},
	} {
		err := c.opts.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.opts, err, c.want)
		}
	}
	if o := (Options{DataDir: "d"}).withDefaults(); o.MinFree != DefaultMinFree || o.EventMaxAge != 0 {
		t.Errorf("defaults: MinFree %d, EventMaxAge %s", o.MinFree, o.EventMaxAge)
	}
}
