package perfscript

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/collapsed"
)

// Options configure Parse.
type Options struct {
	Limits map[string]int64
	// Threads splits series by the native pid/tid token. By default a
	// series is the process name (comm) and the event, as perf report's
	// default sort comm,dso,sym does; threads of one comm are summed.
	Threads bool
	// Workers parses chunks in parallel; 0 means GOMAXPROCS.
	Workers int
	// ChunkBytes is the read size; 0 means 4 MiB. Tests make it small to
	// force many chunk boundaries.
	ChunkBytes int
}

// Result is a parsed perf script stream.
type Result struct {
	Profile     *collapsed.Profile
	Samples     int64
	NoStack     int64 // samples with neither a callchain nor an inline frame
	Bytes       int64
	PerfVersion string // from a --header block, "" when absent
}

// maxRecordBytes bounds the memory one sample may need when it does not
// fit the read buffer (a record is buffered whole so chunks split only
// between samples).
const maxRecordBytes = 64 << 20

// stackCacheEntries bounds a shard's map of distinct stacks; when it fills,
// the stacks are folded into the shard's profile and the map starts over.
// Folding is exact, so the bound costs time, never accuracy.
const stackCacheEntries = 1 << 15

// lineCacheEntries bounds a shard's map from frame text (which includes
// perf's +0x offsets) to frame ids. It is a cache: clearing it is exact.
const lineCacheEntries = 1 << 20

type chunk struct {
	buf   []byte // owning buffer, returned to the pool
	data  []byte
	seq   int
	off   int64 // byte offset of the chunk's first byte
	last  bool
	lines int64 // set by the parser: lines in the chunk
}

// shard is one worker's parser state. It owns its own frame ids; shards
// are merged by frame identity at the end.
type shard struct {
	prof      *collapsed.Profile
	lineIDs   *lineTable
	seriesIDs map[string]uint32
	stackIdx  map[string]int
	stackW    []int64
	keybuf    []byte

	// stack[0] is the series id, the frames (leaf first) follow, so that
	// the slice's bytes are the stack cache key.
	stack      []uint32
	curRaw     [][]byte // this sample's callchain lines, as read
	prevRaw    [][]byte // the previous sample's lines, and their ids
	prevIDs    []uint32
	prevStack  []uint32 // the last counted stack key, at stackW[lastStack]
	lastStack  int
	lastPrefix []byte // the last header up to its pid token, and its series
	lastEvent  []byte // with its colon
	lastSeries uint32
	inSample   bool
	terminated bool // the last sample ended with a blank line
	inline     uint32
	hasInline  bool
	headerLine int64

	samples, noStack int64
	perfVersion      string

	threads                     bool
	maxLine, maxStack, maxFrame int64
}

func newShard(o *Options, lim limits) *shard {
	return &shard{
		prof:      collapsed.NewProfile(),
		lineIDs:   newLineTable(),
		seriesIDs: map[string]uint32{},
		stackIdx:  map[string]int{},
		lastStack: -1,
		threads:   o.Threads,
		maxLine:   lim.line,
		maxStack:  lim.stack,
		maxFrame:  lim.frames,
	}
}

type limits struct{ bytes, samples, line, stack, frames int64 }

func failAt(line, off int64, code evidence.Code, format string, args ...any) *evidence.Failure {
	f := evidence.Failf(code, format, args...)
	f.Location.Line = int(line)
	f.Location.Offset = off
	return f
}

// parseChunk parses whole samples. Its hot path is a frame line: one
// IndexByte, a short scan past indentation and address, and one map lookup
// keyed by the line's bytes, without allocating.
func (s *shard) parseChunk(c *chunk) error {
	data := c.data
	// Line numbers are relative to the chunk until Parse adds the lines of
	// the chunks before it: counting them here would cost a pass.
	var line int64
	// Remembered lines point into the previous chunk's buffer, which may
	// be reused now.
	s.prevRaw, s.curRaw = s.prevRaw[:0], s.curRaw[:0]
	start := c.off
	var ln []byte
	for len(data) > 0 {
		// The commonest line repeats the previous sample's line at this
		// depth (consecutive samples share their callers): reuse its id,
		// recognised without searching for the line's end.
		if s.inSample {
			if depth := len(s.stack) - 1; depth < len(s.prevRaw) {
				p := s.prevRaw[depth]
				if len(data) > len(p) && data[len(p)] == '\n' && bytes.Equal(data[:len(p)], p) && int64(depth) < s.maxStack {
					s.stack = append(s.stack, s.prevIDs[depth])
					s.curRaw = append(s.curRaw, data[:len(p)])
					data = data[len(p)+1:]
					line++
					start += int64(len(p)) + 1
					continue
				}
			}
		}
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			ln, data = data, nil
		} else {
			ln, data = data[:nl], data[nl+1:]
		}
		line++
		off := start
		start += int64(len(ln)) + 1
		if int64(len(ln)) > s.maxLine {
			return failAt(line, off, evidence.CodeLimitExceeded, "line longer than %s=%d bytes", LimitLineBytes, s.maxLine)
		}
		if len(ln) == 0 {
			s.endSample(true)
			continue
		}
		switch ln[0] {
		case ' ':
			// perf pads comm with spaces, so a header may start with one;
			// callchain lines start with a tab, or are not headers.
			if ok, err := s.header(ln, line, off, true); ok || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			fallthrough
		case '\t':
			if !s.inSample {
				if len(frameText(ln)) == 0 { // whitespace only: a blank line
					continue
				}
				return failAt(line, off, evidence.CodeDecodeFailure, "callchain line outside a sample (no event header before it)")
			}
			// (A line equal to the previous sample's line at this depth was
			// taken at the top of the loop.)
			depth := len(s.stack) - 1
			t, addr, hasAddr := frameAddr(ln)
			if len(t) == 0 { // whitespace only: a blank line
				s.endSample(true)
				continue
			}
			key := s.lineIDs.key(addr, hasAddr, t)
			id, ok := s.lineIDs.get(key, t)
			if !ok {
				var err error
				if id, err = s.newFrame(key, t); err != nil {
					return s.frameErr(err, line, off)
				}
			}
			if int64(depth) >= s.maxStack {
				return failAt(line, off, evidence.CodeLimitExceeded, "callchain deeper than %s=%d frames", LimitStack, s.maxStack)
			}
			s.stack = append(s.stack, id)
			s.curRaw = append(s.curRaw, ln)
		case '#':
			s.comment(ln)
		default:
			if _, err := s.header(ln, line, off, false); err != nil {
				return err
			}
		}
	}
	if c.last && len(c.data) > 0 && c.data[len(c.data)-1] != '\n' {
		return failAt(line, start-int64(len(ln))-1, evidence.CodeDecodeFailure, "truncated: the input ends inside a line (perf script ends every line with a newline)")
	}
	if c.last && s.inSample && len(s.stack) > 1 && !s.terminated {
		return failAt(s.headerLine, 0, evidence.CodeDecodeFailure, "truncated sample: the input ends inside the callchain of the sample starting here")
	}
	s.endSample(false)
	c.lines = line
	return nil
}

func (s *shard) frameErr(err error, line, off int64) error {
	var f *evidence.Failure
	if errors.As(err, &f) {
		f.Location.Line, f.Location.Offset = int(line), off
		return f
	}
	return failAt(line, off, evidence.CodeDecodeFailure, "callchain line: %v", err)
}

func (s *shard) newFrame(key uint64, t []byte) (uint32, error) {
	sym, mod, err := splitFrame(t)
	if err != nil {
		return 0, err
	}
	f := collapsed.Frame{Function: string(sym), Module: string(mod)}
	if f.Module == "[unknown]" {
		f.Module = ""
	}
	if f.Function == "" || f.Function == "[unknown]" {
		f.Function, f.Unresolved = "[unknown]", true
	}
	id := s.prof.Frame(f)
	if int64(len(s.prof.Frames)) > s.maxFrame {
		return 0, evidence.Failf(evidence.CodeLimitExceeded, "more than %s=%d distinct frames", LimitFrames, s.maxFrame)
	}
	s.lineIDs.put(key, t, id, lineCacheEntries)
	return id, nil
}

// header opens a sample at an event header line. With maybe set, a line
// that is not a header is not an error: ok says whether it was one.
func (s *shard) header(ln []byte, line, off int64, maybe bool) (ok bool, err error) {
	// Fast path: the same comm and pid as the last header, whose split
	// is known, and the same event.
	if n := len(s.lastPrefix); n > 0 && len(ln) > n && isSpace(ln[n]) && bytes.Equal(ln[:n], s.lastPrefix) {
		// Between pid and event only [cpu], time and period may stand; a
		// header ending in the event has no inline frame.
		rest := bytes.TrimRight(ln[n:], " ")
		if k := len(rest) - len(s.lastEvent); k > 0 && isSpace(rest[k-1]) && bytes.Equal(rest[k:], s.lastEvent) && timeFields(rest[:k]) {
			s.endSample(false)
			return true, s.openSample(s.lastSeries, nil, line, off)
		}
		if h, ok := matchAfterPid(ln, n); ok && bytes.Equal(h.event, s.lastEvent[:len(s.lastEvent)-1]) {
			s.endSample(false)
			return true, s.openSample(s.lastSeries, h.tail, line, off)
		}
	}
	h, ok := parseHeader(ln)
	if !ok {
		if maybe {
			return false, nil
		}
		return false, failAt(line, off, evidence.CodeDecodeFailure, "not a perf script event header (want `comm pid[/tid] [time:] [period] event:`): %.80q", ln)
	}
	s.endSample(false)
	s.keybuf = append(s.keybuf[:0], h.comm...)
	s.keybuf = append(s.keybuf, 0)
	if s.threads {
		s.keybuf = append(s.keybuf, h.tid...)
	}
	s.keybuf = append(s.keybuf, 0)
	s.keybuf = append(s.keybuf, h.event...)
	sid, ok := s.seriesIDs[string(s.keybuf)]
	if !ok {
		ser := collapsed.Series{Process: string(h.comm), Event: string(h.event)}
		if s.threads {
			ser.Thread = string(h.tid)
		}
		sid = s.prof.SeriesID(ser)
		s.seriesIDs[string(s.keybuf)] = sid
	}
	s.lastPrefix = append(s.lastPrefix[:0], ln[:h.pidEnd]...)
	s.lastEvent = append(append(s.lastEvent[:0], h.event...), ':')
	s.lastSeries = sid
	return true, s.openSample(sid, h.tail, line, off)
}

func (s *shard) openSample(sid uint32, tail []byte, line, off int64) error {
	s.stack = append(s.stack[:0], sid)
	s.inSample, s.terminated, s.hasInline, s.headerLine = true, false, false, line
	if t, ok := inlineFrame(tail); ok {
		key := s.lineIDs.key(0, false, t)
		id, ok := s.lineIDs.get(key, t)
		if !ok {
			var err error
			if id, err = s.newFrame(key, t); err != nil {
				return s.frameErr(err, line, off)
			}
		}
		s.inline, s.hasInline = id, true
	}
	return nil
}

// comment reads the --header block's perf version; other comments are
// skipped.
func (s *shard) comment(ln []byte) {
	const key = "# perf version :"
	if bytes.HasPrefix(ln, []byte(key)) {
		s.perfVersion = string(bytes.TrimSpace(ln[len(key):]))
	}
}

// endSample closes the open sample, if any, and counts its stack.
func (s *shard) endSample(blank bool) {
	if !s.inSample {
		return
	}
	s.inSample = false
	s.terminated = blank
	s.prevRaw, s.curRaw = s.curRaw, s.prevRaw[:0]
	s.prevIDs = append(s.prevIDs[:0], s.stack[1:]...)
	if len(s.stack) == 1 && s.hasInline {
		s.stack = append(s.stack, s.inline)
	}
	if len(s.stack) == 1 {
		s.noStack++
	}
	s.samples++
	// Consecutive samples often repeat a stack: count it without hashing.
	if s.lastStack >= 0 && slices.Equal(s.stack, s.prevStack) {
		s.stackW[s.lastStack]++
		return
	}
	s.prevStack = append(s.prevStack[:0], s.stack...)
	key := unsafe.Slice((*byte)(unsafe.Pointer(&s.stack[0])), len(s.stack)*4)
	if i, ok := s.stackIdx[string(key)]; ok {
		s.stackW[i]++
		s.lastStack = i
		return
	}
	if len(s.stackIdx) >= stackCacheEntries {
		s.fold()
	}
	s.lastStack = len(s.stackW)
	s.stackIdx[string(key)] = s.lastStack
	s.stackW = append(s.stackW, 1)
}

// fold moves the cached stacks into the shard's profile.
func (s *shard) fold() {
	var ids []uint32
	for k, i := range s.stackIdx {
		ids = ids[:0]
		for j := 0; j+4 <= len(k); j += 4 {
			ids = append(ids, binary.NativeEndian.Uint32([]byte(k[j:j+4])))
		}
		w := s.stackW[i]
		s.prof.Add(ids[0], ids[1:], w, w)
	}
	clear(s.stackIdx)
	s.stackW = s.stackW[:0]
	s.lastStack = -1
}

// splitPoint returns the end of the last complete sample in b: just after
// a newline that is followed by a line that is not a callchain entry. It
// returns 0 when b holds no such point.
func splitPoint(b []byte) int {
	for end := len(b); end > 0; {
		nl := bytes.LastIndexByte(b[:end], '\n')
		if nl < 0 {
			return 0
		}
		if nl+1 < len(b) && startsRecord(b[nl+1:]) {
			return nl + 1
		}
		end = nl
	}
	return 0
}

func limitOf(lims map[string]int64, name string) int64 {
	if v, ok := lims[name]; ok && v > 0 {
		return v
	}
	for _, l := range parserLimits {
		if l.Name == name {
			return l.Default
		}
	}
	return 0
}

// Parse reads perf script text. Samples are parsed in parallel in chunks
// split on sample boundaries; each worker aggregates into its own shard,
// and shards are merged when the input ends. Memory is the read buffers
// plus distinct frames, stacks and edges: it does not grow with input size.
// Nothing is returned on failure: the first failure in input order wins.
func Parse(ctx context.Context, r io.Reader, o Options) (*Result, error) {
	lim := limits{
		bytes:   limitOf(o.Limits, LimitBytes),
		samples: limitOf(o.Limits, LimitSamples),
		line:    limitOf(o.Limits, LimitLineBytes),
		stack:   limitOf(o.Limits, LimitStack),
		frames:  limitOf(o.Limits, LimitFrames),
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size := o.ChunkBytes
	if size <= 0 {
		size = 4 << 20
	}
	nbuf := 2 * workers
	pool := make(chan []byte, nbuf)
	for range nbuf {
		pool <- nil // allocated on first use
	}
	work := make(chan *chunk, workers)
	shards := make([]*shard, workers)
	errs := make([]struct {
		seq int
		err error
	}, workers)
	var (
		failed  atomic.Int64 // lowest failed chunk sequence number
		samples atomic.Int64
		wg      sync.WaitGroup
		linesMu sync.Mutex
		lines   = map[int]int64{} // lines per parsed chunk, for absolute line numbers
	)
	failed.Store(math.MaxInt64)
	for w := range workers {
		sh := newShard(&o, lim)
		shards[w] = sh
		errs[w].seq = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				// Chunks after a failed one are skipped; earlier ones still
				// run, so the failure reported is the first in input order.
				if int64(c.seq) < failed.Load() {
					before := sh.samples
					err := sh.parseChunk(c)
					if err == nil && samples.Add(sh.samples-before) > lim.samples {
						err = failAt(1, c.off, evidence.CodeLimitExceeded, "more than %s=%d samples", LimitSamples, lim.samples)
					}
					if err == nil {
						linesMu.Lock()
						lines[c.seq] = c.lines
						linesMu.Unlock()
					}
					if err != nil {
						if errs[w].seq < 0 || c.seq < errs[w].seq {
							errs[w].seq, errs[w].err = c.seq, err
						}
						for cur := failed.Load(); int64(c.seq) < cur && !failed.CompareAndSwap(cur, int64(c.seq)); cur = failed.Load() {
						}
					}
				}
				pool <- c.buf
			}
		}()
	}

	total, rseq, rerr := feed(ctx, r, size, lim, pool, work, &failed)
	close(work)
	wg.Wait()

	// A failure's line is relative to its chunk: add the lines of every
	// chunk before it, all parsed since no earlier chunk failed.
	absolute := func(seq int, err error) error {
		var f *evidence.Failure
		if errors.As(err, &f) && f.Location.Line > 0 {
			var base int64
			for k, n := range lines {
				if k < seq {
					base += n
				}
			}
			f.Location.Line += int(base)
		}
		return err
	}
	first := -1
	for i, e := range errs {
		if e.seq >= 0 && (first < 0 || e.seq < errs[first].seq) {
			first = i
		}
	}
	if first >= 0 {
		return nil, absolute(errs[first].seq, errs[first].err)
	}
	if rerr != nil {
		return nil, absolute(rseq, rerr)
	}
	res := &Result{Profile: shards[0].prof, Bytes: total}
	for i, sh := range shards {
		sh.fold()
		if i > 0 {
			res.Profile.Merge(sh.prof)
		}
		res.Samples += sh.samples
		res.NoStack += sh.noStack
		if sh.perfVersion != "" {
			res.PerfVersion = sh.perfVersion
		}
	}
	if int64(len(res.Profile.Frames)) > lim.frames {
		return nil, evidence.Failf(evidence.CodeLimitExceeded, "more than %s=%d distinct frames", LimitFrames, lim.frames)
	}
	return res, nil
}

// feed reads r in blocks, cuts each block after its last complete sample
// and sends the pieces to the workers in input order. It returns the bytes
// read, and on failure the sequence number the failing data would have had
// (its line is relative to that chunk). A failure of a worker stops it
// early.
func feed(ctx context.Context, r io.Reader, size int, lim limits, pool chan []byte, work chan<- *chunk, failed *atomic.Int64) (total int64, seq int, err error) {
	var (
		carry []byte
		off   int64
	)
	for failed.Load() == math.MaxInt64 {
		if err := ctx.Err(); err != nil {
			return total, seq, err
		}
		buf := <-pool
		// Room for the carried partial sample and at least as much new input.
		need := max(size, 2*len(carry))
		if cap(buf) < need {
			buf = make([]byte, need)
		}
		buf = buf[:cap(buf)]
		n := copy(buf, carry)
		m, err := io.ReadFull(r, buf[n:])
		total += int64(m)
		if total > lim.bytes {
			pool <- buf
			return total, seq, failAt(0, lim.bytes, evidence.CodeLimitExceeded, "input longer than %s=%d bytes", LimitBytes, lim.bytes)
		}
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			pool <- buf
			return total, seq, evidence.Wrap(evidence.CodeIOFailure, err, "read perf script at byte %d", total)
		}
		data := buf[:n+m]
		cut := len(data)
		if !eof {
			cut = splitPoint(data)
			if cut == 0 {
				// One sample fills the buffer: keep it whole and read more.
				if len(data) >= maxRecordBytes {
					pool <- buf
					if bytes.IndexByte(data, '\n') < 0 {
						return total, seq, failAt(1, off, evidence.CodeLimitExceeded, "line longer than %s=%d bytes", LimitLineBytes, lim.line)
					}
					return total, seq, failAt(1, off, evidence.CodeLimitExceeded, "one sample is longer than %d bytes", maxRecordBytes)
				}
				if nl := bytes.LastIndexByte(data, '\n'); int64(len(data)-nl-1) > lim.line {
					pool <- buf
					return total, seq, failAt(1+int64(bytes.Count(data, []byte{'\n'})), off+int64(nl+1), evidence.CodeLimitExceeded, "line longer than %s=%d bytes", LimitLineBytes, lim.line)
				}
				carry = append(carry[:0], data...)
				pool <- buf
				continue
			}
		}
		carry = append(carry[:0], data[cut:]...)
		c := &chunk{buf: buf, data: data[:cut], seq: seq, off: off, last: eof}
		seq++
		off += int64(cut)
		work <- c
		if eof {
			return total, seq, nil
		}
	}
	return total, seq, nil
}
