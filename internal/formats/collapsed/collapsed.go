// Package collapsed decodes folded ("collapsed") stacks, one stack per
// line, root first, frames separated by ';' and a sample count after the
// last space: `main;parse;lex 123`, as written by stackcollapse-perf.pl,
// inferno-collapse-* and py-spy --format raw. It also holds Profile, the
// stack aggregation that the perf-script decoder shares, so both formats
// weigh frames and edges identically.
//
// It imports formats, lines, table, unit and evidence.
package collapsed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Limit names, shared by every format that feeds a Profile (perf-script
// and perf-data declare them with defaults of their own).
const (
	LimitLineBytes = "max_line_bytes"
	LimitStack     = "max_stack_frames"
	LimitFrames    = "max_distinct_frames"
)

// Version is the decoder version, part of table headers and cache keys.
const Version = "1"

// parserLimits are the raw ceilings; rows are bounded by projections.
var parserLimits = []formats.Limit{
	{Name: formats.LimitBytes, Default: 16 << 30, Unit: "bytes", Doc: "bytes of input read"},
	{Name: LimitLineBytes, Default: 1 << 20, Unit: "bytes", Doc: "bytes in one line"},
	{Name: LimitStack, Default: 16384, Unit: "frames", Doc: "frames in one stack"},
	{Name: LimitFrames, Default: 1 << 22, Unit: "frames", Doc: "distinct frames"},
}

// OptionUnit is the decoder option that states the unit of the weights:
// folded stacks carry none, and producers write sample counts (py-spy,
// stackcollapse-perf.pl) or periods (inferno's and perf's period modes)
// alike.
const OptionUnit = "unit"

// UnitUnstated is OptionUnit's default: the weights are shown as written,
// in unit.Unstated, which pools with no other unit.
const UnitUnstated = "unstated"

var options = []param.Param{
	formats.ValueBytesParam,
	{Name: OptionUnit, Type: param.Enum, Default: UnitUnstated,
		Enum: []string{UnitUnstated, unit.Samples, unit.Events, "ns", "us", "ms", "s"},
		Doc:  "the unit of the weights, which folded stacks do not state: samples, events (a period such as cycles), or a time unit; unstated keeps them as written and says so"},
}

// Spec is the collapsed-stacks format.
var Spec = formats.CPUStackProfile(formats.Spec{
	Name:     "collapsed-stacks",
	Title:    "Folded (collapsed) stacks",
	Suffixes: []string{".folded", ".collapsed", ".folded.txt", ".collapsed.txt"},
	Sniff:    Sniff,
	Limits:   parserLimits,
	Producer: "stackcollapse (FlameGraph, inferno, py-spy raw)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(Decode),
	Options:  options,
})

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
	// An empty stack (py-spy --idle writes " 3" for samples with no Python
	// frame) is a line: flamegraph.pl and inferno count it in the total.
	return line{stack: bytes.TrimRight(b[:sp], " \t"), count: n}, nil
}

// Sniff says Yes when every complete line of the prefix is a folded line
// and at least one has more than one frame.
func Sniff(prefix []byte) formats.Verdict {
	multi := false
	for sc := lines.Split(prefix); ; {
		l, err := sc.Next()
		if err != nil || l.Term == lines.None {
			break // the prefix's last line may be cut: it is not judged
		}
		ln := bytes.TrimRight(l.Bytes, "\r")
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		fl, err := parseLine(ln)
		if err != nil || bytes.Contains(fl.stack, []byte(";;")) || bytes.HasPrefix(fl.stack, []byte(";")) {
			return formats.No
		}
		if bytes.IndexByte(fl.stack, ';') >= 0 {
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
	if err := in.CheckSize(); err != nil {
		return err
	}
	p, err := Parse(ctx, in, out.Wants(table.CPUStacks.Schema))
	if err != nil {
		return err
	}
	o := EmitOptions{
		In:       in,
		Complete: true,
		Unit:     unit.Unstated,
		Limitations: []string{
			"folded stacks carry no module, file or line: frames are identified by their text alone",
			"folded stacks carry no process or thread series; a root frame naming a process is kept as a frame",
		},
	}
	if u := in.String(OptionUnit); u != UnitUnstated {
		o.Unit = u
	} else {
		o.Limitations = append(o.Limitations, "unit not stated: weights are as written (a sample count or a period); state it with the decoder option unit")
	}
	if p.emptyLines > 0 {
		o.Limitations = append(o.Limitations, fmt.Sprintf("%d lines have an empty stack: their weight (%d) is on no frame; the decoded total_weight counts it, sums over frames do not", p.emptyLines, p.emptyWeight))
	}
	return p.Emit(out, o)
}

// Parse reads the folded stacks of in.R into a Profile with one unnamed
// series.
// keepStacks keeps each distinct stack, for cpu.stacks.
func Parse(ctx context.Context, in *formats.Input, keepStacks bool) (*Profile, error) {
	maxStack := in.Limit(LimitStack)
	maxFrames := in.Limit(LimitFrames)
	lr := lines.NewStrict(in.R, int(in.Limit(LimitLineBytes)), LimitLineBytes)
	p := NewProfile()
	p.KeepStacks = keepStacks
	series := p.SeriesID(Series{})
	ids := map[string]uint32{}
	var stack []uint32
	var total int64
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read line %d", lr.Lines()+1)
		}
		if l.Number&0xfff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A stray '\r' before the terminator is not part of the count.
		ln := bytes.TrimRight(l.Bytes, "\r")
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		fl, perr := parseLine(ln)
		if perr != nil {
			return nil, lr.Err(evidence.CodeDecodeFailure, "folded line: %v", perr)
		}
		if len(fl.stack) == 0 {
			if total > math.MaxInt64-fl.count {
				return nil, lr.Err(evidence.CodeDecodeFailure, "sample counts overflow a 64-bit total")
			}
			total += fl.count
			p.emptyLines++
			p.emptyWeight += fl.count
			p.Add(series, nil, fl.count, fl.count)
			continue
		}
		stack = stack[:0]
		// Trailing separators carry no frame: stackcollapse-perf.pl writes
		// them after an empty symbol, and flamegraph.pl's split drops them.
		rest := bytes.TrimRight(fl.stack, ";")
		if len(rest) == 0 {
			return nil, lr.Err(evidence.CodeDecodeFailure, "folded line has no frame")
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
				return nil, lr.Err(evidence.CodeDecodeFailure, "folded line has an empty frame")
			}
			id, ok := ids[string(fr)]
			if !ok {
				if !utf8.Valid(fr) { // evidence strings are UTF-8
					return nil, lr.Err(evidence.CodeDecodeFailure, "folded line: frame %q is not valid UTF-8", fr)
				}
				fn := string(fr)
				id = p.Frame(Frame{Function: fn, Unresolved: isUnknown(fn)})
				ids[fn] = id
				if int64(len(p.Frames)) > maxFrames {
					return nil, l.At(in.Exceeded(LimitFrames, nil))
				}
			}
			stack = append(stack, id)
			if int64(len(stack)) > maxStack {
				return nil, l.At(in.Exceeded(LimitStack, nil))
			}
		}
		// Folded stacks are root first; Profile wants the leaf first.
		slices.Reverse(stack)
		if total > math.MaxInt64-fl.count {
			return nil, lr.Err(evidence.CodeDecodeFailure, "sample counts overflow a 64-bit total")
		}
		total += fl.count
		p.Add(series, stack, fl.count, fl.count)
	}
}

// isUnknown recognizes the producers' spelling of an unresolved frame,
// with or without an annotation suffix such as _[k].
func isUnknown(fn string) bool {
	return len(fn) >= 9 && fn[:9] == "[unknown]"
}
