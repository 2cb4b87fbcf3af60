// Package jsonscan is a streaming JSON tokenizer for native artifacts.
//
// It reads from an io.Reader through a fixed buffer, so memory does not grow
// with the size of the document, and it is strict where decoders of evidence
// must be: object keys are read literally, a repeated key in one object is an
// error, text must be valid UTF-8 (escaped lone surrogates included), and
// nesting is bounded. Every error carries the byte offset and line.
//
// Decoders walk documents with Walker (walk.go) and build the parts they
// keep whole with Scanner.Value (value.go); nothing else turns JSON
// tokens into values.
//
// It imports nothing of flameox (evidence builds on it).
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of a token.
type Kind uint8

const (
	Invalid Kind = iota
	ObjectStart
	ObjectEnd
	ArrayStart
	ArrayEnd
	String
	Number
	True
	False
	Null
	EOF
)

var kindNames = [...]string{"invalid", "{", "}", "[", "]", "string", "number", "true", "false", "null", "end of input"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one lexical token. Bytes holds the unescaped text of a string or
// the literal of a number; it is only valid until the next call to Next.
type Token struct {
	Kind   Kind
	Bytes  []byte
	IsKey  bool  // the string is an object key
	Offset int64 // byte offset of the token's first byte
}

// Error is a syntax or structure error with its position. Line is 0 when
// the scanner did not start at the document's first byte (NewAt).
type Error struct {
	Offset int64
	Line   int
	Msg    string
	Err    error
	// Bound is the value of the bound crossed (bytes for ErrTokenTooLong,
	// levels for ErrDepth); 0 for other errors.
	Bound int64
	read  bool // the reader failed; Err is its error
}

// TokenLimit names the token bound (MaxToken) where a crossed bound is
// reported as a parser limit.
const TokenLimit = "max_token_bytes"

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("json: %s at byte %d", e.Msg, e.Offset)
	}
	return fmt.Sprintf("json: %s at line %d, byte %d", e.Msg, e.Line, e.Offset)
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes a failed read match ErrRead, so a decoder can tell a broken
// file from a malformed one without knowing the reader's errors.
func (e *Error) Is(target error) bool { return target == ErrRead && e.read }

var (
	// ErrDuplicateKey reports an object with a repeated key.
	ErrDuplicateKey = errors.New("duplicate object key")
	// ErrInvalidUTF8 reports text that is not valid Unicode.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrDepth reports nesting beyond the configured bound.
	ErrDepth = errors.New("nesting too deep")
	// ErrTokenTooLong reports a string or number beyond Scanner.MaxToken.
	ErrTokenTooLong = errors.New("token too long")
	// ErrTrailing reports data after the top-level value.
	ErrTrailing = errors.New("data after top-level value")
	// ErrRead matches an error of the underlying reader (the error itself
	// stays in the chain).
	ErrRead = errors.New("read failed")
)

type frame struct {
	cstate
	// The keys of the object, for duplicate checks. A key in a buffer
	// that no longer moves (an in-memory document) is kept where it is;
	// another is copied into keys, end to end (earlier keys stay valid:
	// bytes are only appended). Both are reused by the next container
	// at the same depth, so checking allocates nothing.
	keyList [][]byte
	keys    []byte
	// keyFPs holds a cheap fingerprint of each key (length and edge
	// bytes), so a new key is compared byte for byte only with the keys
	// it may equal: records with 20-odd keys check duplicates without
	// hashing.
	keyFPs []uint64
	// seen has one bit set per key fingerprint (a 256-bit Bloom filter):
	// a key whose bit is clear is new without looking at the others, so
	// a 30-key object costs one test per key, not a scan of its keys.
	seen   [4]uint64
	keySet map[uint64]struct{} // the key hashes of a large object
	spare  map[uint64]struct{} // a cleared key set left by an earlier container at this depth
}

// cstate is where a container's grammar stands.
type cstate struct {
	object    bool
	wantKey   bool // object: next token is a key (or end)
	afterItem bool // a value was read: a comma or close must follow
	count     int  // members or elements seen
}

// Scanner tokenizes one JSON value from a reader.
type Scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	base     int64 // offset of buf[0] in the stream
	line     int
	rerr     error
	stack    []frame
	done     bool
	scratch  []byte
	MaxDepth int // 0 means 512
	// CheckDuplicates makes a repeated key in one object an error.
	CheckDuplicates bool
	// AllowTrailing accepts more data after the top-level value (JSONL).
	AllowTrailing bool
	// AllowNonFinite accepts the NaN, Infinity and -Infinity that Python's
	// json module writes by default (SGLang's unbounded request rate,
	// Triton's failed timings), as Number tokens whose Bytes are the word.
	// FloatOf and Integer still refuse them: a caller that knows a field
	// may hold one reads the token's bytes. Off, they are invalid JSON.
	AllowNonFinite bool
	// MaxToken bounds the bytes of one string or number; 0 means 64 MiB.
	MaxToken int
	// Bound, when set, makes the error for a crossed bound: err is
	// ErrTokenTooLong (MaxToken) or ErrDepth (MaxDepth), offset where the
	// token or container starts. Decoders return their limit failure from
	// it; a nil result keeps the scanner's own *Error.
	Bound func(err error, offset int64) error
	// key holds the last key, copied out of buf before more input is read.
	key []byte
	// noLines: the scanner started inside a document, so its line count
	// means nothing and errors leave Line 0.
	noLines bool
	// skipFast's memory of the containers it opens and their keys, kept
	// between calls so that skipping allocates nothing.
	nested []nestedFrame
	nkeys  []keyRef
}

// New returns a scanner that checks duplicate keys.
func New(r io.Reader) *Scanner {
	return &Scanner{r: r, buf: make([]byte, 64<<10), line: 1, CheckDuplicates: true}
}

// NewBytes returns a scanner over an in-memory document.
func NewBytes(b []byte) *Scanner {
	return &Scanner{buf: b, end: len(b), line: 1, rerr: io.EOF, CheckDuplicates: true}
}

// Reset makes s a scanner over the in-memory document b, as NewBytes
// does, keeping its settings (bounds, hooks, duplicate checks) and the
// memory of its container stack: for decoders that scan many small
// documents, one per line.
func (s *Scanner) Reset(b []byte) {
	*s = Scanner{buf: b, end: len(b), line: 1, rerr: io.EOF, stack: s.stack[:0], scratch: s.scratch[:0], key: s.key[:0], nested: s.nested[:0], nkeys: s.nkeys[:0],
		MaxDepth: s.MaxDepth, CheckDuplicates: s.CheckDuplicates, AllowTrailing: s.AllowTrailing, AllowNonFinite: s.AllowNonFinite,
		MaxToken: s.MaxToken, Bound: s.Bound}
}

// NewAt returns a scanner for a value that starts offset bytes into a
// document, read from r (a section of the file, for decoders that come
// back to a part of it): offsets in tokens and errors count from the
// document's start, and lines are unknown (0).
func NewAt(r io.Reader, offset int64) *Scanner {
	s := New(r)
	s.base, s.noLines = offset, true
	return s
}

// Offset is the stream offset of the next unread byte.
func (s *Scanner) Offset() int64 { return s.base + int64(s.pos) }

// Line is the current line number (1-based), 0 for a scanner from NewAt.
func (s *Scanner) Line() int {
	if s.noLines {
		return 0
	}
	return s.line
}

// Depth is the number of open containers.
func (s *Scanner) Depth() int { return len(s.stack) }

func (s *Scanner) errorf(off int64, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		msg = msg + ": " + err.Error()
	}
	return &Error{Offset: off, Line: s.Line(), Msg: msg, Err: err}
}

// boundf is errorf for a crossed bound, through the Bound hook.
func (s *Scanner) boundf(off int64, err error, bound int64, format string, args ...any) error {
	if s.Bound != nil {
		if e := s.Bound(err, off); e != nil {
			return e
		}
	}
	e := s.errorf(off, err, format, args...).(*Error)
	e.Bound = bound
	return e
}

// fill makes at least n bytes available from pos, if the input has them.
func (s *Scanner) fill(n int) bool {
	for s.end-s.pos < n {
		if s.rerr != nil {
			return false
		}
		if s.pos > 0 {
			copy(s.buf, s.buf[s.pos:s.end])
			s.base += int64(s.pos)
			s.end -= s.pos
			s.pos = 0
		}
		if s.end == len(s.buf) {
			nb := make([]byte, 2*len(s.buf))
			copy(nb, s.buf[:s.end])
			s.buf = nb
		}
		m, err := s.r.Read(s.buf[s.end:])
		s.end += m
		if err != nil {
			s.rerr = err
		}
	}
	return true
}

func (s *Scanner) readErr() error {
	if s.rerr != nil && s.rerr != io.EOF {
		e := s.errorf(s.Offset(), s.rerr, "read failed").(*Error)
		e.read = true
		return e
	}
	return s.errorf(s.Offset(), io.ErrUnexpectedEOF, "unexpected end of input")
}

func (s *Scanner) skipSpace() bool {
	for {
		for s.pos < s.end {
			switch s.buf[s.pos] {
			case ' ', '\t', '\r':
				s.pos++
			case '\n':
				s.line++
				s.pos++
			default:
				return true
			}
		}
		if !s.fill(1) {
			return false
		}
	}
}

// Next returns the next token. At the end of the top-level value it returns
// a token of kind EOF.
func (s *Scanner) Next() (Token, error) {
	if s.done {
		return Token{Kind: EOF, Offset: s.Offset()}, nil
	}
	if !s.skipSpace() {
		if len(s.stack) == 0 && s.rerr == io.EOF && s.Offset() == 0 {
			return Token{}, s.errorf(0, io.ErrUnexpectedEOF, "empty input")
		}
		return Token{}, s.readErr()
	}
	if n := len(s.stack); n > 0 {
		f := &s.stack[n-1]
		c := s.buf[s.pos]
		if f.afterItem {
			switch {
			case c == ',':
				s.pos++
				f.afterItem = false
				if f.object {
					f.wantKey = true
				}
				if !s.skipSpace() {
					return Token{}, s.readErr()
				}
				if c2 := s.buf[s.pos]; c2 == '}' || c2 == ']' {
					return Token{}, s.errorf(s.Offset(), nil, "trailing comma")
				}
			case c == '}' && f.object, c == ']' && !f.object:
				return s.closeContainer()
			default:
				return Token{}, s.errorf(s.Offset(), nil, "expected ',' or close, found %q", c)
			}
		} else if c == '}' && f.object && f.count == 0 && f.wantKey {
			return s.closeContainer()
		} else if c == ']' && !f.object && f.count == 0 {
			return s.closeContainer()
		}
		if f.object && f.wantKey {
			return s.readKey(f)
		}
	}
	return s.readValue()
}

func (s *Scanner) closeContainer() (Token, error) {
	off := s.Offset()
	object := s.stack[len(s.stack)-1].object
	s.stack = s.stack[:len(s.stack)-1]
	s.pos++
	k := ArrayEnd
	if object {
		k = ObjectEnd
	}
	s.valueDone()
	return Token{Kind: k, Offset: off}, nil
}

// valueDone records that a complete value was read at the current level.
func (s *Scanner) valueDone() {
	if len(s.stack) == 0 {
		if !s.AllowTrailing {
			s.done = true
		}
		return
	}
	f := &s.stack[len(s.stack)-1]
	f.afterItem = true
	f.count++
}

// CheckEnd verifies that nothing but whitespace follows the top-level value.
func (s *Scanner) CheckEnd() error {
	if s.skipSpace() {
		return s.errorf(s.Offset(), ErrTrailing, "unexpected %q", s.buf[s.pos])
	}
	if s.rerr != nil && s.rerr != io.EOF {
		return s.readErr()
	}
	return nil
}

func (s *Scanner) readKey(f *frame) (Token, error) {
	off := s.Offset()
	if s.buf[s.pos] != '"' {
		return Token{}, s.errorf(off, nil, "expected object key, found %q", s.buf[s.pos])
	}
	start := s.pos + 1
	b, err := s.readString()
	if err != nil {
		return Token{}, err
	}
	// Finding the ':' may refill the buffer under b: keep a copy, unless
	// b lies in a buffer that can no longer move (the whole input is in
	// it: an in-memory document, or a reader at its end). b is in the
	// buffer when it spans exactly the bytes read; text with an escape
	// decodes shorter than its source.
	stable := s.rerr != nil && s.pos-start == len(b)+1
	if !stable {
		s.key = append(s.key[:0], b...)
		b = s.key
	}
	if s.CheckDuplicates {
		if err := f.addKey(b, stable); err != nil {
			return Token{}, s.errorf(off, err, "key %q", b)
		}
	}
	if !s.skipSpace() {
		return Token{}, s.readErr()
	}
	if s.buf[s.pos] != ':' {
		return Token{}, s.errorf(s.Offset(), nil, "expected ':' after key, found %q", s.buf[s.pos])
	}
	s.pos++
	f.wantKey = false
	return Token{Kind: String, Bytes: b, IsKey: true, Offset: off}, nil
}

func (f *frame) addKey(b []byte, stable bool) error {
	if f.keySet != nil {
		// A large object: the key's hash finds a possible duplicate; only
		// then are the keys compared, so a collision is never a false
		// duplicate. Every key stays in keyList, so no string is made.
		h := maphash.Bytes(keySeed, b)
		if _, hit := f.keySet[h]; hit && f.hasKey(b) {
			return ErrDuplicateKey
		}
		f.keySet[h] = struct{}{}
		f.keyList = append(f.keyList, f.keep(b, stable))
		return nil
	}
	fp := fingerprint(b)
	bit := (fp * 0x9E3779B97F4A7C15) >> 56
	if w, m := bit>>6, uint64(1)<<(bit&63); f.seen[w]&m == 0 {
		f.seen[w] |= m
	} else {
		for i, x := range f.keyFPs {
			if x == fp && bytes.Equal(f.keyList[i], b) {
				return ErrDuplicateKey
			}
		}
	}
	f.keyList = append(f.keyList, f.keep(b, stable))
	f.keyFPs = append(f.keyFPs, fp)
	if len(f.keyList) <= smallObject {
		return nil
	}
	if f.spare != nil {
		f.keySet, f.spare = f.spare, nil
	} else {
		f.keySet = make(map[uint64]struct{}, 2*smallObject)
	}
	for _, k := range f.keyList {
		f.keySet[maphash.Bytes(keySeed, k)] = struct{}{}
	}
	return nil
}

// keep returns key b as addKey keeps it: itself when stable (it lies in
// a buffer that no longer moves), else a copy in f.keys.
func (f *frame) keep(b []byte, stable bool) []byte {
	if stable {
		return b
	}
	n := len(f.keys)
	f.keys = append(f.keys, b...)
	return f.keys[n:len(f.keys):len(f.keys)]
}

// smallObject is the number of keys checked by fingerprint before an
// object's keys go into a hash set.
const smallObject = 64

// fingerprint packs a key's length with its first and last eight bytes:
// cheap to make, and it tells apart nearly all keys of one object.
func fingerprint(b []byte) uint64 {
	n := len(b)
	if n >= 8 {
		return (binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 29)) + uint64(n)*0x9E3779B97F4A7C15
	}
	var x uint64
	for _, c := range b {
		x = x<<8 | uint64(c)
	}
	return x<<8 | uint64(n)
}

// hasKey reports whether the object read key b already.
func (f *frame) hasKey(b []byte) bool {
	for _, k := range f.keyList {
		if bytes.Equal(k, b) {
			return true
		}
	}
	return false
}

// keySeed seeds the key hashes of large objects.
var keySeed = maphash.MakeSeed()

func (s *Scanner) push(object bool) error {
	max := s.MaxDepth
	if max == 0 {
		max = 512
	}
	if len(s.stack) >= max {
		return s.boundf(s.Offset(), ErrDepth, int64(max), "more than %d levels", max)
	}
	// Reuse key storage of a previous frame at this depth.
	if len(s.stack) < cap(s.stack) {
		s.stack = s.stack[:len(s.stack)+1]
		f := &s.stack[len(s.stack)-1]
		spare := f.keySet
		if spare == nil {
			spare = f.spare
		} else {
			clear(spare)
		}
		*f = frame{cstate: cstate{object: object, wantKey: object}, keyList: f.keyList[:0], keys: f.keys[:0], keyFPs: f.keyFPs[:0], spare: spare}
	} else {
		s.stack = append(s.stack, frame{cstate: cstate{object: object, wantKey: object}})
	}
	return nil
}

func (s *Scanner) readValue() (Token, error) {
	off := s.Offset()
	c := s.buf[s.pos]
	switch c {
	case '{', '[':
		if err := s.push(c == '{'); err != nil {
			return Token{}, err
		}
		s.pos++
		if c == '{' {
			return Token{Kind: ObjectStart, Offset: off}, nil
		}
		return Token{Kind: ArrayStart, Offset: off}, nil
	case '"':
		b, err := s.readString()
		if err != nil {
			return Token{}, err
		}
		s.valueDone()
		return Token{Kind: String, Bytes: b, Offset: off}, nil
	case 't':
		return s.literal("true", True, off)
	case 'f':
		return s.literal("false", False, off)
	case 'n':
		return s.literal("null", Null, off)
	case 'N', 'I':
		if s.AllowNonFinite {
			return s.nonFinite(c, off)
		}
	case '-':
		if s.AllowNonFinite && s.fill(2) && s.buf[s.pos+1] == 'I' {
			return s.nonFinite(c, off)
		}
	}
	if c == '-' || (c >= '0' && c <= '9') {
		b, err := s.readNumber()
		if err != nil {
			return Token{}, err
		}
		s.valueDone()
		return Token{Kind: Number, Bytes: b, Offset: off}, nil
	}
	if c == '}' || c == ']' {
		return Token{}, s.errorf(off, nil, "unexpected %q", c)
	}
	return Token{}, s.errorf(off, nil, "invalid character %q", c)
}

func (s *Scanner) literal(word string, k Kind, off int64) (Token, error) {
	if !s.fill(len(word)) || string(s.buf[s.pos:s.pos+len(word)]) != word {
		if s.end-s.pos < len(word) && s.rerr != nil {
			return Token{}, s.readErr()
		}
		return Token{}, s.errorf(off, nil, "invalid literal")
	}
	s.pos += len(word)
	s.valueDone()
	return Token{Kind: k, Offset: off}, nil
}

// nonFinite reads NaN, Infinity or -Infinity (by its first byte c) as a
// Number token.
func (s *Scanner) nonFinite(c byte, off int64) (Token, error) {
	word := "NaN"
	switch c {
	case 'I':
		word = "Infinity"
	case '-':
		word = "-Infinity"
	}
	tok, err := s.literal(word, Number, off)
	if err == nil {
		tok.Bytes = []byte(word)
	}
	return tok, err
}

func (s *Scanner) readNumber() ([]byte, error) {
	off := s.Offset()
	i := 0
	// Grow the window until the number's end is inside the buffer.
	for {
		for s.pos+i < s.end {
			c := s.buf[s.pos+i]
			if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				i++
				continue
			}
			goto done
		}
		if err := s.checkTokenSize(off); err != nil {
			return nil, err
		}
		if !s.fill(i + 1) {
			break
		}
	}
done:
	lit := s.buf[s.pos : s.pos+i]
	if !validNumber(lit) {
		return nil, s.errorf(off, nil, "invalid number %q", lit)
	}
	s.pos += i
	return lit, nil
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		i = digits(b, i)
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		if i = digits(b, j); i == j {
			return false // no digit after the point
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if i = digits(b, j); i == j {
			return false // no exponent digit
		}
	}
	return i == len(b)
}

// digits returns the index past the ASCII digits that start at i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// readString reads a string starting at the opening quote and returns its
// unescaped bytes (valid until the next call).
func (s *Scanner) readString() ([]byte, error) {
	off := s.Offset()
	s.pos++ // opening quote
	// Plain text, the common case, is found and checked in one pass.
	if e := plainEnd(s.buf[:s.end], s.pos); e >= 0 && e-s.pos <= s.maxToken() {
		seg := s.buf[s.pos:e]
		s.pos = e + 1
		return seg, nil
	}
	// Fast path: no escapes, closing quote within the buffer.
	for {
		start := s.pos
		if j := bytes.IndexByte(s.buf[start:s.end], '"'); j >= 0 {
			seg := s.buf[start : start+j]
			if j > s.maxToken() {
				return nil, s.boundf(off, ErrTokenTooLong, int64(s.maxToken()), "string")
			}
			if plainText(seg) {
				s.pos = start + j + 1
				return seg, nil
			}
			if bytes.IndexByte(seg, '\\') < 0 && !hasControl(seg) {
				if !utf8.Valid(seg) {
					return nil, s.errorf(off, ErrInvalidUTF8, "string")
				}
				s.pos = start + j + 1
				return seg, nil
			}
			break
		}
		// Not in the buffer yet; pull more and retry the fast path once the
		// whole string is present.
		if err := s.checkTokenSize(off); err != nil {
			return nil, err
		}
		if !s.fill(s.end - s.pos + 1) {
			return nil, s.readErr()
		}
	}
	return s.readStringSlow(off)
}

func (s *Scanner) maxToken() int {
	if s.MaxToken > 0 {
		return s.MaxToken
	}
	return 64 << 20
}

func (s *Scanner) checkTokenSize(off int64) error {
	if s.Offset()-off > int64(s.maxToken()) || s.end-s.pos > s.maxToken() {
		return s.boundf(off, ErrTokenTooLong, int64(s.maxToken()), "token")
	}
	return nil
}

// plainText reports whether b is printable ASCII without a backslash:
// a string that is its own text, checked eight bytes at a time.
func plainText(b []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		// A byte with its high bit set, one below 0x20, or a backslash
		// (0x5C: zero after the xor) sets its high bit here.
		if (w|(w-0x20*lo)|((w^0x5C*lo)-lo))&hi != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

func (s *Scanner) readStringSlow(off int64) ([]byte, error) {
	out := s.scratch[:0]
	for {
		if s.pos >= s.end && !s.fill(1) {
			return nil, s.readErr()
		}
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !utf8.Valid(out) {
				return nil, s.errorf(off, ErrInvalidUTF8, "string")
			}
			s.scratch = out
			return out, nil
		case c < 0x20:
			return nil, s.errorf(s.Offset(), nil, "control character in string")
		case c != '\\':
			if len(out) > s.maxToken() {
				return nil, s.boundf(off, ErrTokenTooLong, int64(s.maxToken()), "string")
			}
			out = append(out, c)
			s.pos++
			continue
		}
		if !s.fill(2) {
			return nil, s.readErr()
		}
		e := s.buf[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := s.readHex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || !s.fill(2) || s.buf[s.pos] != '\\' || s.buf[s.pos+1] != 'u' {
					return nil, s.errorf(s.Offset(), ErrInvalidUTF8, "lone surrogate")
				}
				s.pos += 2
				r2, err := s.readHex4()
				if err != nil {
					return nil, err
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return nil, s.errorf(s.Offset(), ErrInvalidUTF8, "bad surrogate pair")
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, s.errorf(s.Offset()-2, nil, "invalid escape \\%c", e)
		}
	}
}

func (s *Scanner) readHex4() (rune, error) {
	if !s.fill(4) {
		return 0, s.readErr()
	}
	var r rune
	for i := range 4 {
		c := s.buf[s.pos+i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, s.errorf(s.Offset(), nil, "invalid \\u escape")
		}
	}
	s.pos += 4
	return r, nil
}

// Skip consumes the rest of a value whose first token was tok: nothing for
// scalars, everything up to the matching close for containers.
func (s *Scanner) Skip(tok Token) error {
	if tok.Kind != ObjectStart && tok.Kind != ArrayStart {
		return nil
	}
	depth := len(s.stack) - 1
	if _, r := s.skipFast(depth, nil); r == skipClosed {
		return nil
	}
	for len(s.stack) > depth {
		if _, err := s.Next(); err != nil {
			return err
		}
	}
	return nil
}

// skipResult says how skipFast ended.
type skipResult int

const (
	skipFailed  skipResult = iota // nothing consumed: read with Next
	skipClosed                    // the container was read to its close
	skipStopped                   // stop accepted a key; its value is next
)

// space and numberByte classify bytes for skipFast.
var space, numberByte [256]bool

func init() {
	for _, c := range " \t\r\n" {
		space[c] = true
	}
	for _, c := range "0123456789-+.eE" {
		numberByte[c] = true
	}
}

// Errorf returns a positioned error for a structural problem found by a
// caller, for example a field of the wrong kind.
func (s *Scanner) Errorf(tok Token, format string, args ...any) error {
	return &Error{Offset: tok.Offset, Line: s.Line(), Msg: fmt.Sprintf(format, args...)}
}

// ErrNotInteger reports a number with a fraction or exponent, or beyond
// int64, where an integer is required.
var ErrNotInteger = errors.New("not an integer")

// Ints reads the elements of an array of integers whose ArrayStart token
// was just returned, calling fn for each, through the closing bracket. It
// is the fast path for the long id and delta arrays of profiles: one tight
// loop over the buffer instead of a token per element, with the same
// grammar checks. While fn runs, Offset is the integer's first byte.
func (s *Scanner) Ints(fn func(int64) error) error {
	const (
		open  = iota // after '[': a value or ']'
		value        // after a value: ',' or ']'
		comma        // after ',': a value
	)
	state := open
	for {
		if s.end-s.pos < 32 && s.rerr == nil {
			s.fill(32)
		}
		if s.pos >= s.end {
			return s.readErr()
		}
		b := s.buf[s.pos:s.end]
		// A number starts only where the whole of it (at most 20 bytes) is
		// in the buffer, unless the input is complete; else refill first.
		safe := len(b) - 24
		if s.rerr != nil {
			safe = len(b)
		}
		i := 0
	scan:
		for i < len(b) {
			c := b[i]
			if c-'0' <= 9 && state != value && i < safe {
				// Fast path: a short integer without sign, as nearly every
				// id and delta is. Anything else (a sign, a leading zero, a
				// fraction, 19 digits or more) takes parseInt below, which
				// owns the exact grammar and messages.
				j, u := i, uint64(0)
				for ; j < len(b); j++ {
					d := b[j] - '0'
					if d > 9 {
						break
					}
					u = u*10 + uint64(d)
				}
				if n := j - i; n <= 18 && (c != '0' || n == 1) && (j == len(b) || (b[j] != '.' && b[j]|0x20 != 'e')) {
					base := s.pos
					s.pos += i
					if err := fn(int64(u)); err != nil {
						return err
					}
					s.pos = base
					i, state = j, value
					if j < len(b) && b[j] == ',' {
						i, state = j+1, comma // the common separator, at once
					}
					continue
				}
			}
			switch c {
			case ' ', '\t', '\r':
				i++
				continue
			case '\n':
				s.line++
				i++
				continue
			case ',':
				if state != value {
					s.pos += i
					return s.errorf(s.Offset(), nil, "unexpected ',' in integer array")
				}
				state = comma
				i++
				continue
			case ']':
				s.pos += i
				if state == comma {
					return s.errorf(s.Offset(), nil, "trailing comma")
				}
				_, err := s.closeContainer()
				return err
			}
			if state == value {
				s.pos += i
				return s.errorf(s.Offset(), nil, "expected ',' or ']' in integer array, found %q", c)
			}
			if i >= safe {
				break scan
			}
			n, j, err := parseInt(b, i)
			base := s.pos
			s.pos += i // the callback sees the number's own offset
			if err != nil {
				return s.errorf(s.Offset(), err, "%s", err.Error())
			}
			if err := fn(n); err != nil {
				return err
			}
			s.pos = base
			i = j
			state = value
		}
		s.pos += i
	}
}

var errOutOfRange = fmt.Errorf("integer out of range: %w", ErrNotInteger)

// parseInt parses the JSON integer starting at b[i] and returns it with
// the index after it.
func parseInt(b []byte, i int) (int64, int, error) {
	neg := false
	if b[i] == '-' {
		neg = true
		i++
	}
	start := i
	var u uint64
	for i < len(b) {
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		if i-start >= 19 {
			return 0, i, errOutOfRange
		}
		u = u*10 + uint64(c-'0')
		i++
	}
	switch {
	case i == start && start == len(b):
		return 0, i, io.ErrUnexpectedEOF
	case i == start:
		return 0, i, fmt.Errorf("invalid character %q in integer array", b[start])
	case b[start] == '0' && i-start > 1:
		return 0, i, errors.New("invalid number: leading zero")
	}
	if i < len(b) {
		if c := b[i]; c == '.' || c == 'e' || c == 'E' {
			return 0, i, fmt.Errorf("want an integer: %w", ErrNotInteger)
		}
	}
	if u > 1<<63-1 && !(neg && u == 1<<63) {
		return 0, i, errOutOfRange
	}
	if neg {
		return -int64(u), i, nil
	}
	return int64(u), i, nil
}
