package bus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockName is the file in the data directory whose flock says which process
// owns the embedded store. Two processes on one store are two writers on one
// JetStream directory: both start, and a later shutdown finds the store
// drifted (the first-hour issue saw "FileStore usage drift"). The lock dies
// with its process, so a crash never leaves the directory locked.
const lockName = "kernelgate.lock"

// lockDataDir takes dir's lock, or says who holds it.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bus: data directory: %w", err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("bus: data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("bus: data directory %s is in use by another kernelgate process (%s): "+
				"stop it, or give this one another --data", dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("bus: data directory lock: %w", err)
	}
	// Who holds it, for the next one's message (the lock itself is the flock).
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %s, %s, since %s\n", strconv.Itoa(os.Getpid()), strings.Join(os.Args, " "),
			time.Now().UTC().Format(time.RFC3339))
	}
	return f, nil
}
