package gpu

import (
	"errors"
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// realNVML adapts go-nvml to lib.
type realNVML struct{ l nvml.Interface }

// fallbackLibs are tried when the loader's search path has no libnvidia-ml.so.1:
// container images (the H200 image among them) mount the driver's libraries
// under /usr/local/nvidia without registering them with ldconfig.
var fallbackLibs = []string{
	"/usr/local/nvidia/lib64/libnvidia-ml.so.1",
	"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
	"/usr/lib64/libnvidia-ml.so.1",
}

func newNVML() lib {
	l := nvml.New()
	if l.Init() == nvml.ERROR_LIBRARY_NOT_FOUND {
		for _, p := range fallbackLibs {
			if _, err := os.Stat(p); err == nil {
				l = nvml.New(nvml.WithLibraryPath(p))
				break
			}
		}
	} else {
		l.Shutdown() // probed only; Init below is the one that counts
	}
	return realNVML{l: l}
}

func nvmlErr(r nvml.Return) error {
	if r == nvml.SUCCESS {
		return nil
	}
	return errors.New(nvml.ErrorString(r))
}

func (r realNVML) Init() error {
	ret := r.l.Init()
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		// ErrorString would need the library it just failed to load.
		return errors.New("libnvidia-ml.so.1 not found")
	}
	return nvmlErr(ret)
}

func (r realNVML) Shutdown() { r.l.Shutdown() }

func (r realNVML) Driver() (string, error) {
	v, ret := r.l.SystemGetDriverVersion()
	return v, nvmlErr(ret)
}

func (r realNVML) Count() (int, error) {
	n, ret := r.l.DeviceGetCount()
	return n, nvmlErr(ret)
}

func (r realNVML) Device(i int) (Device, error) {
	h, ret := r.l.DeviceGetHandleByIndex(i)
	if err := nvmlErr(ret); err != nil {
		return Device{}, err
	}
	d := Device{Index: i}
	d.Name, _ = h.GetName()
	d.UUID, _ = h.GetUUID()
	if mem, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS {
		d.MemoryTotal = mem.Total
	}
	d.SMClock = func() (int, error) {
		mhz, ret := h.GetClockInfo(nvml.CLOCK_SM)
		return int(mhz), nvmlErr(ret)
	}
	d.Utilization = func() (int, error) {
		u, ret := h.GetUtilizationRates()
		return int(u.Gpu), nvmlErr(ret)
	}
	d.MemoryUsed = func() (uint64, error) {
		mem, ret := h.GetMemoryInfo()
		return mem.Used, nvmlErr(ret)
	}
	return d, nil
}
