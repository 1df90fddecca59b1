//go:build soakleak

package main

// A binary built with -tags soakleak leaks on purpose, so that the soak test
// (tests/e2e/test_soak.py) can show that its flat-line checks catch a real leak:
// every request the gateway logs leaks a goroutine, an open file and 1 MiB of
// resident memory. No production build contains this file.
//
// The gateway offers no hook for extra middleware and gains none for a test: the
// leak taps the process's stderr instead, where the gateway's request log goes,
// and leaks once per `msg=request` line.

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

var (
	leakedMemory [][]byte
	leakedFiles  []*os.File
	neverClosed  = make(chan struct{})
)

func init() {
	r, w, err := os.Pipe()
	if err != nil {
		panic("soakleak: " + err.Error())
	}
	realStderr := os.Stderr
	os.Stderr = w // read by main when it wires the logger
	go tap(r, realStderr)
}

// tap copies the log to the real stderr. ReadBytes, not a Scanner: a line past
// a Scanner's limit would stop the copy and then block every log write.
func tap(r io.Reader, out io.Writer) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		out.Write(line)
		if bytes.Contains(line, []byte("msg=request ")) {
			leak()
		}
		if err != nil {
			return
		}
	}
}

func leak() {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i) // touched, so resident and not only reserved
	}
	leakedMemory = append(leakedMemory, b)
	if f, err := os.Open(os.DevNull); err == nil {
		leakedFiles = append(leakedFiles, f) // held, so no finalizer closes it
	}
	go func() { <-neverClosed }()
}
