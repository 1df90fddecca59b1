package harness

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// lineLog is an io.Writer that re-logs a zygote's stdout or stderr line by
// line through slog, truncating long lines, and keeps the last lines so a
// start failure or a death can say what the zygote printed last.
type lineLog struct {
	log   *slog.Logger
	limit int

	mu   sync.Mutex
	buf  []byte
	tail []string
}

const (
	lineLogTail = 20
	// A writer that never sends a newline must not grow buf without bound.
	lineLogMaxPartial = 64 << 10
)

func newLineLog(log *slog.Logger, limit int) *lineLog {
	return &lineLog{log: log, limit: limit}
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > lineLogMaxPartial {
		l.emit(l.buf)
		l.buf = nil
	}
	// Compact so the backing array does not keep every byte ever written.
	l.buf = append([]byte(nil), l.buf...)
	return len(p), nil
}

func (l *lineLog) emit(line []byte) {
	s := strings.TrimRight(string(line), "\r")
	if l.limit > 0 && len(s) > l.limit {
		s = s[:l.limit] + " …[truncated]"
	}
	l.log.Info(s)
	l.tail = append(l.tail, s)
	if len(l.tail) > lineLogTail {
		l.tail = l.tail[len(l.tail)-lineLogTail:]
	}
}

// Tail returns up to n of the last lines, oldest first, joined by newlines.
func (l *lineLog) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tail
	if len(l.buf) > 0 {
		t = append(append([]string(nil), t...), string(l.buf))
	}
	if len(t) > n {
		t = t[len(t)-n:]
	}
	return strings.Join(t, "\n")
}
