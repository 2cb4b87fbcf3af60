package xctrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

var fixtures = []string{"time-profile.xml", "time-sample.xml"}

// reference is what testdata/xctrace/reference.py prints.
type reference struct {
	Tables []struct {
		Schema  string              `json:"schema"`
		Rows    int64               `json:"rows"`
		Total   int64               `json:"total"`
		NoStack int64               `json:"no_stack"`
		Frames  map[string][2]int64 `json:"frames"`
		Lines   map[string][2]int64 `json:"lines"`
	} `json:"tables"`
}

func runReference(t *testing.T, path string) reference {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot run the independent reference reading")
	}
	var ref reference
	formatstest.RunReference(t, py, "xctrace/reference.py", path, &ref)
	return ref
}

func str(n table.Null[string]) string { return n.V }

// TestReference: per table, thread and frame, self and inclusive weights
// and the totals equal an independent xml.etree reading exactly.
func TestReference(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(formatstest.Testdata(), "xctrace", name)
			ref := runReference(t, path)
			sink, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			if err != nil {
				t.Fatal(err)
			}
			frames := sink.Named(table.CPUFrames.Name)
			if len(frames) != len(ref.Tables) {
				t.Fatalf("%d cpu.frames tables, reference %d", len(frames), len(ref.Tables))
			}
			for i, rt := range ref.Tables {
				ft := frames[i]
				s := ft.Summary
				if got, _ := evidence.AsInt(s.Metrics[table.MetricTotalWeight].Value); got != rt.Total {
					t.Errorf("%s total %d, reference %d", rt.Schema, got, rt.Total)
				}
				if got, _ := evidence.AsInt(s.Metrics["samples"].Value); got != rt.Rows {
					t.Errorf("%s samples %d, reference %d", rt.Schema, got, rt.Rows)
				}
				if got, _ := evidence.AsInt(s.Metrics["samples_without_stack"].Value); got != rt.NoStack {
					t.Errorf("%s samples without stack %d, reference %d", rt.Schema, got, rt.NoStack)
				}
				if s.Coverage["event"] != rt.Schema {
					t.Errorf("event %v, want %s", s.Coverage["event"], rt.Schema)
				}
				frameKey := func(f *table.Frame) string {
					return str(f.Process) + "\t" + str(f.Thread) + "\t" + f.Function + "\t" + str(f.Module)
				}
				sameWeights(t, rt.Schema+" frame", ft, frameKey, rt.Frames)
				// Lines: per frame at its source line, the same weights.
				sameWeights(t, rt.Schema+" line", sink.Named(table.CPULines.Name)[i], func(f *table.Frame) string {
					return frameKey(f) + "\t" + str(f.File) + "\t" + strconv.FormatInt(f.Line, 10)
				}, rt.Lines)
				// Stacks carry the whole stacked weight.
				var stacked float64
				for _, r := range sink.Named(table.CPUStacks.Name)[i].Typed {
					stacked += r.(*table.Stack).Weight
				}
				if want := rt.Total; rt.Schema == "time-sample" && int64(stacked) != want-rt.NoStack {
					t.Errorf("stacks weigh %v, want %d", stacked, want-rt.NoStack)
				}
			}
		})
	}
}

// sameWeights checks a frames or lines table's self and inclusive
// weights per key against the reference's.
func sameWeights(t *testing.T, what string, tab *formatstest.Table, key func(*table.Frame) string, want map[string][2]int64) {
	t.Helper()
	got := map[string][2]int64{}
	for _, r := range tab.Typed {
		f := r.(*table.Frame)
		got[key(f)] = [2]int64{int64(f.SelfWeight), int64(f.InclusiveWeight)}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, reference %d", what, len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s %q: self/inclusive %v, reference %v", what, k, got[k], w)
		}
	}
}

// TestUnits: time-profile weighs nanoseconds, time-sample counts samples.
func TestUnits(t *testing.T) {
	for name, want := range map[string]string{"time-profile.xml": "ns", "time-sample.xml": "samples"} {
		sink, err := formatstest.DecodeFile(t, Spec, filepath.Join(formatstest.Testdata(), "xctrace", name), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := sink.Table(table.CPUFrames.Name).Header.Column("self_weight")
		if c.Unit != want {
			t.Errorf("%s: self_weight unit %v, want %s", name, c.Unit, want)
		}
	}
}

const head = `<?xml version="1.0"?>
<trace-query-result><node xpath="//trace-toc[1]/run[1]/data[1]/table[1]">` +
	`<schema name="time-profile"><col><mnemonic>time</mnemonic><name>Sample Time</name><engineering-type>sample-time</engineering-type></col>` +
	`<col><mnemonic>weight</mnemonic><name>Weight</name><engineering-type>weight</engineering-type></col>` +
	`<col><mnemonic>stack</mnemonic><name>Backtrace</name><engineering-type>backtrace</engineering-type></col></schema>
<row><sample-time id="1" fmt="00:00.001">1000</sample-time><weight id="2" fmt="1.00 ms">1000000</weight>` +
	`<backtrace id="3"><frame id="4" name="leaf" addr="0x10"><binary id="5" name="a.out" path="/bin/a.out"/></frame><frame id="6" name="main" addr="0x20"><binary ref="5"/></frame></backtrace></row>
`

// TestNegative: every malformed export is a typed failure at its place.
func TestNegative(t *testing.T) {
	cases := []struct {
		name, doc string
		code      evidence.Code
		msg       string
		line      int
	}{
		{"unresolved ref", head + `<row><sample-time id="7">2000</sample-time><weight ref="2"/><backtrace ref="99"/></row></node></trace-query-result>`,
			evidence.CodeDecodeFailure, `ref="99"`, 4},
		{"ref before id", `<trace-query-result><node><schema name="x"><col><engineering-type>a</engineering-type></col></schema>` + "\n" + `<row><a ref="1"/></row><row><a id="1">x</a></row></node></trace-query-result>`,
			evidence.CodeDecodeFailure, "names no element", 2},
		{"truncated", head, evidence.CodeDecodeFailure, "", 0},
		{"cut mid-row", head + `<row><sample-time id="7">2000</sam`, evidence.CodeDecodeFailure, "", 0},
		{"mismatched end", head + `<row><weight ref="2"/></sample-time></row>`, evidence.CodeDecodeFailure, "closes", 0},
		{"wrong root", `<?xml version="1.0"?><trace-toc><run/></trace-toc>`, evidence.CodeDecodeFailure, "document element", 0},
		{"cells mismatch", head + `<row><weight ref="2"/></row></node></trace-query-result>`, evidence.CodeDecodeFailure, "cells for 3 columns", 0},
		{"bad weight", head + `<row><sample-time id="7">2000</sample-time><weight id="8">1.5ms</weight><sentinel/></row></node></trace-query-result>`, evidence.CodeDecodeFailure, "weight", 0},
		{"duplicate id", head + `<row><sample-time id="1">2000</sample-time><weight ref="2"/><sentinel/></row></node></trace-query-result>`, evidence.CodeDecodeFailure, "twice", 0},
		{"bad source line", head + `<row><sample-time id="7">2000</sample-time><weight ref="2"/><backtrace id="8"><frame id="9" name="f" addr="0x30"><source line="x"><path id="10">/a.c</path></source></frame></backtrace></row></node></trace-query-result>`,
			evidence.CodeDecodeFailure, `<source line="x">`, 0},
		{"ref with content", head + `<row><sample-time ref="1">2000</sample-time><weight ref="2"/><sentinel/></row></node></trace-query-result>`, evidence.CodeDecodeFailure, "content", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink, err := formatstest.Run(t, Spec, "x.xml", []byte(c.doc), nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			if !strings.Contains(f.Message, c.msg) {
				t.Errorf("message %q lacks %q", f.Message, c.msg)
			}
			if c.line > 0 && f.Location.Line != c.line {
				t.Errorf("line %d, want %d (%+v)", f.Location.Line, c.line, f.Location)
			}
			if sink.Table(table.CPUFrames.Name) != nil {
				t.Error("a failed decode left a cpu.frames table")
			}
		})
	}
}

// TestLines: a function sampled at two source lines (and once without
// one) is one cpu.frames row and three cpu.lines rows, each with its own
// weight; a frame without a <source> is its function's row, line -1.
func TestLines(t *testing.T) {
	doc := head + `<row><sample-time id="7">2000</sample-time><weight id="8">3</weight><backtrace id="9">` +
		`<frame id="10" name="leaf" addr="0x11"><binary ref="5"/><source line="7"><path id="11">/src/a.c</path></source></frame>` +
		`<frame ref="6"/></backtrace></row>` +
		`<row><sample-time id="12">3000</sample-time><weight ref="8"/><backtrace id="13">` +
		`<frame id="14" name="leaf" addr="0x12"><binary ref="5"/><source line="9"><path ref="11"/></source></frame>` +
		`<frame ref="6"/></backtrace></row></node></trace-query-result>`
	sink, err := formatstest.Run(t, Spec, "x.xml", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	frames := map[string][2]float64{}
	for _, r := range sink.Table(table.CPUFrames.Name).Typed {
		f := r.(*table.Frame)
		frames[f.Function] = [2]float64{f.SelfWeight, f.InclusiveWeight}
	}
	if want := (map[string][2]float64{"leaf": {1000006, 1000006}, "main": {0, 1000006}}); fmt.Sprint(frames) != fmt.Sprint(want) {
		t.Errorf("frames %v, want %v", frames, want)
	}
	lines := map[string][2]float64{}
	lt := sink.Table(table.CPULines.Name)
	for _, r := range lt.Typed {
		f := r.(*table.Frame)
		lines[fmt.Sprintf("%s %s:%d", f.Function, str(f.File), f.Line)] = [2]float64{f.SelfWeight, f.InclusiveWeight}
	}
	want := map[string][2]float64{"leaf :-1": {1000000, 1000000}, "leaf /src/a.c:7": {3, 3}, "leaf /src/a.c:9": {3, 3}, "main :-1": {0, 1000006}}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
	if got, _ := evidence.AsInt(lt.Summary.Metrics["frames_with_source_line"].Value); got != 2 {
		t.Errorf("frames_with_source_line %d, want 2", got)
	}
}

// TestLimits: the declared ceilings fail as LIMIT_EXCEEDED with their receipt.
func TestLimits(t *testing.T) {
	doc := []byte(head + `</node></trace-query-result>`)
	for name, lim := range map[string]int64{LimitIDs: 3, LimitDepth: 4, LimitText: 4, "max_stack_frames": 1, "max_distinct_frames": 1} {
		_, err := formatstest.Run(t, Spec, "x.xml", doc, map[string]int64{name: lim}, nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded || f.Details["limit"].(evidence.Object)["name"] != name {
			t.Errorf("%s=%d: got %v", name, lim, err)
		}
	}
}

// TestOtherTables: rows of a non-CPU table are counted and stated.
func TestOtherTables(t *testing.T) {
	doc := head + `</node><node xpath="//trace-toc[1]/run[1]/data[1]/table[2]"><schema name="os-signpost">` +
		`<col><mnemonic>start</mnemonic><name>Start</name><engineering-type>start-time</engineering-type></col></schema>` +
		`<row><start-time id="20">5</start-time></row><row><start-time ref="20"/></row></node></trace-query-result>`
	sink, err := formatstest.Run(t, Spec, "x.xml", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.CPUFrames.Name).Summary
	if n, _ := evidence.AsInt(s.Metrics["rows_not_interpreted"].Value); n != 2 {
		t.Errorf("rows_not_interpreted %v", s.Metrics["rows_not_interpreted"])
	}
	if !strings.Contains(strings.Join(s.Limitations, "\n"), `2 rows of table "os-signpost"`) {
		t.Errorf("limitations %q", s.Limitations)
	}
	if got := len(sink.Table(table.CPUFrames.Name).Rows); got != 2 {
		t.Errorf("%d frames", got)
	}
}

// TestSniff: xctrace exports are claimed, and the Instruments artefacts
// in the shared fixtures (a deep-copy text and a zipped .trace bundle,
// which are not xctrace exports) are not.
func TestSniff(t *testing.T) {
	for _, name := range fixtures {
		if v := sniff(formatstest.Read(t, filepath.Join("xctrace", name))); v != formats.Yes {
			t.Errorf("%s: %v", name, v)
		}
	}
	for _, p := range []string{"\ufeff<trace-query-result>", "<!-- c --><trace-query-result\n>"} {
		if v := sniff([]byte(p)); v != formats.Yes {
			t.Errorf("%q: %v", p, v)
		}
	}
	for _, p := range []string{`<?xml version="1.0"?><trace-toc>`, "<trace-query-results>", "{}", "<html>"} {
		if v := sniff([]byte(p)); v != formats.No {
			t.Errorf("%q: %v", p, v)
		}
	}
	if v := sniff([]byte("<?xml version")); v != formats.NeedMore {
		t.Errorf("short prefix: %v", v)
	}
	shared := "/work/shared/fixtures/instruments"
	ents, err := os.ReadDir(shared)
	if err != nil {
		ents = nil // the negative copies below are in testdata either way
	}
	paths := []string{filepath.Join(formatstest.Testdata(), "xctrace", "negative", "instruments-16.0-simple-time-profile-deep-copy.txt"),
		filepath.Join(formatstest.Testdata(), "xctrace", "negative", "instruments-7.3.1-simple-time-profile.trace.zip")}
	for _, e := range ents {
		paths = append(paths, filepath.Join(shared, e.Name()))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if v := sniff(b[:min(len(b), formats.SniffBytes)]); v == formats.Yes {
			t.Errorf("%s claimed as an xctrace export", p)
		}
		_, err = formatstest.Run(t, Spec, filepath.Base(p), b, nil, nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
			t.Errorf("%s decoded as xctrace: %v", p, err)
		}
	}
}

// TestReaders: one-byte and erroring readers give the same tables or a
// typed failure.
func TestReaders(t *testing.T) {
	data := formatstest.Read(t, filepath.Join("xctrace", "time-profile.xml"))
	want, err := formatstest.Decode(Spec, "x.xml", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := formatstest.Decode(Spec, "x.xml", data, nil, iotest.OneByteReader)
	if err != nil {
		t.Fatal(err)
	}
	if formatstest.Canonical(t, got.Tables[0].Rows) != formatstest.Canonical(t, want.Tables[0].Rows) {
		t.Error("one-byte reads differ")
	}
	_, err = formatstest.Decode(Spec, "x.xml", data, nil, iotest.TimeoutReader)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeIOFailure {
		t.Errorf("read error: %v", err)
	}
}

func TestValueBound(t *testing.T) {
	data := formatstest.Read(t, filepath.Join("xctrace", "time-profile.xml"))
	full, err := formatstest.Run(t, Spec, "x.xml", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Run(t, Spec, "x.xml", data, nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

// TestGenerate: a generated export decodes, with the seed's weights
// scaled by the rounds it holds.
func TestGenerate(t *testing.T) {
	seed := formatstest.Read(t, filepath.Join("xctrace", "time-profile.xml"))
	var b bytes.Buffer
	if err := Generate(&b, seed, 4*int64(len(seed))); err != nil {
		t.Fatal(err)
	}
	sink, err := formatstest.Run(t, Spec, "g.xml", b.Bytes(), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := formatstest.Run(t, Spec, "x.xml", seed, nil, nil)
	w1, _ := evidence.AsInt(one.Table(table.CPUFrames.Name).Summary.Metrics[table.MetricTotalWeight].Value)
	wn, _ := evidence.AsInt(sink.Table(table.CPUFrames.Name).Summary.Metrics[table.MetricTotalWeight].Value)
	if wn <= w1 || wn%w1 != 0 {
		t.Errorf("generated total %d is not a multiple of the seed's %d", wn, w1)
	}
}

func TestCancel(t *testing.T) {
	seed := formatstest.Read(t, filepath.Join("xctrace", "time-profile.xml"))
	var b bytes.Buffer
	if err := Generate(&b, seed, 2<<20); err != nil {
		t.Fatal(err)
	}
	in := formatstest.MustInput(t, Spec, &evidence.Artifact{Name: "g.xml", Size: int64(b.Len())}, &b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Spec.Decoder.Decode(ctx, in, &formatstest.Sink{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

// TestSlices: a table with a start-time and a duration column becomes
// trace.slices, named by its name column, thread and process from their
// cells (refs resolved), the other cells as args.
func TestSlices(t *testing.T) {
	doc := head + `</node><node xpath="//trace-toc[1]/run[1]/data[1]/table[3]"><schema name="os-signpost-interval">` +
		`<col><mnemonic>start</mnemonic><name>Start</name><engineering-type>start-time</engineering-type></col>` +
		`<col><mnemonic>duration</mnemonic><name>Duration</name><engineering-type>duration</engineering-type></col>` +
		`<col><mnemonic>name</mnemonic><name>Name</name><engineering-type>string</engineering-type></col>` +
		`<col><mnemonic>thread</mnemonic><name>Thread</name><engineering-type>thread</engineering-type></col>` +
		`<col><mnemonic>subsystem</mnemonic><name>Subsystem</name><engineering-type>string</engineering-type></col></schema>` +
		`<row><start-time id="30" fmt="00:00.000.100">100</start-time><duration id="31" fmt="2.00 µs">2000</duration><string id="32">Load &amp; parse</string>` +
		`<thread id="33" fmt="Main Thread 0x1 (app, pid: 7)"><tid id="34">1</tid><process id="35" fmt="app (7)"><pid id="36">7</pid></process></thread><string id="37">com.example</string></row>` +
		`<row><start-time id="38">5000</start-time><duration ref="31"/><string ref="32"/><thread ref="33"/><sentinel/></row>` +
		`<row><start-time id="39">9000</start-time><sentinel/><string ref="32"/><thread ref="33"/><sentinel/></row>` +
		`</node></trace-query-result>`
	sink, err := formatstest.Run(t, Spec, "x.xml", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	st := sink.Table(table.TraceSlices.Name)
	if st == nil || len(st.Typed) != 2 {
		t.Fatalf("slices: %+v", st)
	}
	for i, start := range []int64{100, 5000} {
		r := st.Typed[i].(*table.TraceSlice)
		if r.Name != "Load & parse" || r.StartNS != start || r.DurationNS != 2000 || r.EndNS != start+2000 ||
			r.Thread.V != "Main Thread 0x1 (app, pid: 7)" || r.Process.V != "app (7)" || r.Category.V != "os-signpost-interval" {
			t.Errorf("slice %d: %+v", i, r)
		}
	}
	if a := st.Typed[0].(*table.TraceSlice).Args; a["subsystem"] != "com.example" {
		t.Errorf("args %v", a)
	}
	// The row without a duration is counted, not made up.
	s := sink.Table(table.CPUFrames.Name).Summary
	if n, _ := evidence.AsInt(s.Metrics["rows_not_interpreted"].Value); n != 1 {
		t.Errorf("rows_not_interpreted %v", s.Metrics["rows_not_interpreted"])
	}
	// A CPU-only export has no trace.slices table.
	only, _ := formatstest.Run(t, Spec, "x.xml", []byte(head+`</node></trace-query-result>`), nil, nil)
	if only.Table(table.TraceSlices.Name) != nil {
		t.Error("trace.slices without a sliced table")
	}
}
