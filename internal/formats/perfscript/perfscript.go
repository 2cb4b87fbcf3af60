// Package perfscript decodes Linux perf CPU samples into cpu.frames and
// cpu.edges. Two formats share it: perf-script, the text that `perf
// script` prints (default output with callchains, with or without a
// --header block), and perf-data, native perf.data files, which an
// isolated worker converts with `perf script` before the same parser reads
// the text.
//
// Frames keep perf's complete demangled symbol text; the module is the
// last parenthesised group of a callchain line, and perf's +0x offsets are
// removed so a function is one frame. [unknown] symbols are unresolved
// frames of their own (one per module), and an unresolved leaf keeps its
// samples. Weights count samples (perf report's Samples column), not
// periods. A series is (comm, event): processes of different names are
// never blended, threads of one comm are summed unless the threads option
// splits them, and each event gets its own tables.
//
// It imports formats, lines, param, unit, evidence, formats/collapsed (the folded-stack profile it builds) and worker (perf script in isolation).
package perfscript

import (
	"bytes"
	"context"
	"fmt"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// LimitSamples names the ceiling on samples parsed. The line, stack and
// frame ceilings are named in package collapsed, for every format that
// feeds a Profile; their defaults here are perf's own.
const LimitSamples = "max_samples"

// Version is the parser version, part of table headers and cache keys.
const Version = "2" // 2: srcline lines into cpu.lines, not frames

// OptionThreads is the decoder option that splits series by thread.
const OptionThreads = "threads"

var parserLimits = []formats.Limit{
	{Name: formats.LimitBytes, Default: 64 << 30, Unit: "bytes", Doc: "bytes of perf script text read"},
	{Name: LimitSamples, Default: 1 << 32, Unit: "samples", Doc: "samples parsed"},
	{Name: collapsed.LimitLineBytes, Default: 1 << 20, Unit: "bytes", Doc: "bytes in one line"},
	{Name: collapsed.LimitStack, Default: 4096, Unit: "frames", Doc: "frames in one callchain"},
	{Name: collapsed.LimitFrames, Default: 1 << 22, Unit: "frames", Doc: "distinct frames (function, module)"},
}

var options = []param.Param{
	formats.ValueBytesParam,
	{Name: OptionThreads, Type: param.Bool, Default: false,
		Doc: "true splits series by perf's pid/tid token (thread column); false sums the threads of one comm"},
}

// ScriptSpec is the perf-script format.
var ScriptSpec = formats.WithLines(formats.CPUStackProfile(formats.Spec{
	Name:     "perf-script",
	Title:    "Linux perf script text",
	Suffixes: []string{".perf.txt", ".perf-script", ".perfscript", ".linux-perf.txt", ".perf.script"},
	Sniff:    Sniff,
	Limits:   parserLimits,
	Producer: "perf script",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeScript),
	Options:  options,
}))

// Sniff says Yes when the prefix's first lines after any '#' comments are
// an event header followed by callchain lines or another header, read
// with the parser's own splitters.
func Sniff(prefix []byte) formats.Verdict {
	headers, frames := 0, 0
	inSample := false
	for sc := lines.Split(prefix); ; {
		l, err := sc.Next()
		if err != nil || l.Term == lines.None {
			break // the prefix's last line may be cut: it is not judged
		}
		ln := l.Bytes
		switch {
		case len(bytes.TrimSpace(ln)) == 0:
			inSample = false
		case ln[0] == '#':
		case isFrameLine(ln):
			if !inSample {
				return formats.No
			}
			if _, _, err := splitFrame(frameText(ln)); err != nil {
				return formats.No
			}
			frames++
		default:
			if _, ok := parseHeader(ln); !ok {
				return formats.No
			}
			headers++
			inSample = true
		}
		if headers > 0 && (frames > 0 || headers > 1) && headers+frames >= 3 {
			return formats.Yes
		}
	}
	if headers > 0 && (frames > 0 || headers > 1) {
		return formats.Yes
	}
	return formats.NeedMore
}

func decodeScript(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	res, err := Parse(ctx, in, in.R, Options{Stacks: out.Wants(table.CPUStacks.Schema)})
	if err != nil {
		return err
	}
	return emit(in, out, res, nil, nil)
}

// emit writes a parse result's tables. cov adds what the caller knows (a
// conversion's stderr, for instance); missing lists limitations by which
// samples are missing, which make the evidence incomplete.
func emit(in *formats.Input, out formats.Sink, res *Result, cov evidence.Object, missing []string) error {
	o := collapsed.EmitOptions{
		In:       in,
		Coverage: evidence.Object{},
		Complete: len(missing) == 0,
		Metrics: map[string]evidence.Metric{
			"samples_without_stack": {Value: res.NoStack, Unit: unit.Samples},
		},
		Limitations: []string{
			"weights count samples, not perf periods; perf report's Overhead column weighs by period",
			"[unknown] symbols are one unresolved frame per module; their addresses are not kept",
		},
	}
	for k, v := range cov {
		o.Coverage[k] = v
	}
	if res.PerfVersion != "" {
		o.Coverage["recorded_with_perf_version"] = res.PerfVersion
	}
	if res.NoStack > 0 {
		o.Limitations = append(o.Limitations, fmt.Sprintf("%d samples had no callchain and no inline frame: they count in the totals but in no frame", res.NoStack))
	}
	o.Limitations = append(o.Limitations, missing...)
	if err := res.Profile.Emit(out, o); err != nil {
		return err
	}
	if res.Lines == nil {
		return nil
	}
	o.Limitations = append(o.Limitations,
		"lines are perf's srcline, as perf script printed them (a file name without its directory unless perf was told to print full paths); a frame with no srcline, ??:0 or a module and address is its function's row, line -1",
		"a line's inclusive_weight counts each sample once however often the line is on its stack")
	return res.Lines.EmitLines(out, o)
}
