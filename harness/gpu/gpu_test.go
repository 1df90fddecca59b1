package gpu

import (
	"errors"
	"strings"
	"testing"
)

// fakeLib is a hand-written NVML: n devices, or an init failure.
type fakeLib struct {
	initErr  error
	devs     []Device
	shutdown int
}

func (f *fakeLib) Init() error             { return f.initErr }
func (f *fakeLib) Shutdown()               { f.shutdown++ }
func (f *fakeLib) Driver() (string, error) { return "580.159.04", nil }
func (f *fakeLib) Count() (int, error)     { return len(f.devs), nil }
func (f *fakeLib) Device(i int) (Device, error) {
	if f.devs[i].Name == "broken" {
		return Device{}, errors.New("GPU is lost")
	}
	return f.devs[i], nil
}

func TestDiscoverRealNoPanic(t *testing.T) {
	// On a machine without the NVIDIA library this is the CPU-mode path;
	// with GPUs it must simply succeed. Either way: no panic, no error.
	info, err := Discover()
	if err != nil {
		t.Fatal(err)
	}
	defer info.Close()
	if len(info.Devices) == 0 && info.Reason == "" {
		t.Error("no devices and no reason")
	}
	t.Logf("driver %q, %d devices, reason %q", info.Driver, len(info.Devices), info.Reason)
}

func TestDiscover(t *testing.T) {
	three := []Device{{Index: 0, UUID: "GPU-aaaa"}, {Index: 1, UUID: "GPU-bbbb"}, {Index: 2, UUID: "GPU-cccc"}}
	tests := []struct {
		name      string
		lib       *fakeLib
		visible   *string
		want      []int
		reasonHas string
	}{
		{"no library", &fakeLib{initErr: errors.New("libnvidia-ml.so.1 not found")}, nil, nil, "no NVIDIA driver"},
		{"no GPUs", &fakeLib{}, nil, nil, "no GPUs"},
		{"all visible", &fakeLib{devs: three}, nil, []int{0, 1, 2}, ""},
		{"indices", &fakeLib{devs: three}, ptr("2,0"), []int{2, 0}, ""},
		{"uuid prefix", &fakeLib{devs: three}, ptr("GPU-bb"), []int{1}, ""},
		{"stops at unknown", &fakeLib{devs: three}, ptr("1,7,2"), []int{1}, ""},
		{"empty hides all", &fakeLib{devs: three}, ptr(""), nil, "hides every GPU"},
		{"broken GPU skipped", &fakeLib{devs: []Device{{Index: 0, Name: "broken"}, {Index: 1}}}, nil, []int{1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(string) (string, bool) { return "", false }
			visible := ""
			if tt.visible != nil {
				visible = *tt.visible
				lookup = func(string) (string, bool) { return visible, true }
			}
			info, err := discover(tt.lib, visible, lookup)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, d := range info.Devices {
				got = append(got, d.Index)
			}
			if !equal(got, tt.want) {
				t.Errorf("devices %v, want %v", got, tt.want)
			}
			if !strings.Contains(info.Reason, tt.reasonHas) || (tt.reasonHas == "" && info.Reason != "") {
				t.Errorf("reason %q, want %q", info.Reason, tt.reasonHas)
			}
			info.Close()
			if tt.lib.initErr == nil && tt.lib.shutdown != 1 {
				t.Errorf("Shutdown called %d times", tt.lib.shutdown)
			}
		})
	}
}

type panicLib struct{ *fakeLib }

func (panicLib) Init() error { panic("dlopen exploded") }

func TestDiscoverRecoversPanic(t *testing.T) {
	info, err := discover(panicLib{&fakeLib{}}, "", func(string) (string, bool) { return "", false })
	if err != nil || !strings.Contains(info.Reason, "panicked") || info.Devices == nil {
		t.Errorf("got %+v, %v", info, err)
	}
}

func ptr(s string) *string { return &s }

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
