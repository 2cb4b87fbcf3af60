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
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/lines"
)

// Options tune Parse; the limits and the threads option come from the
// input.
type Options struct {
	// Workers parses chunks in parallel; 0 means GOMAXPROCS.
	Workers int
	// ChunkBytes is the read size; 0 means 4 MiB. Tests make it small to
	// force many chunk boundaries.
	ChunkBytes int
	// BoundBytes applies max_bytes to the text as it is read: for text
	// converted from the artifact, whose size is not known before. The
	// artifact's own size is checked before reading.
	BoundBytes bool
	// Stacks keeps each distinct stack, for cpu.stacks.
	Stacks bool
}

// Result is a parsed perf script stream.
type Result struct {
	Profile *collapsed.Profile
	// Lines is the profile of source lines when the script prints
	// srcline (perf script -F ...,srcline): its frames are (function,
	// module, file, line), a frame without a resolved line its
	// function's with line 0. Nil when no srcline was printed.
	Lines       *collapsed.Profile
	Samples     int64
	NoStack     int64 // samples with neither a callchain nor an inline frame
	Bytes       int64
	PerfVersion string // from a --header block, "" when absent
}

// maxSampleBytes bounds the memory one sample may need when it does not
// fit the read buffer (a sample is buffered whole so blocks split only
// between samples).
const maxSampleBytes = 64 << 20

// stackCacheEntries bounds a shard's map of distinct stacks; when it fills,
// the stacks are folded into the shard's profile and the map starts over.
// Folding is exact, so the bound costs time, never accuracy.
const stackCacheEntries = 1 << 15

// lineCacheEntries bounds a shard's map from frame text (which includes
// perf's +0x offsets) to frame ids. It is a cache: clearing it is exact.
const lineCacheEntries = 1 << 20

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
	headerAt   evidence.Location // where the open sample's header is, in the last block
	lastBlock  bool              // parsing the block that ends the input

	samples, noStack int64
	perfVersion      string

	// srcline: the source line perf prints under a frame line. srcAt
	// marks this sample's: index in stack and id in srcs (srcs[0] is no
	// line). lprof, nil until the shard meets a srcline, is the lines
	// profile; lineFrames maps (frame, src) to its frame ids.
	srcAt      []srcMark
	srcIDs     map[string]uint32
	srcs       []srcLine
	lineFrames map[[2]uint32]uint32
	lprof      *collapsed.Profile
	lstack     []uint32

	in                 *formats.Input // for its limits
	threads            bool
	maxStack, maxFrame int64
}

func newShard(in *formats.Input) *shard {
	return &shard{
		in:        in,
		prof:      collapsed.NewProfile(),
		lineIDs:   newLineTable(),
		seriesIDs: map[string]uint32{},
		stackIdx:  map[string]int{},
		lastStack: -1,
		threads:   in.Bool(OptionThreads),
		maxStack:  in.Limit(collapsed.LimitStack),
		maxFrame:  in.Limit(collapsed.LimitFrames),
	}
}

// parseChunk parses whole samples. Its hot path is a frame line: one
// search for its end, a short scan past indentation and address, and one
// table lookup keyed by the address, without allocating. Line numbers in
// its failures are relative to the block (Blocks.Locate rebases them).
func (s *shard) parseChunk(blk *lines.Block) (int64, error) {
	sc := blk.Lines()
	s.lastBlock = blk.Last
	// Remembered lines point into the previous block's buffer, which may
	// be reused now.
	s.prevRaw, s.curRaw = s.prevRaw[:0], s.curRaw[:0]
	for {
		// The commonest line repeats the previous sample's line at this
		// depth (consecutive samples share their callers): reuse its id,
		// recognised without searching for the line's end.
		if s.inSample {
			if depth := len(s.stack) - 1; depth < len(s.prevRaw) && int64(depth) < s.maxStack {
				if b, ok := sc.Repeat(s.prevRaw[depth]); ok {
					s.stack = append(s.stack, s.prevIDs[depth])
					s.curRaw = append(s.curRaw, b)
					continue
				}
			}
		}
		ln, err := sc.Bytes()
		if err != nil {
			if err == io.EOF { // Scan's own end of block, never wrapped
				break
			}
			return 0, err
		}
		if len(ln) == 0 {
			s.endSample(true)
			continue
		}
		switch ln[0] {
		case ' ':
			// perf pads comm with spaces, so a header may start with one;
			// callchain lines start with a tab, or are not headers.
			if ok, err := s.header(ln, &sc, true); ok || err != nil {
				if err != nil {
					return 0, err
				}
				continue
			}
			// srcline prints "\n  file:line" after a frame.
			if s.inSample && isSrcline(ln) {
				if err := s.srcline(ln, &sc); err != nil {
					return 0, err
				}
				continue
			}
			fallthrough
		case '\t':
			if !s.inSample {
				if len(frameText(ln)) == 0 { // whitespace only: a blank line
					continue
				}
				return 0, failAt(sc.Line(), evidence.CodeDecodeFailure, "callchain line outside a sample (no event header before it)")
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
					return 0, s.frameErr(err, sc.Line())
				}
			}
			if int64(depth) >= s.maxStack {
				return 0, sc.Line().At(s.in.Exceeded(collapsed.LimitStack, nil))
			}
			s.stack = append(s.stack, id)
			s.curRaw = append(s.curRaw, ln)
		case '#':
			if err := s.comment(ln, &sc); err != nil {
				return 0, err
			}
		default:
			if _, err := s.header(ln, &sc, false); err != nil {
				return 0, err
			}
		}
	}
	if blk.Last {
		if l := sc.Line(); sc.Count() > 0 && l.Term == lines.None {
			return 0, failAt(l, evidence.CodeDecodeFailure, "truncated: the input ends inside a line (perf script ends every line with a newline)")
		}
		if s.inSample && len(s.stack) > 1 && !s.terminated {
			f := evidence.Failf(evidence.CodeDecodeFailure, "truncated sample: the input ends inside the callchain of the sample starting here")
			f.Location = s.headerAt
			return 0, f
		}
	}
	s.endSample(false)
	return sc.Count(), nil
}

func failAt(l *lines.Line, code evidence.Code, format string, args ...any) *evidence.Failure {
	return l.At(evidence.Failf(code, format, args...))
}

func (s *shard) frameErr(err error, l *lines.Line) error {
	var f *evidence.Failure
	if errors.As(err, &f) {
		f.Location.Line, f.Location.Offset = int(l.Number), l.Offset
		return f
	}
	return failAt(l, evidence.CodeDecodeFailure, "callchain line: %v", err)
}

func (s *shard) newFrame(key uint64, t []byte) (uint32, error) {
	sym, mod, err := splitFrame(t)
	if err != nil {
		return 0, err
	}
	if !utf8.Valid(t) { // once per distinct line text, not per sample
		return 0, errNotUTF8
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
		return 0, s.in.Exceeded(collapsed.LimitFrames, nil)
	}
	s.lineIDs.put(key, t, id, lineCacheEntries)
	return id, nil
}

// header opens a sample at an event header line. With maybe set, a line
// that is not a header is not an error: ok says whether it was one.
func (s *shard) header(ln []byte, sc *lines.Scan, maybe bool) (ok bool, err error) {
	// Fast path: the same comm and pid as the last header, whose split
	// is known, and the same event.
	if n := len(s.lastPrefix); n > 0 && len(ln) > n && isSpace(ln[n]) && bytes.Equal(ln[:n], s.lastPrefix) {
		// Between pid and event only [cpu], time and period may stand; a
		// header ending in the event has no inline frame.
		rest := bytes.TrimRight(ln[n:], " ")
		if k := len(rest) - len(s.lastEvent); k > 0 && isSpace(rest[k-1]) && bytes.Equal(rest[k:], s.lastEvent) && timeFields(rest[:k]) {
			s.endSample(false)
			return true, s.openSample(s.lastSeries, nil, sc)
		}
		if h, ok := matchAfterPid(ln, n); ok && bytes.Equal(h.event, s.lastEvent[:len(s.lastEvent)-1]) {
			s.endSample(false)
			return true, s.openSample(s.lastSeries, h.tail, sc)
		}
	}
	h, ok := parseHeader(ln)
	if !ok {
		if maybe {
			return false, nil
		}
		return false, failAt(sc.Line(), evidence.CodeDecodeFailure, "not a perf script event header (want `comm pid[/tid] [time:] [period] event:`): %.80q", ln)
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
		// Evidence strings are UTF-8; perf prints comm and event bytes as
		// they are. Checked once per series, not per sample.
		if !utf8.Valid(s.keybuf) {
			return false, failAt(sc.Line(), evidence.CodeDecodeFailure, "event header: the process or event name is not valid UTF-8: %.80q", ln)
		}
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
	return true, s.openSample(sid, h.tail, sc)
}

func (s *shard) openSample(sid uint32, tail []byte, sc *lines.Scan) error {
	s.stack = append(s.stack[:0], sid)
	s.srcAt = s.srcAt[:0]
	s.inSample, s.terminated, s.hasInline = true, false, false
	if s.lastBlock { // only the last block's open sample can be truncated
		l := sc.Line()
		s.headerAt = evidence.Location{Line: int(l.Number), Offset: l.Offset}
	}
	if t, ok := inlineFrame(tail); ok {
		key := s.lineIDs.key(0, false, t)
		id, ok := s.lineIDs.get(key, t)
		if !ok {
			var err error
			if id, err = s.newFrame(key, t); err != nil {
				return s.frameErr(err, sc.Line())
			}
		}
		s.inline, s.hasInline = id, true
	}
	return nil
}

// comment reads the --header block's perf version; other comments are
// skipped.
func (s *shard) comment(ln []byte, sc *lines.Scan) error {
	const key = "# perf version :"
	if bytes.HasPrefix(ln, []byte(key)) {
		v := bytes.TrimSpace(ln[len(key):])
		if !utf8.Valid(v) {
			return failAt(sc.Line(), evidence.CodeDecodeFailure, "the perf version comment is not valid UTF-8")
		}
		s.perfVersion = string(v)
	}
	return nil
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
	if s.lprof != nil {
		s.addLines()
	}
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

// srcMark is a srcline of the open sample: the stack index of the frame
// it follows and its id in srcs.
type srcMark struct{ at, src uint32 }

// srcLine is a parsed srcline: file and 1-based line, line 0 when perf
// printed no resolved line (??:0, or a module and address).
type srcLine struct {
	file string
	line int64
}

// isSrcline reports whether a line that starts with a space and is not
// an event header is perf's srcline: two spaces, then text that is not
// a callchain line (an address, a symbol and a parenthesised module).
func isSrcline(ln []byte) bool {
	if len(ln) < 3 || ln[1] != ' ' || ln[2] == ' ' || ln[2] == '\t' {
		return false
	}
	rest := ln[2:]
	if sp := bytes.IndexByte(rest, ' '); sp > 0 && allHex(rest[:sp]) && bytes.HasSuffix(bytes.TrimRight(rest, " \r"), []byte(")")) {
		return false
	}
	return true
}

func allHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return len(b) > 0
}

// parseSrcline reads perf's "file:line" (addr2line's " (discriminator
// N)" dropped); ok is false for what is no resolved line: "??:0", or the
// module and address perf prints for code without line information.
func parseSrcline(t []byte) (file string, line int64, ok bool) {
	t = bytes.TrimRight(t, " \r")
	if i := bytes.Index(t, []byte(" (discriminator ")); i > 0 {
		t = t[:i]
	}
	i := bytes.LastIndexByte(t, ':')
	if i <= 0 || string(t[:i]) == "??" {
		return "", 0, false
	}
	n, err := strconv.ParseInt(string(t[i+1:]), 10, 64)
	if err != nil || n < 1 {
		return "", 0, false
	}
	return string(t[:i]), n, true
}

// srcline records the source line of the open sample's last frame (its
// inline frame when it has no callchain). The first one the shard meets
// starts its lines profile with the samples counted so far, which had
// none: each is its function's, line unknown.
func (s *shard) srcline(ln []byte, sc *lines.Scan) error {
	at := len(s.stack) - 1
	if at == 0 {
		if !s.hasInline {
			return nil // a line under a sample without a frame names nothing
		}
		at = 1
	}
	if s.lprof == nil {
		s.fold()
		s.lprof = collapsed.NewProfile()
		s.lprof.Merge(s.prof)
		s.srcIDs, s.srcs, s.lineFrames = map[string]uint32{}, []srcLine{{}}, map[[2]uint32]uint32{}
	}
	t := ln[2:]
	id, ok := s.srcIDs[string(t)]
	if !ok {
		if !utf8.Valid(t) {
			return failAt(sc.Line(), evidence.CodeDecodeFailure, "srcline: the source line is not valid UTF-8: %.80q", ln)
		}
		file, line, _ := parseSrcline(t)
		id = uint32(len(s.srcs))
		s.srcs = append(s.srcs, srcLine{file, line})
		s.srcIDs[string(t)] = id
	}
	s.srcAt = append(s.srcAt, srcMark{uint32(at), id})
	return nil
}

// addLines adds the closed sample to the lines profile: each frame with
// the srcline under it.
func (s *shard) addLines() {
	s.lstack = s.lstack[:0]
	m := 0
	for i := 1; i < len(s.stack); i++ {
		var src uint32
		for m < len(s.srcAt) && int(s.srcAt[m].at) <= i {
			if int(s.srcAt[m].at) == i {
				src = s.srcAt[m].src
			}
			m++
		}
		k := [2]uint32{s.stack[i], src}
		id, ok := s.lineFrames[k]
		if !ok {
			f := s.prof.Frames[s.stack[i]]
			if sl := s.srcs[src]; sl.line > 0 {
				f.File, f.Line = sl.file, sl.line
			}
			id = s.lprof.Frame(f)
			s.lineFrames[k] = id
		}
		s.lstack = append(s.lstack, id)
	}
	// The lines profile interns series itself: one first met after it was
	// made has no id there yet.
	s.lprof.Add(s.lprof.SeriesID(s.prof.Series[s.stack[0]]), s.lstack, 1, 1)
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

// Parse reads perf script text from r for in (its limits and threads
// option). Samples are parsed in parallel in blocks that end between
// samples; each worker aggregates into its own shard, and shards are
// merged when the input ends. Memory is the read buffers plus distinct
// frames, stacks and edges: it does not grow with input size. Nothing is
// returned on failure: the first failure in input order wins.
func Parse(ctx context.Context, in *formats.Input, r io.Reader, o Options) (*Result, error) {
	maxSamples := in.Limit(LimitSamples)
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	blocks := lines.NewBlocks(r, lines.BlockOptions{
		Size:     o.ChunkBytes,
		MaxLine:  int(in.Limit(collapsed.LimitLineBytes)),
		Limit:    collapsed.LimitLineBytes,
		Boundary: startsRecord,
		// Not a spec limit: max_stack_frames and max_line_bytes bound a
		// sample long before this in practice.
		MaxRecord:   maxSampleBytes,
		RecordLimit: "max_sample_bytes",
	})
	nbuf := 2 * workers
	pool := make(chan []byte, nbuf)
	for range nbuf {
		pool <- nil // allocated on first use
	}
	shards := make([]*shard, workers)
	errs := make([]struct {
		seq int
		err error
	}, workers)
	var (
		failed  atomic.Int64 // lowest failed block sequence number
		samples atomic.Int64
	)
	failed.Store(math.MaxInt64)
	run := func(w int, blk *lines.Block) {
		// Blocks after a failed one are skipped; earlier ones still run,
		// so the failure reported is the first in input order.
		if int64(blk.Seq) < failed.Load() {
			sh := shards[w]
			before := sh.samples
			n, err := sh.parseChunk(blk)
			if err == nil && samples.Add(sh.samples-before) > maxSamples {
				f := in.Exceeded(LimitSamples, nil)
				f.Location = evidence.Location{Line: 1, Offset: blk.Offset}
				err = f
			}
			if err == nil {
				blocks.Done(blk.Seq, n)
			} else {
				if errs[w].seq < 0 || blk.Seq < errs[w].seq {
					errs[w].seq, errs[w].err = blk.Seq, err
				}
				for cur := failed.Load(); int64(blk.Seq) < cur && !failed.CompareAndSwap(cur, int64(blk.Seq)); cur = failed.Load() {
				}
			}
		}
		pool <- blk.Buf
	}
	for w := range workers {
		shards[w] = newShard(in)
		shards[w].prof.KeepStacks = o.Stacks
		errs[w].seq = -1
	}
	// Even one worker runs beside the reader, so reading and parsing
	// overlap.
	work := make(chan *lines.Block, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for blk := range work {
				run(w, blk)
			}
		})
	}
	rseq, rerr := feed(ctx, in, blocks, o.BoundBytes, pool, work, &failed)
	close(work)
	wg.Wait()

	// Every block before the first failure was parsed (none of them
	// failed), so its line can be rebased.
	first := -1
	for i, e := range errs {
		if e.seq >= 0 && (first < 0 || e.seq < errs[first].seq) {
			first = i
		}
	}
	if first >= 0 {
		return nil, blocks.Locate(errs[first].seq, errs[first].err)
	}
	if rerr != nil {
		return nil, blocks.Locate(rseq, rerr)
	}
	res := &Result{Profile: shards[0].prof, Bytes: blocks.Offset()}
	for _, sh := range shards {
		sh.fold()
	}
	// The lines profile, when any shard met a srcline: a shard that met
	// none adds its functions, line unknown.
	for _, sh := range shards {
		if sh.lprof != nil {
			res.Lines = collapsed.NewProfile()
			break
		}
	}
	for _, sh := range shards {
		if res.Lines == nil {
			break
		}
		if sh.lprof != nil {
			res.Lines.Merge(sh.lprof)
		} else {
			res.Lines.Merge(sh.prof)
		}
	}
	if res.Lines != nil && int64(len(res.Lines.Frames)) > in.Limit(collapsed.LimitFrames) {
		return nil, in.Exceeded(collapsed.LimitFrames, int64(len(res.Lines.Frames)))
	}
	for i, sh := range shards {
		if i > 0 {
			res.Profile.Merge(sh.prof)
		}
		res.Samples += sh.samples
		res.NoStack += sh.noStack
		if sh.perfVersion != "" {
			res.PerfVersion = sh.perfVersion
		}
	}
	if int64(len(res.Profile.Frames)) > in.Limit(collapsed.LimitFrames) {
		return nil, in.Exceeded(collapsed.LimitFrames, int64(len(res.Profile.Frames)))
	}
	return res, nil
}

// feed sends the blocks to the workers in input order. On failure it
// returns the sequence number the failing data would have had (its line
// is relative to that block). A failure of a worker stops it early.
func feed(ctx context.Context, in *formats.Input, blocks *lines.Blocks, bound bool, pool chan []byte, work chan<- *lines.Block, failed *atomic.Int64) (int, error) {
	maxBytes := in.Limit(formats.LimitBytes)
	for failed.Load() == math.MaxInt64 {
		if err := ctx.Err(); err != nil {
			return blocks.Seq(), err
		}
		buf := <-pool
		blk, err := blocks.Next(buf)
		if errors.Is(err, io.EOF) {
			return blocks.Seq(), nil
		}
		if err != nil {
			pool <- buf
			return blocks.Seq(), evidence.Wrap(evidence.CodeIOFailure, err, "read perf script at byte %d", blocks.Offset())
		}
		if bound && blocks.Offset() > maxBytes {
			pool <- blk.Buf
			return blocks.Seq(), in.Exceeded(formats.LimitBytes, nil)
		}
		work <- blk
	}
	return blocks.Seq(), nil
}
