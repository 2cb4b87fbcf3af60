package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// nestedFrame is a container that skipFast opened: it lives only while
// skipFast runs (closed inside it, or dropped when it fails), so it needs
// no key copies, only where its keys start in nkeys.
type nestedFrame struct {
	object bool
	keys   int // index in Scanner.nkeys of its first key
}

// keyRef is a key of a nested container: its place in the buffer, which
// does not move while skipFast runs, and its edges.
type keyRef struct {
	fp         uint64
	start, end int
}

// skipFast consumes the rest of the container whose frame is
// s.stack[depth] when all of it is in the buffer and it is plain: strings
// of printable ASCII without escapes, numbers and literals, within the
// bounds. It makes no tokens, and checks what Next checks (grammar,
// duplicate keys, depth, token size). Anything else (an escape, non-ASCII
// text, the buffer's end, an error, a nested object of more than
// smallObject keys) undoes what it did and reports skipFailed, and Next
// reads the container again, with its own errors.
//
// The container may be part read (a member's value consumed). With stop
// set, a key of the container itself that stop accepts ends the skip
// after its ':' (skipStopped, with the key, valid as Next's keys are), so
// a walker skips the members it does not want without their tokens.
//
// Containers opened inside it are not pushed on s.stack: they are
// nestedFrames, whose keys are checked for duplicates in place, as
// (offset, fingerprint) pairs, since no read moves the buffer meanwhile.
// Where the grammar stands is where the code is (the labels below), not
// a state tested per byte; only the top frame's state is kept, for Next.
func (s *Scanner) skipFast(depth int, stop func(key []byte) bool) ([]byte, skipResult) {
	top := s.stack[depth]
	if top.keySet != nil {
		return nil, skipFailed
	}
	// Few locals: at each label every live one is moved into place, so
	// what is seldom used (the bounds, the nested frames, the line) is
	// read from s where it is needed.
	b := s.buf[:s.end]
	pos := s.pos
	line0 := s.line      // restored on failure
	f := &s.stack[depth] // s.stack does not grow here, so f stays valid
	s.nested, s.nkeys = s.nested[:0], s.nkeys[:0]
	object := f.object // the innermost open container is an object
	var (
		c   byte
		i   int
		key []byte
	)
	switch {
	case f.afterItem:
		goto after
	case f.object && f.wantKey && f.count == 0:
		goto keyOrClose
	case f.object && f.wantKey:
		goto key
	case !f.object && f.count == 0:
		goto valueOrClose
	}
	goto value

keyOrClose: // just after '{'
	if pos < len(b) && b[pos] <= ' ' {
		pos, s.line = skipSpaces(b, pos, s.line)
	}
	if pos < len(b) && b[pos] == '}' {
		goto close
	}
key: // a key must follow
	if pos < len(b) && b[pos] <= ' ' {
		pos, s.line = skipSpaces(b, pos, s.line)
	}
	if pos >= len(b) || b[pos] != '"' {
		goto fail
	}
	// The first eight bytes are tested here, not in a call: most keys
	// and values are short.
	if i = pos + 1; i+8 <= len(b) {
		if m := plainMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			if i += bits.TrailingZeros64(m) >> 3; b[i] != '"' {
				goto fail
			}
		} else {
			i = plainEnd(b, i+8)
		}
	} else {
		i = plainEnd(b, i)
	}
	if i < 0 || i-(pos+1) > s.maxToken() {
		goto fail
	}
	key = b[pos+1 : i]
	if s.CheckDuplicates {
		if len(s.nested) == 0 {
			if f.addKey(key, s.rerr != nil) != nil {
				goto fail
			}
		} else {
			first := s.nested[len(s.nested)-1].keys
			if len(s.nkeys)-first >= smallObject {
				goto fail // Next checks large objects with a hash set
			}
			fp := edges(key)
			for _, k := range s.nkeys[first:] {
				if k.fp == fp && bytes.Equal(b[k.start:k.end], key) {
					goto fail
				}
			}
			s.nkeys = append(s.nkeys, keyRef{fp: fp, start: pos + 1, end: i})
		}
	}
	pos = i + 1
	if pos < len(b) && b[pos] <= ' ' {
		pos, s.line = skipSpaces(b, pos, s.line)
	}
	if pos >= len(b) || b[pos] != ':' {
		goto fail
	}
	pos++
	if stop != nil && len(s.nested) == 0 && stop(key) {
		f.wantKey, f.afterItem = false, false
		s.pos = pos
		if s.rerr == nil { // the buffer may still move: as readKey
			s.key = append(s.key[:0], key...)
			key = s.key
		}
		return key, skipStopped
	}
	goto value

valueOrClose: // just after '['
	if pos < len(b) && b[pos] <= ' ' {
		pos, s.line = skipSpaces(b, pos, s.line)
	}
	if pos < len(b) && b[pos] == ']' {
		goto close
	}
value: // a value must follow
	if pos < len(b) && b[pos] <= ' ' {
		pos, s.line = skipSpaces(b, pos, s.line)
	}
	if pos >= len(b) {
		goto fail
	}
	switch c = b[pos]; {
	case c == '"':
		// The first eight bytes are tested here, not in a call: most keys
		// and values are short.
		if i = pos + 1; i+8 <= len(b) {
			if m := plainMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				if i += bits.TrailingZeros64(m) >> 3; b[i] != '"' {
					goto fail
				}
			} else {
				i = plainEnd(b, i+8)
			}
		} else {
			i = plainEnd(b, i)
		}
		if i < 0 || i-(pos+1) > s.maxToken() {
			goto fail
		}
		pos = i + 1
	case c == '-' || c-'0' <= 9:
		i = numberEnd(b, pos)
		if i < 0 || (i == len(b) && s.rerr == nil) || i-pos > s.maxToken() {
			goto fail
		}
		pos = i
	case c == '{' || c == '[':
		if depth+1+len(s.nested) >= s.depthBound() {
			goto fail
		}
		object = c == '{'
		s.nested = append(s.nested, nestedFrame{object: object, keys: len(s.nkeys)})
		pos++
		if object {
			goto keyOrClose
		}
		goto valueOrClose
	case c == 't' || c == 'f' || c == 'n':
		word := "null"
		if c == 't' {
			word = "true"
		} else if c == 'f' {
			word = "false"
		}
		if len(b)-pos < len(word) || string(b[pos:pos+len(word)]) != word {
			goto fail
		}
		pos += len(word)
	default:
		goto fail
	}
	// A value is complete.
	if len(s.nested) == 0 {
		f.count++
	}
after: // a ',' or the container's close must follow
	if pos < len(b) && b[pos] <= ' ' {
		pos, s.line = skipSpaces(b, pos, s.line)
	}
	if pos >= len(b) {
		goto fail
	}
	switch c = b[pos]; {
	case c == ',':
		pos++
		if object {
			goto key
		}
		goto value
	case c == '}' && object, c == ']' && !object:
		goto close
	}
	goto fail

close: // b[pos] closes the innermost container
	pos++
	if len(s.nested) == 0 {
		s.stack = s.stack[:depth]
		s.pos = pos
		s.valueDone()
		return nil, skipClosed
	}
	s.nkeys = s.nkeys[:s.nested[len(s.nested)-1].keys]
	s.nested = s.nested[:len(s.nested)-1]
	if len(s.nested) == 0 {
		object = f.object
		f.count++
	} else {
		object = s.nested[len(s.nested)-1].object
	}
	goto after

fail:
	if top.spare != nil {
		clear(top.spare) // it may have served as the key set meanwhile
	}
	s.stack[depth] = top
	s.line = line0
	return nil, skipFailed
}

// plainEnd returns the index of the quote that closes a string whose text
// starts at b[i], or -1 when a byte before it is not plain (see
// plainText) or the quote is not in b. It tests eight bytes at a time.
func plainEnd(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte with its high bit set, below 0x20, a backslash or a
		// quote sets its high bit; a borrow can only set bits of bytes
		// after such a byte, so the first bit set is exact.
		if m := plainMask(w); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if b[i] == '"' {
				return i
			}
			return -1
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i
		case c < 0x20 || c >= 0x80 || c == '\\':
			return -1
		}
	}
	return -1
}

// depthBound is the nesting bound, MaxDepth or its default.
func (s *Scanner) depthBound() int {
	if s.MaxDepth > 0 {
		return s.MaxDepth
	}
	return 512
}

// skipSpaces returns the index past the JSON spaces that start at
// b[pos], with line advanced past their newlines. skipFast calls it only
// where a byte is at most ' ', so the common case (no space) costs one
// test there, not a loop.
func skipSpaces(b []byte, pos, line int) (int, int) {
	for pos < len(b) && space[b[pos]] {
		if b[pos] == '\n' {
			line++
		}
		pos++
	}
	return pos, line
}

// edges packs a key's length with its first and last bytes: cheaper
// than fingerprint, and enough to tell apart the few keys of the small
// objects skipFast checks.
func edges(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(len(b)) | uint64(b[0])<<48 | uint64(b[len(b)-1])<<56
}

// plainMask sets the high bit of each byte of w (eight bytes of a
// string, little-endian) that is not plain or is a quote; see plainEnd.
func plainMask(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	return (w | (w - 0x20*lo) | ((w ^ 0x5C*lo) - lo) | ((w ^ 0x22*lo) - lo)) & hi
}

// digitEnd returns the index past the ASCII digits that start at b[i],
// eight bytes at a time.
func digitEnd(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte above '9' (+0x46 carries into its high bit), below '0'
		// (the subtraction borrows) or non-ASCII sets its high bit; as in
		// plainEnd, only bytes after the first such byte can be wrong.
		m := (w | (w + 0x4646464646464646) | (w - 0x3030303030303030)) & 0x8080808080808080
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	return i
}

// numberEnd returns the index past the JSON number that starts at b[i],
// or -1 when the bytes there that could be a number's (numberByte) are
// not one. It is the grammar of validNumber read greedily, which ends
// where the run of number bytes ends exactly when that run is valid.
func numberEnd(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i]-'1' <= 8:
		i = digitEnd(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digitEnd(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitEnd(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	if i < len(b) && numberByte[b[i]] {
		return -1
	}
	return i
}

// scalar reads the next token, as Next would, when it is a string or a
// number in a container, plain (see skipFast) and whole in the buffer,
// or the start of a container, with no space before it: the values
// Walker reads most, without Next's dispatch. It reports false, having
// changed nothing, for anything else.
func (s *Scanner) scalar() (Token, bool) {
	n := len(s.stack)
	if n == 0 || s.pos >= s.end {
		return Token{}, false
	}
	f := &s.stack[n-1]
	if f.afterItem || f.object && f.wantKey {
		return Token{}, false
	}
	b := s.buf[:s.end]
	start := s.pos
	var tok Token
	switch c := b[start]; {
	case c == '"':
		j := plainEnd(b, start+1)
		if j < 0 || j-(start+1) > s.maxToken() {
			return Token{}, false
		}
		tok = Token{Kind: String, Bytes: b[start+1 : j], Offset: s.Offset()}
		s.pos = j + 1
	case c == '-' || c-'0' <= 9:
		i := numberEnd(b, start)
		// A number at the buffer's end may go on in the next read; one
		// beyond MaxToken is Next's to judge.
		if i < 0 || i == len(b) && s.rerr == nil || i-start > s.maxToken() {
			return Token{}, false
		}
		tok = Token{Kind: Number, Bytes: b[start:i], Offset: s.Offset()}
		s.pos = i
	case c == '{' || c == '[':
		// A container opens as readValue opens it; at the depth bound,
		// Next makes the error.
		if n >= s.depthBound() {
			return Token{}, false
		}
		tok = Token{Kind: ArrayStart, Offset: s.Offset()}
		if c == '{' {
			tok.Kind = ObjectStart
		}
		s.push(c == '{') // within the bound: no error
		s.pos++
		return tok, true
	default:
		return Token{}, false
	}
	f.afterItem = true
	f.count++
	return tok, true
}

// member reads the next member's key of the innermost object, as Next
// would, when it is plain and whole in the buffer, with no space around
// it: after the object's '{' or a ',' (a comma just after a value is read
// here too), a quoted key, then ':'. It reports end for the object's
// close, read as Next reads it. ok is false, nothing changed, for
// anything else (spaces, escapes, a duplicate key, the buffer's end),
// which Next reads with its own errors.
func (s *Scanner) member() (key []byte, end, ok bool) {
	n := len(s.stack)
	if n == 0 {
		return nil, false, false
	}
	f := &s.stack[n-1]
	if !f.object {
		return nil, false, false
	}
	b := s.buf[:s.end]
	p := s.pos
	if p >= len(b) {
		return nil, false, false
	}
	switch {
	case f.afterItem && b[p] == ',':
		p++
	case f.afterItem && b[p] == '}', f.wantKey && f.count == 0 && b[p] == '}':
		s.closeContainer()
		return nil, true, true
	case f.afterItem || !f.wantKey:
		return nil, false, false
	}
	if p >= len(b) || b[p] != '"' {
		return nil, false, false
	}
	j := plainEnd(b, p+1)
	if j < 0 || j-(p+1) > s.maxToken() || j+1 >= len(b) || b[j+1] != ':' {
		return nil, false, false
	}
	key = b[p+1 : j]
	if s.rerr == nil { // the buffer may still move: as readKey
		s.key = append(s.key[:0], key...)
		key = s.key
	}
	if s.CheckDuplicates && f.addKey(key, s.rerr != nil) != nil {
		return nil, false, false // addKey changed nothing; Next reports it
	}
	f.afterItem, f.wantKey = false, false
	s.pos = j + 2
	return key, false, true
}
