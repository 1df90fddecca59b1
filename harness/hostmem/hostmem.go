package hostmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// Memory is what the host allows, and where the figure came from.
type Memory struct {
	Bytes    uint64 // the smaller of MemTotal and the cgroup limit
	MemTotal uint64
	// Cgroup is the cgroup whose memory.max set Bytes ("" when MemTotal did).
	Cgroup string
}

// String says how much and from where, for logs.
func (m Memory) String() string {
	src := "/proc/meminfo MemTotal"
	if m.Cgroup != "" {
		src = "cgroup " + m.Cgroup + " memory.max"
	}
	return fmt.Sprintf("%d MiB (%s)", m.Bytes>>20, src)
}

// Host reads this machine's memory.
func Host() (Memory, error) { return Read(os.DirFS("/")) }

// Read reads MemTotal from proc/meminfo in fsys and lowers it to the
// smallest memory.max on the path of this process's cgroup v2 (from
// proc/self/cgroup) up to the root of sys/fs/cgroup. A memory.max of "max",
// a missing file or an unreadable proc/self/cgroup mean no limit there.
func Read(fsys fs.FS) (Memory, error) {
	data, err := fs.ReadFile(fsys, "proc/meminfo")
	if err != nil {
		return Memory{}, fmt.Errorf("hostmem.Read: %w", err)
	}
	total, err := memTotal(data)
	if err != nil {
		return Memory{}, fmt.Errorf("hostmem.Read: proc/meminfo: %w", err)
	}
	m := Memory{Bytes: total, MemTotal: total}
	for _, dir := range cgroupDirs(fsys) {
		limit, ok, err := memoryMax(fsys, path.Join("sys/fs/cgroup", dir, "memory.max"))
		if err != nil {
			return Memory{}, fmt.Errorf("hostmem.Read: %w", err)
		}
		if ok && limit < m.Bytes {
			m.Bytes, m.Cgroup = limit, dir
		}
	}
	return m, nil
}

// memTotal parses the "MemTotal: N kB" line.
func memTotal(meminfo []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("MemTotal line %q: want N kB", sc.Text())
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || kb == 0 {
			return 0, fmt.Errorf("MemTotal line %q: want a positive number of kB", sc.Text())
		}
		return kb << 10, nil
	}
	return 0, errors.New("no MemTotal line")
}

// cgroupDirs is this process's cgroup v2 path and every parent up to "/",
// relative to the cgroup2 mount; nil when there is no v2 entry.
func cgroupDirs(fsys fs.FS) []string {
	data, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		p, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		p = path.Clean("/" + strings.TrimSpace(p))
		dirs := []string{p}
		for p != "/" {
			p = path.Dir(p)
			dirs = append(dirs, p)
		}
		return dirs
	}
	return nil
}

// memoryMax reads a memory.max file: ok is false for "max" or no file.
func memoryMax(fsys fs.FS, name string) (limit uint64, ok bool, err error) {
	data, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, false, fmt.Errorf("%s: %q is neither max nor a positive number of bytes", name, s)
	}
	return n, true, nil
}
