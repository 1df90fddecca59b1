// Package gpu discovers NVIDIA GPUs through NVML (go-nvml) and reads their
// SM clocks, utilisation and memory in use. No driver, no libnvidia-ml.so.1
// or a failed init is a normal state — kernelgate then runs in CPU mode — and
// is reported as an empty device list plus a reason, never as a panic.
//
// Imported by harness (supervisor), gateway (/v1/gpus, /metrics) and
// cmd/kernelgate (doctor).
package gpu
