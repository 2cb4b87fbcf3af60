package perfscript

import (
	"bytes"
	"errors"
)

// The line splitters below are shared by the parser and the sniffer, so
// detection and decoding cannot disagree about what a line is.

// header is an event header line:
//
//	comm pid[/tid] [cpu] [time:] [period] event: [ip sym (dso) | event fields]
//
// comm may contain spaces and is padded by perf; the pid token is found
// by the shape of what follows it, not by column.
type header struct {
	comm  []byte
	tid   []byte // the native "pid/tid" or "tid" token
	event []byte
	tail  []byte // what follows the event: an inline frame without callchains, or tracepoint fields
	// pidEnd is where the pid token ends: a line starting with the same
	// bytes up to here has the same comm and pid split.
	pidEnd int
}

var (
	isHex, isTimeField [256]bool
	hexVal             [256]int8
)

func init() {
	for i := range hexVal {
		hexVal[i] = -1
	}
	for i, c := range []byte("0123456789abcdef") {
		hexVal[c] = int8(i)
	}
	for i, c := range []byte("ABCDEF") {
		hexVal[c] = int8(10 + i)
	}
	for _, c := range []byte("0123456789.:[] \t") {
		isTimeField[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		isHex[c] = true
	}
	for c := 'a'; c <= 'f'; c++ {
		isHex[c] = true
		isHex[c-'a'+'A'] = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// timeFields reports whether b holds only what may stand between a
// header's pid and its event: [cpu], time and period.
func timeFields(b []byte) bool {
	for _, c := range b {
		if !isTimeField[c] {
			return false
		}
	}
	return true
}

// nextTok returns the bounds of the next space-separated token at or after
// pos, or s < 0 when there is none.
func nextTok(b []byte, pos int) (s, e int) {
	for pos < len(b) && isSpace(b[pos]) {
		pos++
	}
	if pos == len(b) {
		return -1, -1
	}
	e = pos
	for e < len(b) && !isSpace(b[e]) {
		e++
	}
	return pos, e
}

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPid matches "123", "123/456" and perf's "-1" for an unknown id.
func isPid(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if i := bytes.IndexByte(b, '/'); i >= 0 {
		tid := b[i+1:]
		if len(tid) > 0 && tid[0] == '-' {
			tid = tid[1:]
		}
		return allDigits(b[:i]) && allDigits(tid)
	}
	return allDigits(b)
}

// isCPU matches "[001]".
func isCPU(b []byte) bool {
	return len(b) >= 3 && b[0] == '[' && b[len(b)-1] == ']' && allDigits(b[1:len(b)-1])
}

// isTime matches "740.711076:".
func isTime(b []byte) bool {
	if len(b) < 2 || b[len(b)-1] != ':' {
		return false
	}
	b = b[:len(b)-1]
	dot := bytes.IndexByte(b, '.')
	if dot < 0 {
		return allDigits(b)
	}
	return allDigits(b[:dot]) && allDigits(b[dot+1:])
}

// parseHeader splits an event header line. ok is false when the line does
// not have a header's shape.
func parseHeader(ln []byte) (h header, ok bool) {
	for pos := 0; ; {
		s, e := nextTok(ln, pos)
		if s < 0 {
			return header{}, false
		}
		pos = e
		if s == 0 || !isPid(ln[s:e]) {
			continue
		}
		comm := bytes.TrimSpace(ln[:s])
		if len(comm) == 0 {
			continue
		}
		if h, ok := matchAfterPid(ln, e); ok {
			h.comm, h.tid, h.pidEnd = comm, ln[s:e], e
			return h, true
		}
	}
}

func matchAfterPid(ln []byte, pos int) (header, bool) {
	s, e := nextTok(ln, pos)
	if s >= 0 && isCPU(ln[s:e]) {
		s, e = nextTok(ln, e)
	}
	if s >= 0 && isTime(ln[s:e]) {
		s, e = nextTok(ln, e)
	}
	if s >= 0 && allDigits(ln[s:e]) {
		s, e = nextTok(ln, e)
	}
	if s < 0 || e-s < 2 || ln[e-1] != ':' || isTime(ln[s:e]) {
		return header{}, false
	}
	return header{event: ln[s : e-1], tail: bytes.TrimSpace(ln[e:])}, true
}

// frameText returns a frame line's text after its indentation and address:
// "sym+0x1c (dso)". A line without an address keeps its first token.
func frameText(ln []byte) []byte {
	t, _, _ := frameAddr(ln)
	return t
}

// frameAddr is frameText that also returns the address it skipped.
func frameAddr(ln []byte) (text []byte, addr uint64, ok bool) {
	i := 0
	for i < len(ln) && isSpace(ln[i]) {
		i++
	}
	j := i
	for ; j < len(ln); j++ {
		v := hexVal[ln[j]]
		if v < 0 {
			break
		}
		addr = addr<<4 | uint64(v)
	}
	if j > i && j-i <= 16 && j < len(ln) && ln[j] == ' ' {
		return ln[j+1:], addr, true
	}
	return ln[i:], 0, false
}

var (
	errUnbalanced = errors.New("unbalanced parentheses around the module")
	errEmptyFrame = errors.New("empty frame")
	errNotUTF8    = errors.New("the symbol or module is not valid UTF-8")
)

// splitFrame splits frame text into the complete symbol text (offset
// removed) and the module, taken from the last parenthesised group so
// that symbols with spaces, parentheses and templates stay whole.
func splitFrame(t []byte) (sym, module []byte, err error) {
	t = bytes.TrimRight(t, " \t\r")
	if len(t) == 0 {
		return nil, nil, errEmptyFrame
	}
	sym = t
	if t[len(t)-1] == ')' {
		depth := 0
		open := -1
		for i := len(t) - 1; i >= 0; i-- {
			switch t[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				open = i
				break
			}
		}
		if open < 0 {
			return nil, nil, errUnbalanced
		}
		// A group glued to the symbol ("f(int)") is its signature, not a module.
		if open == 0 || t[open-1] == ' ' {
			module = t[open+1 : len(t)-1]
			sym = bytes.TrimRight(t[:open], " ")
		}
	}
	return trimOffset(sym), module, nil
}

// trimOffset removes perf's "+0x1c" symbol offset.
func trimOffset(sym []byte) []byte {
	i := bytes.LastIndex(sym, []byte("+0x"))
	if i <= 0 || i+3 == len(sym) {
		return sym
	}
	for _, c := range sym[i+3:] {
		if !isHex[c] {
			return sym
		}
	}
	return sym[:i]
}

// isFrameLine reports whether a line is a callchain entry: indented with
// a tab as perf prints them, or with spaces and not a (comm-padded) header.
func isFrameLine(ln []byte) bool {
	if len(ln) == 0 {
		return false
	}
	switch ln[0] {
	case '\t':
		return true
	case ' ':
		_, hdr := parseHeader(ln)
		return !hdr
	}
	return false
}

// startsRecord reports whether a complete line (a header, comment or
// blank line) can begin a block: the block reader's boundary.
func startsRecord(ln []byte) bool {
	return len(bytes.TrimSpace(ln)) == 0 || !isFrameLine(ln)
}

// inlineFrame reports whether a header's tail is an "ip sym (dso)" frame
// (samples recorded without callchains) rather than event fields.
func inlineFrame(tail []byte) ([]byte, bool) {
	s, e := nextTok(tail, 0)
	if s < 0 || tail[len(tail)-1] != ')' {
		return nil, false
	}
	for _, c := range tail[s:e] {
		if !isHex[c] {
			return nil, false
		}
	}
	return frameText(tail), true
}
