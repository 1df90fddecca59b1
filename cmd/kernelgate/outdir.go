package main

import "os"

// canWrite says why no file could be made in dir (made when missing): asked
// before a long run whose result goes there, not after it.
func canWrite(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".kernelgate-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
