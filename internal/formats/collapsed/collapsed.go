// Package collapsed decodes folded ("collapsed") stacks, one stack per
// line, root first, frames separated by ';' and a sample count after the
// last space: `main;parse;lex 123`, as written by stackcollapse-perf.pl,
// inferno-collapse-* and py-spy --format raw. It also holds Profile, the
// stack aggregation that the perf-script decoder shares, so both formats
// weigh frames and edges identically.
package collapsed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// Limit names.
const (
	LimitBytes     = "max_bytes"
	LimitLineBytes = "max_line_bytes"
	LimitStack     = "max_stack_frames"
	LimitFrames    = "max_distinct_frames"
)

// Version is the decoder version, part of table headers and cache keys.
const Version = "1"

// parserLimits are the raw ceilings; rows are bounded by projections.
var parserLimits = []formats.Limit{
	{Name: LimitBytes, Default: 16 << 30, Unit: "bytes", Doc: "bytes of input read"},
	{Name: LimitLineBytes, Default: 1 << 20, Unit: "bytes", Doc: "bytes in one line"},
	{Name: LimitStack, Default: 16384, Unit: "frames", Doc: "frames in one stack"},
	{Name: LimitFrames, Default: 1 << 22, Unit: "frames", Doc: "distinct frames"},
}

// Spec is the collapsed-stacks format.
var Spec = &formats.Spec{
	Name:     "collapsed-stacks",
	Title:    "Folded (collapsed) stacks",
	Family:   "CPU profiles",
	Suffixes: []string{".folded", ".collapsed", ".folded.txt", ".collapsed.txt"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.CPUFrames.Schema, table.CPUEdges.Schema},
	Limits:   parserLimits,
	Producer: "stackcollapse (FlameGraph, inferno, py-spy raw)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(Decode),
}

// line is one parsed folded line: frames root first, and the count.
type line struct {
	stack []byte
	count int64
}

var errNoCount = errors.New("no sample count after the last space")

// parseLine splits `frames count`. It is both the decoder's and the
// sniffer's line splitter, so detection and decoding cannot disagree.
func parseLine(b []byte) (line, error) {
	sp := bytes.LastIndexAny(b, " \t")
	if sp < 0 {
		return line{}, errNoCount
	}
	digits := b[sp+1:]
	if len(digits) == 0 {
		return line{}, errNoCount
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return line{}, fmt.Errorf("sample count %q is not a non-negative integer", digits)
		}
		if n > (1<<63-1-int64(c-'0'))/10 {
			return line{}, fmt.Errorf("sample count %q overflows", digits)
		}
		n = n*10 + int64(c-'0')
	}
	stack := bytes.TrimRight(b[:sp], " \t")
	if len(stack) == 0 {
		return line{}, errors.New("empty stack")
	}
	return line{stack: stack, count: n}, nil
}

// Sniff says Yes when every complete line of the prefix is a folded line
// and at least one has more than one frame.
func Sniff(prefix []byte) formats.Verdict {
	multi := false
	for {
		nl := bytes.IndexByte(prefix, '\n')
		if nl < 0 {
			break
		}
		ln := bytes.TrimRight(prefix[:nl], "\r")
		prefix = prefix[nl+1:]
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		l, err := parseLine(ln)
		if err != nil || bytes.Contains(l.stack, []byte(";;")) || l.stack[0] == ';' {
			return formats.No
		}
		if bytes.IndexByte(l.stack, ';') >= 0 {
			multi = true
		}
	}
	if multi {
		return formats.Yes
	}
	return formats.NeedMore
}

// Decode reads folded stacks into cpu.frames and cpu.edges.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	p, err := Parse(ctx, in.R, in.Limits)
	if err != nil {
		return err
	}
	return p.Emit(out, EmitOptions{
		ArtifactID: in.Artifact.ID,
		Tables:     []string{table.CPUFrames.Name, table.CPUEdges.Name},
		Complete:   true,
		Limitations: []string{
			"folded stacks carry no module, file or line: frames are identified by their text alone",
			"folded stacks carry no process or thread series; a root frame naming a process is kept as a frame",
		},
	})
}

func failAt(line int, format string, args ...any) *evidence.Failure {
	f := evidence.Failf(evidence.CodeDecodeFailure, format, args...)
	f.Location.Line = line
	return f
}

func limitAt(line int, format string, args ...any) *evidence.Failure {
	f := evidence.Failf(evidence.CodeLimitExceeded, format, args...)
	f.Location.Line = line
	return f
}

func limitOr(limits map[string]int64, name string) int64 {
	if v, ok := limits[name]; ok && v > 0 {
		return v
	}
	for _, l := range parserLimits {
		if l.Name == name {
			return l.Default
		}
	}
	return 0
}

// Parse reads folded stacks into a Profile with one unnamed series.
func Parse(ctx context.Context, r io.Reader, limits map[string]int64) (*Profile, error) {
	maxBytes := limitOr(limits, LimitBytes)
	maxLine := limitOr(limits, LimitLineBytes)
	maxStack := limitOr(limits, LimitStack)
	maxFrames := limitOr(limits, LimitFrames)

	br := bufio.NewReaderSize(r, 256<<10)
	p := NewProfile()
	series := p.SeriesID(Series{})
	ids := map[string]uint32{}
	var stack []uint32
	var read, total int64
	var long []byte // a line longer than the bufio buffer, assembled
	for lineNo := 1; ; lineNo++ {
		if lineNo&0xfff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if int64(len(long)) > maxLine {
					return nil, limitAt(lineNo, "line longer than %s=%d bytes", LimitLineBytes, maxLine)
				}
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read line %d", lineNo)
		}
		read += int64(len(b))
		if read > maxBytes {
			return nil, limitAt(lineNo, "input longer than %s=%d bytes", LimitBytes, maxBytes)
		}
		if int64(len(b)) > maxLine {
			return nil, limitAt(lineNo, "line longer than %s=%d bytes", LimitLineBytes, maxLine)
		}
		ln := bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(ln)) > 0 {
			l, perr := parseLine(ln)
			if perr != nil {
				return nil, failAt(lineNo, "folded line: %v", perr)
			}
			stack = stack[:0]
			// Trailing separators carry no frame: stackcollapse-perf.pl writes
			// them after an empty symbol, and flamegraph.pl's split drops them.
			rest := bytes.TrimRight(l.stack, ";")
			if len(rest) == 0 {
				return nil, failAt(lineNo, "folded line has no frame")
			}
			for len(rest) > 0 {
				semi := bytes.IndexByte(rest, ';')
				fr := rest
				if semi >= 0 {
					fr, rest = rest[:semi], rest[semi+1:]
				} else {
					rest = nil
				}
				if len(fr) == 0 {
					return nil, failAt(lineNo, "folded line has an empty frame")
				}
				id, ok := ids[string(fr)]
				if !ok {
					fn := string(fr)
					id = p.Frame(Frame{Function: fn, Unresolved: isUnknown(fn)})
					ids[fn] = id
					if int64(len(p.Frames)) > maxFrames {
						return nil, limitAt(lineNo, "more than %s=%d distinct frames", LimitFrames, maxFrames)
					}
				}
				stack = append(stack, id)
				if int64(len(stack)) > maxStack {
					return nil, limitAt(lineNo, "stack deeper than %s=%d frames", LimitStack, maxStack)
				}
			}
			// Folded stacks are root first; Profile wants the leaf first.
			for i, j := 0, len(stack)-1; i < j; i, j = i+1, j-1 {
				stack[i], stack[j] = stack[j], stack[i]
			}
			if total > math.MaxInt64-l.count {
				return nil, failAt(lineNo, "sample counts overflow a 64-bit total")
			}
			total += l.count
			p.Add(series, stack, l.count, l.count)
		}
		if err != nil { // io.EOF
			return p, nil
		}
	}
}

// isUnknown recognizes the producers' spelling of an unresolved frame,
// with or without an annotation suffix such as _[k].
func isUnknown(fn string) bool {
	return len(fn) >= 9 && fn[:9] == "[unknown]"
}
