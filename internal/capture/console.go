package capture

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
)

// Console retention modes.
const (
	ConsoleBounded = "bounded" // head and tail windows in memory (default)
	ConsoleFull    = "full"    // complete streams on disk, emitted as artifacts
)

// Console windows kept in bounded mode, per stream.
const (
	ConsoleHead = 16 << 10
	ConsoleTail = 16 << 10
)

// Console artifact roles, in full mode.
const (
	RoleConsoleStdout = "console-stdout"
	RoleConsoleStderr = "console-stderr"
)

// stream is one console stream of a request, shared by the workload and
// its post commands, which write to it in turn.
type stream struct {
	name string // "stdout" or "stderr"
	mu   sync.Mutex
	file *os.File // full mode
	path string
	head []byte
	tail []byte // ring of ConsoleTail bytes once full
	tpos int    // next write position in tail
	seen int64  // bytes observed
	werr error  // first write error in full mode
	tee  *tee   // nil: none
}

func newStream(name, mode, dir string) (*stream, error) {
	s := &stream{name: name}
	if mode != ConsoleFull {
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: console directory")
	}
	s.path = dir + "/" + name
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: console %s", name)
	}
	s.file = f
	return s, nil
}

// Write keeps what the mode retains. It never fails toward the pipe
// reader, so a full disk cannot block the workload; the error is reported
// when the stream is finished.
func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tee != nil {
		s.tee.write(p)
	}
	s.seen += int64(len(p))
	if s.file != nil {
		if s.werr == nil {
			_, s.werr = s.file.Write(p)
		}
		return len(p), nil
	}
	rest := p
	if n := ConsoleHead - len(s.head); n > 0 {
		n = min(n, len(rest))
		s.head = append(s.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) >= ConsoleTail {
		s.tail = append(s.tail[:0], rest[len(rest)-ConsoleTail:]...)
		s.tpos = 0
		return len(p), nil
	}
	for len(rest) > 0 {
		if len(s.tail) < ConsoleTail {
			n := min(ConsoleTail-len(s.tail), len(rest))
			s.tail = append(s.tail, rest[:n]...)
			rest = rest[n:]
			continue
		}
		n := copy(s.tail[s.tpos:], rest)
		s.tpos = (s.tpos + n) % ConsoleTail
		rest = rest[n:]
	}
	return len(p), nil
}

// bounded reports a bounded stream: its text is the head window, then a
// marker line when bytes were dropped, then the tail window, decoded with
// invalid UTF-8 replaced by U+FFFD. replaced says whether any was: a
// multi-byte character cut by a window's edge counts too.
func (s *stream) bounded() (cs *evidence.ConsoleStream, replaced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tail := append(append([]byte(nil), s.tail[s.tpos:]...), s.tail[:s.tpos]...)
	kept := int64(len(s.head) + len(tail))
	omitted := s.seen - kept
	text := string(s.head)
	if omitted > 0 {
		text += fmt.Sprintf("\n[flameox: %d bytes omitted]\n", omitted)
	}
	text += string(tail)
	replaced = !utf8.ValidString(text)
	return &evidence.ConsoleStream{
		Mode:     ConsoleBounded,
		Observed: s.seen,
		Retained: kept,
		Omitted:  omitted,
		Text:     strings.ToValidUTF8(text, "\uFFFD"),
	}, replaced
}

// finish closes a full stream's file and returns the byte count written.
func (s *stream) finish() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return s.seen, nil
	}
	err := s.werr
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	s.file = nil
	if err != nil {
		return 0, evidence.Wrap(evidence.CodeIOFailure, err, "capture: console %s", s.name)
	}
	return s.seen, nil
}

// tee shows the console as it arrives, shared by both streams; it keeps
// the monitor's progress line from mixing into the workload's text.
type tee struct {
	m      *monitor
	w      io.Writer
	failed bool
}

func (t *tee) write(p []byte) {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	if t.failed || len(p) == 0 {
		return
	}
	if t.m.lineUp {
		_, _ = io.WriteString(t.m.progress, "\r\033[K")
		t.m.lineUp = false
	}
	if _, err := t.w.Write(p); err != nil {
		t.failed = true
		return
	}
	t.m.midLine = p[len(p)-1] != '\n'
}
