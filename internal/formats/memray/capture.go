package memray

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Record types of the all-allocations stream. A type byte with the high
// bit set is an allocation (7 flag bits), else with bit 6 a frame push,
// else with bit 5 an object record, else with bit 4 a frame pop; the rest
// are plain types.
const (
	recTrailer       = 1
	recMemory        = 2
	recNativeIndex   = 5
	recMapStart      = 6
	recSegmentHeader = 7
	recSegment       = 8
	recThread        = 10
	recContextSwitch = 12
	recCodeObject    = 14
	recFramePop      = 16
	recObject        = 32
	recFramePush     = 64
	recAllocation    = 128
)

// Record types of the aggregated file.
const (
	aggMemorySnapshot  = 1
	aggAllocation      = 2
	aggPythonTrace     = 3
	aggPythonFrame     = 4
	aggSurvivingObject = 13
	aggTrailer         = 15
)

// Allocators (memray's hooks::Allocator).
const (
	allocPymallocFree = 1
	allocFree         = 5
	allocMmap         = 14
	allocMunmap       = 15
)

var allocatorNames = [16]string{"", "PYMALLOC_FREE", "PYMALLOC_MALLOC", "PYMALLOC_CALLOC", "PYMALLOC_REALLOC",
	"FREE", "MALLOC", "REALLOC", "CALLOC", "POSIX_MEMALIGN", "ALIGNED_ALLOC", "MEMALIGN", "VALLOC", "PVALLOC", "MMAP", "MUNMAP"}

// pyFrame is a Python frame as memray records it: a code object and an
// instruction offset.
type pyFrame struct {
	code   uint64
	offset int32
	entry  bool
}

type codeObject struct {
	function, file string
	linetable      []byte
	firstLine      int32
}

// treeNode is a node of memray's frame tree: a frame under a parent node;
// node 0 is the empty stack.
type treeNode struct {
	frame  uint32
	parent uint32
	// The location of the node's stack for thread locTID (loc+1; 0:
	// none yet): nearly every stack is one thread's.
	locTID uint64
	loc    uint32
}

// usage is bytes and allocations.
type usage struct {
	bytes int64
	count int64
}

// location is one (thread, Python stack) with its usage: cur is the live
// usage now; snap its usage at peak snapAt, saved the first time it
// changed after that peak (see change).
type location struct {
	tid    uint64
	stack  uint32
	cur    usage
	snap   usage
	stamp  uint64 // peaks recorded before its last change
	snapAt uint64 // the peak snap is of; 0 for none
}

type locKey struct {
	tid   uint64
	stack uint32
	// With native rows: the allocation's native trace (a native frame
	// index, 0 for none) and the segment generation its ips resolve in.
	native, gen uint64
}

// nativeFrame is a NATIVE_TRACE_INDEX record: a return address and the
// index of its caller's frame (1-based; 0 ends the trace).
type nativeFrame struct {
	ip     uint64
	parent uint64
}

// image is one SEGMENT_HEADER of a memory map: a loaded module, its load
// bias, and its segments' absolute address ranges.
type image struct {
	path string
	base uint64
	segs []interval
}

type interval struct {
	start, end uint64
	loc        uint32
}

type thread struct {
	stack []uint32
	name  string
	named bool
	// The location of the stack whose top is node locNode (loc+1; 0:
	// none yet): allocations come in runs under one frame.
	locNode, loc uint32
	locNative    uint64
	locGen       uint64
}

// capture is the reader's state.
type capture struct {
	h          *header
	in         *formats.Input
	compressed bool

	// Stream decoding state. The pointer cache is a ring of 15 held
	// twice over, so that entry k (0 the newest) is cache[head+k] with no
	// wrap to test.
	cache                  [32]uint64
	head                   int
	lastPtr, lastIP, lastN uint64
	lastFirstLine          uint64
	tid                    uint64
	cur                    *thread
	threads                map[uint64]*thread
	threadOrder            []uint64

	frames    []pyFrame
	frameID   map[pyFrame]uint32
	nodes     []treeNode
	child     map[uint64]uint32 // parent<<32 | frame → node
	pushes    *pushMap
	codes     map[uint64]*codeObject
	native    int64 // native trace index records
	mapStarts int64
	segments  int64

	locs   []location
	locIdx map[locKey]uint32

	// Native rows (option native on a --native capture): the native
	// frames, the images of each segment generation (memory map), and
	// each location's native key (locNative[i] for location i).
	nativeRows   bool
	nativeFrames []nativeFrame
	generation   uint64
	images       map[uint64][]image
	locNative    []locKey

	live  *liveMap
	mmaps []interval

	// memray's high-watermark finder: heap is its current memory, peak
	// its highest, peaks how many times a record reached it.
	heap, peak uint64
	peaks      uint64

	// The allocation history, as scalar totals.
	records       int64 // allocation records, deallocations included
	allocations   int64
	allocated     uint64
	byAllocator   [16]int64
	memoryRecords int64
	maxRSS        uint64
	objects       int64
	trailer       bool
	truncated     error // why the stream ended without its trailer
	streamBytes   int64

	// Aggregated files: the writer's own populations.
	aggregated       bool
	aggRecords       int64
	aggHWM, aggLeak  usage
	surviving        int64
	snapshots        int64
	maxLimitFrames   int64
	maxLimitLocation int64
}

func newCapture(h *header, in *formats.Input) *capture {
	return &capture{h: h, in: in,
		threads: map[uint64]*thread{}, frameID: map[pyFrame]uint32{},
		nodes: []treeNode{{}}, child: map[uint64]uint32{}, codes: map[uint64]*codeObject{},
		locIdx: map[locKey]uint32{}, live: newLiveMap(), pushes: newPushMap(), images: map[uint64][]image{},
		maxLimitFrames: in.Limit(LimitFrames), maxLimitLocation: in.Limit(LimitLocations)}
}

func (c *capture) contextSwitch(tid uint64) {
	c.tid = tid
	t, ok := c.threads[tid]
	if !ok {
		t = &thread{}
		c.threads[tid] = t
		c.threadOrder = append(c.threadOrder, tid)
	}
	c.cur = t
}

// registerFrame is memray's frame registry: ids in order of first sight.
func (c *capture) registerFrame(f pyFrame) (uint32, error) {
	if id, ok := c.frameID[f]; ok {
		return id, nil
	}
	if int64(len(c.frames)) >= c.maxLimitFrames {
		return 0, c.in.Exceeded(LimitFrames, nil)
	}
	id := uint32(len(c.frames))
	c.frames = append(c.frames, f)
	c.frameID[f] = id
	return id, nil
}

// push is the node of frame f pushed on the stack whose top is parent.
func (c *capture) push(parent uint32, f pyFrame) (uint32, error) {
	if n, ok := c.pushes.get(parent, f); ok {
		return n, nil
	}
	id, err := c.registerFrame(f)
	if err != nil {
		return 0, err
	}
	n, err := c.traceIndex(parent, id)
	if err != nil {
		return 0, err
	}
	c.pushes.put(parent, f, n)
	return n, nil
}

// traceIndex is memray's FrameTree.getTraceIndex: the node of frame
// under parent, made when new.
func (c *capture) traceIndex(parent, frame uint32) (uint32, error) {
	k := uint64(parent)<<32 | uint64(frame)
	if n, ok := c.child[k]; ok {
		return n, nil
	}
	if int64(len(c.nodes)) >= c.maxLimitFrames {
		return 0, c.in.Exceeded(LimitFrames, nil)
	}
	n := uint32(len(c.nodes))
	c.nodes = append(c.nodes, treeNode{frame: frame, parent: parent})
	c.child[k] = n
	return n, nil
}

// location returns the index of the (thread, stack) location.
func (c *capture) location(tid uint64, stack uint32) (uint32, error) {
	n := &c.nodes[stack]
	if n.loc != 0 && n.locTID == tid {
		return n.loc - 1, nil
	}
	k := locKey{tid: tid, stack: stack}
	i, ok := c.locIdx[k]
	if !ok {
		if int64(len(c.locs)) >= c.maxLimitLocation {
			return 0, c.in.Exceeded(LimitLocations, nil)
		}
		i = uint32(len(c.locs))
		c.locs = append(c.locs, location{tid: tid, stack: stack, stamp: c.peaks})
		c.locIdx[k] = i
	}
	if n.loc == 0 {
		n.loc, n.locTID = i+1, tid
	}
	return i, nil
}

// change applies a usage delta to location i. Before its first change
// after a recorded peak, the location's usage is its usage at that peak:
// it is kept (snap), so that the usage at the last peak, the high
// watermark, is known at the end without a second pass.
func (c *capture) change(i uint32, count, bytes int64) {
	l := &c.locs[i]
	if l.stamp < c.peaks {
		l.snap, l.snapAt = l.cur, c.peaks
	}
	l.cur.count += count
	l.cur.bytes += bytes
	l.stamp = c.peaks
}

// atPeak is location l's usage at the high watermark: the last recorded
// peak, since a peak is recorded only when the heap reaches the highest
// size seen so far.
func (c *capture) atPeak(l *location) usage {
	switch {
	case l.stamp < c.peaks:
		return l.cur
	case l.snapAt == c.peaks && c.peaks > 0:
		return l.snap
	}
	return usage{}
}

// updatePeak is memray's HighWatermarkFinder.updatePeak, after every
// allocation record: the last record to reach the highest heap size is
// the high watermark.
func (c *capture) updatePeak() {
	if c.heap >= c.peak {
		c.peak = c.heap
		c.peaks++
	}
}

// allocation applies one allocation record, as memray's high-watermark
// finder and snapshot aggregator do: a simple allocation replaces any
// live one at its address, a free forgets an unknown address, a munmap
// frees, shrinks or splits the mapped ranges it overlaps.
func (c *capture) allocation(addr, size uint64, allocator byte) error {
	switch allocator {
	case allocFree, allocPymallocFree:
		c.free(addr)
		return nil
	case allocMmap:
		c.countAllocation(size, allocator)
		loc, err := c.stackLocation()
		if err != nil {
			return err
		}
		if size > 0 {
			c.mmaps = append(c.mmaps, interval{addr, addr + size, loc})
			c.change(loc, 1, int64(size))
		}
		c.heap += size
	case allocMunmap:
		c.records++
		c.munmap(addr, size)
	default:
		return c.alloc(addr, size, allocator)
	}
	c.updatePeak()
	return nil
}

func (c *capture) countAllocation(size uint64, allocator byte) {
	c.records++
	c.allocations++
	c.allocated += size
	c.byAllocator[allocator]++
}

// free is a free record: the live allocation at addr, if any, goes.
func (c *capture) free(addr uint64) {
	c.records++
	if v, ok := c.live.take(liveKey(addr)); ok {
		c.change(v.loc, -1, -int64(v.size))
		c.heap -= v.size
	}
	c.updatePeak()
}

// alloc is a simple allocation record (malloc, realloc, pymalloc's...).
func (c *capture) alloc(addr, size uint64, allocator byte) error {
	c.countAllocation(size, allocator)
	loc, err := c.stackLocation()
	if err != nil {
		return err
	}
	if old, ok := c.live.put(liveKey(addr), liveVal{size: size, loc: loc}); ok {
		// memray's finder keeps counting the replaced allocation's
		// bytes; its snapshot forgets the allocation. So does this.
		c.change(old.loc, -1, -int64(old.size))
	}
	c.change(loc, 1, int64(size))
	c.heap += size
	c.updatePeak()
	return nil
}

func (c *capture) stackLocation() (uint32, error) {
	t := c.cur
	var stack uint32
	if n := len(t.stack); n > 0 {
		stack = t.stack[n-1]
	}
	if c.nativeRows {
		if t.loc != 0 && t.locNode == stack && t.locNative == c.lastN && t.locGen == c.generation {
			return t.loc - 1, nil
		}
		i, err := c.nativeLocation(c.tid, stack, c.lastN, c.generation)
		if err != nil {
			return 0, err
		}
		t.locNode, t.loc, t.locNative, t.locGen = stack, i+1, c.lastN, c.generation
		return i, nil
	}
	if t.loc != 0 && t.locNode == stack {
		return t.loc - 1, nil
	}
	i, err := c.location(c.tid, stack)
	if err != nil {
		return 0, err
	}
	t.locNode, t.loc = stack, i+1
	return i, nil
}

// nativeLocation is location with the allocation's native trace (the
// last native frame id read) and segment generation in its identity.
func (c *capture) nativeLocation(tid uint64, stack uint32, native, gen uint64) (uint32, error) {
	k := locKey{tid: tid, stack: stack, native: native, gen: gen}
	i, ok := c.locIdx[k]
	if !ok {
		if int64(len(c.locs)) >= c.maxLimitLocation {
			return 0, c.in.Exceeded(LimitLocations, nil)
		}
		i = uint32(len(c.locs))
		c.locs = append(c.locs, location{tid: tid, stack: stack, stamp: c.peaks})
		c.locNative = append(c.locNative, k)
		c.locIdx[k] = i
	}
	return i, nil
}

func (c *capture) munmap(addr, size uint64) {
	if size == 0 {
		return
	}
	end := addr + size
	kept := c.mmaps[:0:0]
	var freed uint64
	for _, iv := range c.mmaps {
		lo, hi := max(iv.start, addr), min(iv.end, end)
		if hi <= lo {
			kept = append(kept, iv)
			continue
		}
		n := hi - lo
		freed += n
		switch {
		case lo == iv.start && hi == iv.end:
			c.change(iv.loc, -1, -int64(n))
		case lo == iv.start:
			c.change(iv.loc, 0, -int64(n))
			kept = append(kept, interval{hi, iv.end, iv.loc})
		case hi == iv.end:
			c.change(iv.loc, 0, -int64(n))
			kept = append(kept, interval{iv.start, lo, iv.loc})
		default:
			c.change(iv.loc, 1, -int64(n))
			kept = append(kept, interval{iv.start, lo, iv.loc}, interval{hi, iv.end, iv.loc})
		}
	}
	c.mmaps = kept
	c.heap -= freed
}

// pointer reads an allocation's or object's address: a hit in the cache
// of the 15 latest new addresses, or a delta-encoded address (>>3) that
// enters the cache.
func (c *capture) pointer(s *source, idx byte) (uint64, error) {
	if idx != 15 {
		return c.cached(int(idx)), nil
	}
	d, err := s.varint()
	if err != nil {
		return 0, err
	}
	return c.newPointer(d), nil
}

// newPointer applies a zig-zag delta to the last new address (>>3); the
// address becomes entry 0 of the cache and the oldest (entry 14) drops.
func (c *capture) newPointer(d uint64) uint64 {
	c.lastPtr += unzigzag(d)
	addr := c.lastPtr << 3
	c.head--
	if c.head < 0 {
		c.head = 14
	}
	c.cache[c.head&31] = addr
	c.cache[(c.head+15)&31] = addr
	return addr
}

func (c *capture) codeObject(s *source) error {
	id, err := s.varint()
	if err != nil {
		return err
	}
	co := &codeObject{}
	if co.function, err = s.cstring(); err != nil {
		return err
	}
	if co.file, err = s.cstring(); err != nil {
		return err
	}
	if !utf8.ValidString(co.function) || !utf8.ValidString(co.file) {
		// CPython hands memray UTF-8; memray's own reader fails here too.
		return errors.New("a code object's function or file name is not valid UTF-8")
	}
	fl, err := s.delta(&c.lastFirstLine)
	if err != nil {
		return err
	}
	co.firstLine = int32(fl)
	n, err := s.varint()
	if err != nil {
		return err
	}
	if co.linetable, err = s.bytes(n); err != nil {
		return err
	}
	c.codes[id] = co
	return nil
}

func (c *capture) segmentHeader(s *source) error {
	path, err := s.cstring()
	if err != nil {
		return err
	}
	n, err := s.varint()
	if err != nil {
		return err
	}
	base, err := s.u64()
	if err != nil {
		return err
	}
	var img *image
	if c.nativeRows {
		if !utf8.ValidString(path) {
			path = strings.ToValidUTF8(path, "\uFFFD")
		}
		c.images[c.generation] = append(c.images[c.generation], image{path: path, base: base})
		imgs := c.images[c.generation]
		img = &imgs[len(imgs)-1]
	}
	for i := uint64(0); i < n; i++ {
		at := s.offset()
		t, err := s.byte()
		if err != nil {
			return err
		}
		if t != recSegment {
			return s.failure(at, "segment %d of %d of an image is a record of type %d, not a segment", i+1, n, t)
		}
		vaddr, err := s.u64()
		if err != nil {
			return err
		}
		memsz, err := s.varint()
		if err != nil {
			return err
		}
		c.segments++
		if img != nil {
			if int64(c.segments) > c.maxLimitFrames {
				return c.in.Exceeded(LimitFrames, nil)
			}
			start := base + vaddr
			img.segs = append(img.segs, interval{start: start, end: start + memsz})
		}
	}
	return nil
}

func (c *capture) nativeIndex(s *source) error {
	ip, err := s.delta(&c.lastIP)
	if err != nil {
		return err
	}
	parent, err := s.delta(&c.lastN)
	if err != nil {
		return err
	}
	c.native++
	if c.nativeRows {
		// memray's writer names a caller already written; anything else
		// would make the trace walk loop.
		if parent > uint64(len(c.nativeFrames)) {
			return fmt.Errorf("native frame %d names caller frame %d, which is not written yet", len(c.nativeFrames)+1, parent)
		}
		if int64(len(c.nativeFrames)) >= c.maxLimitFrames {
			return c.in.Exceeded(LimitFrames, nil)
		}
		c.nativeFrames = append(c.nativeFrames, nativeFrame{ip: ip, parent: parent})
	}
	return nil
}

func (c *capture) threadName(s *source) error {
	name, err := s.cstring()
	if err != nil {
		return err
	}
	if !utf8.ValidString(name) {
		return errors.New("a thread name is not valid UTF-8")
	}
	t, ok := c.threads[c.tid]
	if !ok {
		c.contextSwitch(c.tid)
		t = c.cur
	}
	t.name, t.named = name, true
	return nil
}

// generalOnly turns the fast path off: the test holding the fast path
// to the general reader sets it.
var generalOnly bool

// readAll reads the all-allocations record stream to its trailer.
func (c *capture) readAll(ctx context.Context, s *source) error {
	fast := c.fastRecords
	if generalOnly {
		fast = nil
	}
	return c.readRecords(ctx, s, c.record, fast, streamEnds{
		eof:    "the stream ends without memray's trailer record",
		inside: "the stream ends inside a record",
		zeros:  "the stream ends in zero padding without memray's trailer record: the tracked process did not finish",
	})
}

// streamEnds words, for the summary, how a record stream ends short of
// its trailer: at the end of the file, inside a record (memray's reader
// stops at a record it cannot finish, as for a capture whose process was
// killed), or in the zero padding of a file the writer never finished.
type streamEnds struct{ eof, inside, zeros string }

// readRecords hands each record of the stream to record, until the
// trailer or an end short of it (noted as truncation), under the records
// limit. fast, when given, applies the common records first, as many as
// it can (see fastRecords); record reads the one it stopped at.
func (c *capture) readRecords(ctx context.Context, s *source, record func(*source, byte, int64) error,
	fast func(*source, int64) (int64, error), ends streamEnds) error {
	maxRecords := c.in.Limit(LimitRecords)
	var n, check int64
	for {
		if n >= check {
			if err := ctx.Err(); err != nil {
				return err
			}
			check = n + 0x10000
		}
		if fast != nil {
			k, err := fast(s, maxRecords-n)
			n += k
			if err != nil {
				return err
			}
		}
		at := s.offset()
		b, err := s.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.truncated = errors.New(ends.eof)
				return nil
			}
			return err
		}
		n++
		if n > maxRecords {
			return c.in.ExceededAt(LimitRecords, nil, at)
		}
		err = record(s, b, at)
		switch {
		case err == nil:
		case err == errTrailer:
			c.trailer = true
			return nil
		case err == errZeroTail:
			c.truncated = errors.New(ends.zeros)
			return nil
		case errors.Is(err, errTruncated):
			c.truncated = errors.New(ends.inside)
			return nil
		case err != nil:
			return wrapAt(s, at, err)
		}
	}
}

var (
	errTrailer  = errors.New("trailer")
	errZeroTail = errors.New("zero tail")
)

// wrapAt types err as the failure of the record at offset at; a typed
// failure (a crossed limit) passes as it is.
func wrapAt(s *source, at int64, err error) error {
	var f *evidence.Failure
	if errors.As(err, &f) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.failure(at, "%v", err)
}

func (c *capture) record(s *source, b byte, at int64) error {
	switch {
	case b&recAllocation != 0:
		if c.cur == nil {
			return s.failure(at, "an allocation before any context switch")
		}
		addr, err := c.pointer(s, (b>>3)&0x0f)
		if err != nil {
			return err
		}
		allocator := b & 7
		if allocator == 0 {
			if allocator, err = s.byte(); err != nil {
				return err
			}
			if allocator == 0 || allocator > allocMunmap {
				return s.failure(at, "unknown allocator %d", allocator)
			}
		}
		simpleFree := allocator == allocFree || allocator == allocPymallocFree
		if c.h.nativeTraces && !simpleFree {
			if _, err := s.delta(&c.lastN); err != nil {
				return err
			}
		}
		var size uint64
		if !simpleFree {
			if size, err = s.varint(); err != nil {
				return err
			}
		}
		return c.allocation(addr, size, allocator)
	case b&recFramePush != 0:
		if c.cur == nil {
			return s.failure(at, "a frame push before any context switch")
		}
		code, err := s.varint()
		if err != nil {
			return err
		}
		off, err := s.svarint()
		if err != nil {
			return err
		}
		var parent uint32
		if n := len(c.cur.stack); n > 0 {
			parent = c.cur.stack[n-1]
		}
		node, err := c.push(parent, pyFrame{code: code, offset: int32(off), entry: b&1 != 0})
		if err != nil {
			return err
		}
		c.cur.stack = append(c.cur.stack, node)
		return nil
	case b&recObject != 0:
		if c.cur == nil {
			return s.failure(at, "an object record before any context switch")
		}
		if _, err := c.pointer(s, (b>>1)&0x0f); err != nil {
			return err
		}
		if c.h.nativeTraces && b&1 != 0 {
			if _, err := s.delta(&c.lastN); err != nil {
				return err
			}
		}
		c.objects++
		return nil
	case b&recFramePop != 0:
		if c.cur == nil {
			return s.failure(at, "a frame pop before any context switch")
		}
		n := int(b&0x0f) + 1
		if n > len(c.cur.stack) {
			return s.failure(at, "a pop of %d frames from a stack of %d", n, len(c.cur.stack))
		}
		c.cur.stack = c.cur.stack[:len(c.cur.stack)-n]
		return nil
	}
	switch b {
	case recTrailer:
		return errTrailer
	case recMemory:
		rss, err := s.varint()
		if err != nil {
			return err
		}
		if _, err := s.varint(); err != nil {
			return err
		}
		c.memoryRecords++
		c.maxRSS = max(c.maxRSS, rss)
		return nil
	case recContextSwitch:
		tid, err := s.u64()
		if err != nil {
			return err
		}
		c.contextSwitch(tid)
		return nil
	case recCodeObject:
		return c.codeObject(s)
	case recNativeIndex:
		return c.nativeIndex(s)
	case recMapStart:
		c.mapStarts++
		c.generation++
		return nil
	case recSegmentHeader:
		return c.segmentHeader(s)
	case recThread:
		return c.threadName(s)
	case 0:
		return c.zeroTail(s, at)
	}
	return s.failure(at, "unknown record type 0x%02x", b)
}

// zeroTail handles a zero type byte. memray grows an uncompressed capture
// in zero-filled chunks, so a capture whose process died ends in zeros;
// its reader ignores them. Zeros to the end of the stream are that
// ending; anything else after a zero type byte is corrupt.
func (c *capture) zeroTail(s *source, at int64) error {
	err := s.rest(func(b []byte) error {
		for _, x := range b {
			if x != 0 {
				return s.failure(at, "record type 0x00, and non-zero bytes after it")
			}
		}
		return nil
	})
	if errors.Is(err, io.EOF) {
		return errZeroTail
	}
	return err
}

// readAggregated reads an aggregated capture (memray run --aggregate):
// the writer's own high-watermark and leak contributions per location,
// with the frame tree and code objects they name.
func (c *capture) readAggregated(ctx context.Context, s *source) error {
	c.aggregated = true
	return c.readRecords(ctx, s, c.aggRecord, nil, streamEnds{
		eof:    "the aggregated capture ends without its trailer record",
		inside: "the aggregated capture ends inside a record",
		zeros:  "the aggregated capture ends in zero padding without its trailer record",
	})
}

func (c *capture) aggRecord(s *source, b byte, at int64) error {
	switch b {
	case aggMemorySnapshot:
		f, err := s.fixed(24)
		if err != nil {
			return err
		}
		c.snapshots++
		c.maxRSS = max(c.maxRSS, binary.LittleEndian.Uint64(f[8:]))
		return nil
	case aggAllocation:
		f, err := s.fixed(72)
		if err != nil {
			return err
		}
		tid := binary.LittleEndian.Uint64(f[0:])
		allocator := f[8]
		node := binary.LittleEndian.Uint64(f[24:])
		hwmN, leakN := binary.LittleEndian.Uint64(f[40:]), binary.LittleEndian.Uint64(f[48:])
		hwmB, leakB := binary.LittleEndian.Uint64(f[56:]), binary.LittleEndian.Uint64(f[64:])
		if allocator == 0 || allocator > allocMunmap {
			return s.failure(at, "unknown allocator %d", allocator)
		}
		if node >= uint64(len(c.nodes)) {
			return s.failure(at, "an aggregated allocation names stack %d; the capture's frame tree has %d nodes", node, len(c.nodes)-1)
		}
		if _, ok := c.threads[tid]; !ok {
			c.threads[tid] = &thread{}
			c.threadOrder = append(c.threadOrder, tid)
		}
		var i uint32
		if c.nativeRows {
			i, err = c.nativeLocation(tid, uint32(node), binary.LittleEndian.Uint64(f[16:]), binary.LittleEndian.Uint64(f[32:]))
		} else {
			i, err = c.location(tid, uint32(node))
		}
		if err != nil {
			return err
		}
		// The writer's contributions, one location per (thread, stack):
		// the high watermark in snap, the leaks in cur.
		l := &c.locs[i]
		l.snap.count += int64(hwmN)
		l.snap.bytes += int64(hwmB)
		l.cur.count += int64(leakN)
		l.cur.bytes += int64(leakB)
		c.aggRecords++
		c.aggHWM.count += int64(hwmN)
		c.aggHWM.bytes += int64(hwmB)
		c.aggLeak.count += int64(leakN)
		c.aggLeak.bytes += int64(leakB)
		return nil
	case aggPythonTrace:
		frame, err := s.varint()
		if err != nil {
			return err
		}
		parent, err := s.varint()
		if err != nil {
			return err
		}
		if frame >= uint64(len(c.frames)) || parent >= uint64(len(c.nodes)) {
			return s.failure(at, "a trace node names frame %d under node %d; %d frames and %d nodes are known", frame, parent, len(c.frames), len(c.nodes)-1)
		}
		_, err = c.traceIndex(uint32(parent), uint32(frame))
		return err
	case aggPythonFrame:
		id, err := s.varint()
		if err != nil {
			return err
		}
		code, err := s.varint()
		if err != nil {
			return err
		}
		off, err := s.svarint()
		if err != nil {
			return err
		}
		e, err := s.byte()
		if err != nil {
			return err
		}
		got, err := c.registerFrame(pyFrame{code: code, offset: int32(off), entry: e != 0})
		if err != nil {
			return err
		}
		if uint64(got) != id {
			return s.failure(at, "frame index %d out of order (expected %d)", id, got)
		}
		return nil
	case recNativeIndex:
		return c.nativeIndex(s)
	case recMapStart:
		c.mapStarts++
		c.generation++
		return nil
	case recSegmentHeader:
		return c.segmentHeader(s)
	case recThread:
		return c.threadName(s)
	case recContextSwitch:
		tid, err := s.u64()
		if err != nil {
			return err
		}
		c.contextSwitch(tid)
		return nil
	case aggSurvivingObject:
		if _, err := s.varint(); err != nil {
			return err
		}
		if c.h.nativeTraces {
			if _, err := s.varint(); err != nil {
				return err
			}
		}
		c.surviving++
		return nil
	case recCodeObject:
		return c.codeObject(s)
	case aggTrailer:
		return errTrailer
	case 0:
		return c.zeroTail(s, at)
	}
	return s.failure(at, "unknown aggregated record type 0x%02x", b)
}
