// Package memray reads Memray capture files natively (no Python): the
// `memray\0` header, LZ4-frame-compressed captures (memray compresses on
// exit by default), and the record streams of header versions 12 and 13
// (memray 1.19 and 1.20), both the all-allocations stream and the
// aggregated (--aggregate) file. It emits memory.frames for one
// population, the high watermark (default) or the allocations still live
// at the end (leaks), computed as memray's FileReader computes them, in
// one pass.
//
// Memory grows with the live allocations, the distinct Python frames and
// the distinct (thread, Python stack) locations, never with the number
// of records: the allocation history contributes scalar totals only.
//
// It imports formats, evidence, param, table and unit.
package memray

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/pierrec/lz4/v4"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoder version recorded in table headers.
const Version = "1"

// Limit and option names.
const (
	LimitRecords      = "max_records"
	LimitDecompressed = formats.LimitDecompressed
	LimitFrames       = "max_frames"
	LimitLocations    = "max_locations"
	LimitString       = "max_string_bytes"
	OptionPopulation  = "population"
	OptionNative      = "native"
)

// Spec is the memray format.
var Spec = withStacks(formats.MemoryProfile(formats.Spec{
	Name:  "memray",
	Title: "Memray capture",
	// memray names captures memray-<script>.<pid>.bin; .bin says nothing,
	// so captures are recognized by content.
	Sniff: sniff,
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 64 << 30, Unit: "bytes", Doc: "bytes in the capture file"},
		{Name: LimitDecompressed, Default: 1 << 40, Unit: "bytes", Doc: "bytes of the decompressed record stream"},
		{Name: LimitRecords, Default: 1 << 40, Unit: "records", Doc: "records in the stream"},
		{Name: LimitFrames, Default: 20_000_000, Unit: "count", Doc: "distinct Python frames and call-tree nodes"},
		{Name: LimitLocations, Default: 20_000_000, Unit: "count", Doc: "distinct (thread, Python stack) allocation locations"},
		{Name: LimitString, Default: 16 << 20, Unit: "bytes", Doc: "bytes in one string or line table of the capture"},
	},
	Options: []param.Param{
		{Name: OptionPopulation, Type: param.Enum, Enum: []string{table.PopulationHighWatermark, table.PopulationLeaked},
			Default: table.PopulationHighWatermark,
			Doc:     "which allocations the frame rows describe: those live at the high watermark, or those still live when tracking ended (leaks); the summary's totals are the same for both"},
		{Name: OptionNative, Type: param.Bool, Default: false,
			Doc: "with a --native capture, native frames as rows too: unresolved frames named by their offset in the module the capture's segment maps place them in (no symbols), innermost in each stack, the Python frames outside them"},
		formats.ValueBytesParam,
	},
	Producer: "memray run (memray 1.19–1.20)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}))

var (
	magic    = []byte("memray\x00")
	lz4Magic = []byte{0x04, 0x22, 0x4D, 0x18}
)

// sniff recognizes the memray magic, plain or at the start of an LZ4
// frame's decompressed bytes.
func sniff(prefix []byte) formats.Verdict {
	if bytes.HasPrefix(prefix, magic) {
		return formats.Yes
	}
	if len(prefix) < len(lz4Magic) {
		if bytes.HasPrefix(lz4Magic, prefix) {
			return formats.NeedMore
		}
		return formats.No
	}
	if !bytes.HasPrefix(prefix, lz4Magic) {
		return formats.No
	}
	lit, ok := lz4Literals(prefix)
	switch {
	case !ok && len(prefix) < formats.SniffBytes:
		return formats.No
	case !ok:
		return formats.NeedMore
	case bytes.HasPrefix(lit, magic):
		return formats.Yes
	case len(lit) < len(magic) && bytes.HasPrefix(magic, lit) && len(prefix) >= formats.SniffBytes:
		return formats.NeedMore
	}
	return formats.No
}

// lz4Literals returns the first bytes an LZ4 frame decompresses to without
// decompressing a block (a block may be far larger than a sniffed
// prefix): an uncompressed block's bytes, or a compressed block's first
// literal run, where a stream that starts with a magic keeps it. ok is
// false when the prefix is too short to tell.
func lz4Literals(p []byte) (lit []byte, ok bool) {
	if len(p) < 7 {
		return nil, false
	}
	flg := p[4]
	i := 6
	if flg&0x08 != 0 { // content size
		i += 8
	}
	if flg&0x01 != 0 { // dictionary id
		i += 4
	}
	i++ // header checksum
	if len(p) < i+5 {
		return nil, false
	}
	size := binary.LittleEndian.Uint32(p[i:])
	i += 4
	if size&0x80000000 != 0 { // stored uncompressed
		return p[i:], true
	}
	token := p[i]
	i++
	n := int(token >> 4)
	if n == 15 {
		for {
			if i >= len(p) {
				return nil, false
			}
			b := p[i]
			i++
			n += int(b)
			if b != 255 {
				break
			}
		}
	}
	return p[i:min(len(p), i+n)], true
}

// File formats of the header.
const (
	fileAll        = 0
	fileAggregated = 1
)

// header is the capture's header record.
type header struct {
	version        int32
	pythonVersion  int32
	nativeTraces   bool
	fileFormat     byte
	nAllocations   uint64 // the writer's count; the reader counts its own
	nFrames        uint64
	startMS, endMS int64
	commandLine    string
	pid            int32
	mainTID        uint64
	skippedMain    uint64
	pyAllocator    byte
	tracePyAlloc   bool
	trackObjects   bool
	libdest        string
	sitePackages   []string
	sysPath        []string
}

// headerReleases names the memray releases that write each header
// version this decoder knows of; the others are refused by number.
var headerReleases = map[int32]string{
	12: "memray 1.19",
	13: "memray 1.20",
}

func readHeader(s *source) (*header, error) {
	b, err := s.fixed(len(magic))
	if err != nil && !errors.Is(err, errTruncated) {
		return nil, err // the LZ4 frame's own failure
	}
	if err != nil || !bytes.Equal(b, magic) {
		return nil, &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: "not a Memray capture: the file does not start with the memray magic (plain or LZ4-compressed)"}
	}
	h := &header{}
	cut := func(err error) error {
		if !errors.Is(err, errTruncated) {
			return err // a crossed limit, the LZ4 frame's own failure
		}
		return s.failure(0, "the header is cut")
	}
	if h.version, err = s.i32(); err != nil {
		return nil, cut(err)
	}
	if _, ok := headerReleases[h.version]; !ok {
		return nil, &evidence.Failure{Code: evidence.CodeUnsupportedFormat, Location: evidence.Location{Offset: 7},
			Details: evidence.Object{"header_version": int64(h.version), "supported": []any{int64(12), int64(13)}},
			Message: fmt.Sprintf("Memray capture header version %d is not supported: this decoder reads versions 12 (memray 1.19) and 13 (memray 1.20); read it with the memray release that wrote it (memray stats, memray flamegraph) or recapture with memray 1.20", h.version)}
	}
	if h.pythonVersion, err = s.i32(); err != nil {
		return nil, cut(err)
	}
	f, err := s.fixed(2 + 32)
	if err != nil {
		return nil, cut(err)
	}
	h.nativeTraces, h.fileFormat = f[0] != 0, f[1]
	h.nAllocations = binary.LittleEndian.Uint64(f[2:])
	h.nFrames = binary.LittleEndian.Uint64(f[10:])
	h.startMS = int64(binary.LittleEndian.Uint64(f[18:]))
	h.endMS = int64(binary.LittleEndian.Uint64(f[26:]))
	if h.fileFormat != fileAll && h.fileFormat != fileAggregated {
		return nil, s.failure(0, "unknown file format %d in the header", h.fileFormat)
	}
	if h.commandLine, err = s.cstring(); err != nil {
		return nil, cut(err)
	}
	if h.pid, err = s.i32(); err != nil {
		return nil, cut(err)
	}
	if h.mainTID, err = s.u64(); err != nil {
		return nil, cut(err)
	}
	if h.skippedMain, err = s.u64(); err != nil {
		return nil, cut(err)
	}
	f, err = s.fixed(3)
	if err != nil {
		return nil, cut(err)
	}
	h.pyAllocator, h.tracePyAlloc, h.trackObjects = f[0], f[1] != 0, f[2] != 0
	if h.version >= 13 {
		// The traced process's module search paths: libdest, then two
		// lists of absolute paths, each ended by an empty string.
		if h.libdest, err = s.cstring(); err != nil {
			return nil, cut(err)
		}
		for _, list := range []*[]string{&h.sitePackages, &h.sysPath} {
			for {
				p, err := s.cstring()
				if err != nil {
					return nil, cut(err)
				}
				if p == "" {
					break
				}
				*list = append(*list, p)
			}
		}
	}
	return h, nil
}

// pythonAllocators are the names of the header's python_allocator.
var pythonAllocators = map[byte]string{1: "pymalloc", 2: "pymalloc_debug", 3: "malloc", 4: "other", 5: "mimalloc", 6: "mimalloc_debug"}

// countReader counts the bytes of the record stream and bounds them.
type countReader struct {
	r   io.Reader
	n   int64
	max int64
	in  *formats.Input
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.n >= c.max {
		return 0, c.in.Exceeded(LimitDecompressed, nil)
	}
	if room := c.max - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	c, err := read(ctx, in)
	if err != nil {
		return err
	}
	return c.emit(in, out)
}

// read reads the capture's header and records into the reader's state.
func read(ctx context.Context, in *formats.Input) (*capture, error) {
	if err := in.CheckSize(); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(in.R, 1<<16)
	head, _ := br.Peek(len(lz4Magic))
	var r io.Reader = br
	compressed := bytes.Equal(head, lz4Magic)
	if compressed {
		zr := lz4.NewReader(br)
		r = zr
	}
	cr := &countReader{r: r, max: in.Limit(LimitDecompressed), in: in}
	s := newSource(cr)
	s.lz4, s.maxString = compressed, in.Limit(LimitString)
	s.stringErr = func(observed any, off int64) error { return in.ExceededAt(LimitString, observed, off) }
	h, err := readHeader(s)
	if err != nil {
		return nil, lz4Failure(err, compressed)
	}
	c := newCapture(h, in)
	c.compressed = compressed
	c.nativeRows = h.nativeTraces && in.Bool(OptionNative)
	if h.fileFormat == fileAggregated {
		err = c.readAggregated(ctx, s)
	} else {
		err = c.readAll(ctx, s)
	}
	if err != nil {
		return nil, lz4Failure(err, compressed)
	}
	c.streamBytes = cr.n
	return c, nil
}

// lz4Failure types an error of the LZ4 frame reader (a corrupt or cut
// frame) as the capture's DECODE_FAILURE; others pass.
func lz4Failure(err error, compressed bool) error {
	if _, ok := err.(*evidence.Failure); ok || !compressed {
		return err
	}
	if err == context.Canceled || err == context.DeadlineExceeded {
		return err
	}
	return &evidence.Failure{Code: evidence.CodeDecodeFailure,
		Message: fmt.Sprintf("Memray capture: the LZ4 frame is corrupt or cut: %v", err)}
}
