package hostmem

import (
	"strings"
	"testing"
	"testing/fstest"
)

const meminfo24G = "MemTotal:       24683656 kB\nMemFree:        21004136 kB\n"

func TestRead(t *testing.T) {
	const total = 24683656 << 10
	tests := []struct {
		name       string
		files      map[string]string
		want       uint64
		wantCgroup string
		wantErr    string
	}{
		{"meminfo alone", map[string]string{"proc/meminfo": meminfo24G}, total, "", ""},
		{"cgroup v1 only: not read", map[string]string{
			"proc/meminfo":     meminfo24G,
			"proc/self/cgroup": "4:memory:/job\n1:cpu:/\n",
			"sys/fs/cgroup/memory/job/memory.limit_in_bytes": "1073741824\n",
		}, total, "", ""},
		{"v2 limit on the process's cgroup", map[string]string{
			"proc/meminfo":                           meminfo24G,
			"proc/self/cgroup":                       "0::/kubepods/pod1\n",
			"sys/fs/cgroup/kubepods/pod1/memory.max": "8589934592\n",
		}, 8 << 30, "/kubepods/pod1", ""},
		{"v2 max everywhere", map[string]string{
			"proc/meminfo":                 meminfo24G,
			"proc/self/cgroup":             "0::/a/b\n",
			"sys/fs/cgroup/a/b/memory.max": "max\n",
			"sys/fs/cgroup/a/memory.max":   "max\n",
		}, total, "", ""},
		{"the smallest ancestor wins", map[string]string{
			"proc/meminfo":                 meminfo24G,
			"proc/self/cgroup":             "0::/a/b\n",
			"sys/fs/cgroup/a/b/memory.max": "max\n",
			"sys/fs/cgroup/a/memory.max":   "4294967296\n",
			"sys/fs/cgroup/memory.max":     "6442450944\n",
		}, 4 << 30, "/a", ""},
		{"a namespaced root (container): 0::/", map[string]string{
			"proc/meminfo":             meminfo24G,
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "2147483648\n",
		}, 2 << 30, "/", ""},
		{"a limit above MemTotal changes nothing", map[string]string{
			"proc/meminfo":             meminfo24G,
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "68719476736\n",
		}, total, "", ""},
		{"hybrid host: v2 line, no memory controller there", map[string]string{
			"proc/meminfo":     meminfo24G,
			"proc/self/cgroup": "4:memory:/job\n0::/\n",
		}, total, "", ""},
		{"no meminfo", map[string]string{}, 0, "", "proc/meminfo"},
		{"no MemTotal", map[string]string{"proc/meminfo": "MemFree: 1 kB\n"}, 0, "", "no MemTotal"},
		{"MemTotal in pages", map[string]string{"proc/meminfo": "MemTotal: 12 pages\n"}, 0, "", "want N kB"},
		{"garbage memory.max", map[string]string{
			"proc/meminfo":             meminfo24G,
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "lots\n",
		}, 0, "", "neither max nor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			m, err := Read(fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Read() = %+v, %v; want an error containing %q", m, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Bytes != tt.want || m.Cgroup != tt.wantCgroup || m.MemTotal != total {
				t.Errorf("Read() = %+v, want %d bytes from cgroup %q (MemTotal %d)", m, tt.want, tt.wantCgroup, uint64(total))
			}
		})
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		m    Memory
		want string
	}{
		{Memory{Bytes: 24 << 30, MemTotal: 24 << 30}, "24576 MiB (/proc/meminfo MemTotal)"},
		{Memory{Bytes: 2 << 30, MemTotal: 24 << 30, Cgroup: "/"}, "2048 MiB (cgroup / memory.max)"},
	} {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.m, got, tt.want)
		}
	}
}

// This machine's own figures are sane: positive and at most MemTotal.
func TestHost(t *testing.T) {
	m, err := Host()
	if err != nil {
		t.Skipf("no /proc/meminfo here: %v", err)
	}
	if m.Bytes == 0 || m.Bytes > m.MemTotal {
		t.Errorf("Host() = %+v", m)
	}
}
