package gpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Device is one GPU as NVML sees it.
type Device struct {
	Index       int    `json:"index"` // NVML index (PCI bus order)
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	MemoryTotal uint64 `json:"memory_total_bytes"`
	// SMClock reads the current SM clock in MHz; nil when unavailable.
	SMClock func() (int, error) `json:"-"`
	// Utilization reads the share of the last sample period (NVML: 1/6 s to
	// 1 s) in which a kernel ran, in percent; nil when unavailable.
	Utilization func() (int, error) `json:"-"`
	// MemoryUsed reads the device memory in use, in bytes; nil when unavailable.
	MemoryUsed func() (uint64, error) `json:"-"`
}

// Info is the result of discovery.
type Info struct {
	Driver  string   `json:"driver,omitempty"`
	Devices []Device `json:"devices"`
	// Reason says why Devices is empty ("" when it is not).
	Reason string `json:"reason,omitempty"`

	close func()
}

// Close releases NVML; SMClock functions must not be called afterwards.
func (i *Info) Close() {
	if i.close != nil {
		i.close()
		i.close = nil
	}
}

// Discover lists the GPUs visible to this process, honouring
// CUDA_VISIBLE_DEVICES when it is set.
func Discover() (Info, error) {
	return discover(newNVML(), os.Getenv("CUDA_VISIBLE_DEVICES"), os.LookupEnv)
}

// lib is the part of NVML discovery needs; tests provide a fake.
type lib interface {
	Init() error
	Shutdown()
	Driver() (string, error)
	Count() (int, error)
	Device(i int) (Device, error)
}

func discover(l lib, visible string, lookup func(string) (string, bool)) (info Info, err error) {
	// go-nvml dlopens libnvidia-ml.so.1; a broken install must not take the
	// process down, so a panic anywhere in here becomes a reason.
	defer func() {
		if r := recover(); r != nil {
			info, err = Info{Devices: []Device{}, Reason: fmt.Sprintf("NVML panicked: %v", r)}, nil
		}
	}()
	info.Devices = []Device{}
	if err := l.Init(); err != nil {
		info.Reason = fmt.Sprintf("no NVIDIA driver: %v", err)
		return info, nil
	}
	info.close = l.Shutdown
	if d, err := l.Driver(); err == nil {
		info.Driver = d
	}
	n, err := l.Count()
	if err != nil {
		info.Reason = fmt.Sprintf("NVML device count: %v", err)
		return info, nil
	}
	var all []Device
	for i := 0; i < n; i++ {
		d, err := l.Device(i)
		if err != nil {
			continue // one broken GPU (fallen off the bus) must not hide the others
		}
		all = append(all, d)
	}
	_, set := lookup("CUDA_VISIBLE_DEVICES")
	info.Devices = filterVisible(all, visible, set)
	switch {
	case len(info.Devices) > 0:
	case n == 0:
		info.Reason = "NVML reports no GPUs"
	case set:
		info.Reason = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU", visible)
	default:
		info.Reason = "no GPU could be queried through NVML"
	}
	return info, nil
}

// filterVisible keeps the devices CUDA_VISIBLE_DEVICES names, in its order.
// Entries are NVML indices or UUIDs (or UUID prefixes, as CUDA accepts);
// like CUDA, parsing stops at the first entry that matches nothing.
func filterVisible(all []Device, visible string, set bool) []Device {
	if !set {
		if all == nil {
			return []Device{}
		}
		return all
	}
	out := []Device{}
	seen := map[int]bool{}
	for _, tok := range strings.Split(visible, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			break
		}
		d, ok := findDevice(all, tok)
		if !ok || seen[d.Index] {
			break
		}
		seen[d.Index] = true
		out = append(out, d)
	}
	return out
}

func findDevice(all []Device, tok string) (Device, bool) {
	if n, err := strconv.Atoi(tok); err == nil {
		for _, d := range all {
			if d.Index == n {
				return d, true
			}
		}
		return Device{}, false
	}
	for _, d := range all {
		if d.UUID != "" && strings.HasPrefix(d.UUID, tok) {
			return d, true
		}
	}
	return Device{}, false
}
