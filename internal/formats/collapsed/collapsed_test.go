package collapsed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

func testdata(name string) string { return filepath.Join("..", "..", "..", "testdata", name) }

// decode runs the decoder over r as the runner would, with the limits
// over the spec's defaults.
func decode(t testing.TB, r io.Reader, limits map[string]int64) (*formatstest.Sink, error) {
	t.Helper()
	sink := &formatstest.Sink{}
	return sink, Decode(context.Background(), formatstest.MustInput(t, Spec, nil, r, limits), sink)
}

func weightsOf(t testing.TB, s *formatstest.Sink) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, tb := range s.Tables {
		if tb.Header.Name != "cpu.frames" {
			continue
		}
		for _, r := range tb.Rows {
			se, _ := evidence.AsInt(r["self_weight"])
			in, _ := evidence.AsInt(r["inclusive_weight"])
			out[r["function"].(string)] = [2]int64{se, in}
		}
	}
	return out
}

func TestDecode(t *testing.T) {
	cases := []struct {
		name string
		text string
		want map[string][2]int64
	}{
		{"duplicates sum", "main;a;b 3\nmain;a;b 4\nmain;a 1\n", map[string][2]int64{"main": {0, 8}, "a": {1, 8}, "b": {7, 7}}},
		{"recursion once per stack", "main;r;r;r;leaf 2\n", map[string][2]int64{"main": {0, 2}, "r": {0, 2}, "leaf": {2, 2}}},
		{"unknown leaf keeps samples", "main;[unknown] 5\nmain;f 1\n", map[string][2]int64{"main": {0, 6}, "[unknown]": {5, 5}, "f": {1, 1}}},
		{"spaces inside frames, CRLF, blank lines", "java;oopDesc* PSPromotionManager::copy<false>(oop) 2\r\n\r\n\njava;x 1", map[string][2]int64{"java": {0, 3}, "oopDesc* PSPromotionManager::copy<false>(oop)": {2, 2}, "x": {1, 1}}},
		{"single frame and zero count", "main 4\nidle 0\n", map[string][2]int64{"main": {4, 4}, "idle": {0, 0}}},
		{"trailing separators are dropped", "main;a;  3\n", map[string][2]int64{"main": {0, 3}, "a": {3, 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := decode(t, strings.NewReader(c.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := weightsOf(t, s); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestUnresolvedSymbolization(t *testing.T) {
	s, err := decode(t, strings.NewReader("main;[unknown] 1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Tables[0].Rows {
		want := "symbolized"
		if r["function"] == "[unknown]" {
			want = "unresolved"
		}
		if r["symbolization"] != want || r["module"] != nil || r["process"] != nil {
			t.Fatalf("row %v", r)
		}
	}
}

func TestHostile(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		limits map[string]int64
		code   evidence.Code
		line   int
		limit  string // the receipt's name for LIMIT_EXCEEDED
	}{
		{"no count", "a;b 1\nmain;f\n", nil, evidence.CodeDecodeFailure, 2, ""},
		{"bad count", "a;b x1\n", nil, evidence.CodeDecodeFailure, 1, ""},
		{"negative count", "a;b -1\n", nil, evidence.CodeDecodeFailure, 1, ""},
		{"fractional count", "a;b 1.5\n", nil, evidence.CodeDecodeFailure, 1, ""},
		{"count overflow", "a;b 99999999999999999999\n", nil, evidence.CodeDecodeFailure, 1, ""},
		{"total overflow", "a 9223372036854775807\nb 1\n", nil, evidence.CodeDecodeFailure, 2, ""},
		{"empty frame", "a;;b 1\n", nil, evidence.CodeDecodeFailure, 1, ""},
		{"only separators", "ok 1\n;; 1\n", nil, evidence.CodeDecodeFailure, 2, ""},
		{"leading separator", ";a 1\n", nil, evidence.CodeDecodeFailure, 1, ""},
		{"frame not UTF-8", "a 1\nmain;f\xff 1\n", nil, evidence.CodeDecodeFailure, 2, ""},
		{"huge line", "a 1\n" + strings.Repeat("x", 400<<10) + " 1\n", map[string]int64{LimitLineBytes: 300 << 10}, evidence.CodeLimitExceeded, 2, LimitLineBytes},
		{"too deep", "a;b;c;d 1\n", map[string]int64{LimitStack: 3}, evidence.CodeLimitExceeded, 1, LimitStack},
		{"too many frames", "a;b 1\nc;d 1\n", map[string]int64{LimitFrames: 3}, evidence.CodeLimitExceeded, 2, LimitFrames},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decode(t, strings.NewReader(c.text), c.limits)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code {
				t.Fatalf("want %s, got %v", c.code, err)
			}
			if f.Location.Line != c.line {
				t.Fatalf("line %d, want %d", f.Location.Line, c.line)
			}
			if c.limit != "" {
				lim, _ := f.Details["limit"].(evidence.Object)
				if lim["name"] != c.limit || lim["value"] != c.limits[c.limit] || lim["unit"] == nil {
					t.Fatalf("receipt %v, want limit %s=%d", f.Details["limit"], c.limit, c.limits[c.limit])
				}
			}
		})
	}
}

// TestMaxBytes: the byte ceiling is checked from the artifact's size
// before anything is read or emitted.
func TestMaxBytes(t *testing.T) {
	text := "a;b 1\nc;d 1\n"
	art := &evidence.Artifact{ID: "sha256:" + strings.Repeat("0", 64), Path: "/virtual/x.folded", Size: int64(len(text))}
	in, err := formatstest.Input(Spec, art, strings.NewReader(text), map[string]int64{formats.LimitBytes: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := &formatstest.Sink{}
	err = Decode(context.Background(), in, sink)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("want LIMIT_EXCEEDED, got %v", err)
	}
	lim, _ := f.Details["limit"].(evidence.Object)
	if lim["name"] != formats.LimitBytes || lim["value"] != int64(8) || lim["observed"] != int64(len(text)) || lim["unit"] != "bytes" {
		t.Fatalf("receipt %v", f.Details["limit"])
	}
	if len(sink.Tables) != 0 {
		t.Fatalf("%d tables emitted past the byte ceiling", len(sink.Tables))
	}
}

// TestDeclinedEdges: a sink that does not want cpu.edges gets no edge
// table, and the frames are unchanged.
func TestDeclinedEdges(t *testing.T) {
	text := "main;a;b 3\nmain;a 1\n"
	all, err := decode(t, strings.NewReader(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	frames := &formatstest.Sink{Only: []string{"cpu.frames"}}
	if err := Decode(context.Background(), formatstest.MustInput(t, Spec, nil, strings.NewReader(text), nil), frames); err != nil {
		t.Fatal(err)
	}
	if len(frames.Tables) != 1 || frames.Table("cpu.edges") != nil || all.Table("cpu.edges") == nil {
		t.Fatalf("tables %d with edges declined", len(frames.Tables))
	}
	if fmt.Sprint(weightsOf(t, frames)) != fmt.Sprint(weightsOf(t, all)) {
		t.Fatal("declining edges changed the frames")
	}
}

// expectedTotal sums the counts of a folded file with the simplest
// possible reading, independent of the decoder.
func expectedTotal(t *testing.T, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

func TestFixtures(t *testing.T) {
	for _, name := range []string{"perf-vertx-stacks-01-collapsed-all.txt", "hot.folded", "tmpl.folded", "simple-with-header.folded"} {
		t.Run(name, func(t *testing.T) {
			path := testdata("collapsed/" + name)
			sink, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(sink.Tables) != 3 || sink.Tables[0].Header.Name != "cpu.frames" || sink.Tables[1].Header.Name != "cpu.edges" || sink.Tables[2].Header.Name != "cpu.stacks" {
				t.Fatalf("tables %d", len(sink.Tables))
			}
			want := expectedTotal(t, path)
			// Every line's weight is on one stack row (no fixture has an
			// empty stack).
			var stacked int64
			for _, r := range sink.Tables[2].Rows {
				w, _ := evidence.AsFloat(r["weight"])
				stacked += int64(w)
			}
			if stacked != want {
				t.Fatalf("stacks hold %d, want %d", stacked, want)
			}
			sum := sink.Tables[0].Summary
			if got, _ := evidence.AsInt(sum.Metrics["total_weight"].Value); got != want {
				t.Fatalf("total %d, want %d", got, want)
			}
			var self int64
			for _, r := range sink.Tables[0].Rows {
				n, _ := evidence.AsInt(r["self_weight"])
				self += n
			}
			if self != want {
				t.Fatalf("self weights sum to %d, want %d", self, want)
			}
		})
	}
}

// TestEmptyStacks: py-spy 0.4.3 `record --idle -f raw` writes " 3" for
// samples taken with no Python frame. flamegraph.pl counts such a line in
// its total (1,482, as py-spy reported); inferno 0.12.8 ignores it with a
// warning (1,479, the frames' sum). The decoder counts it in total_weight,
// on no frame, and says so (testdata/collapsed/PROVENANCE.md).
func TestEmptyStacks(t *testing.T) {
	path := testdata("collapsed/pyspy-idle.raw.txt")
	prefix, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := Sniff(prefix[:min(len(prefix), formats.SniffBytes)]); v != formats.Yes {
		t.Fatalf("sniff %v, want yes", v)
	}
	sink, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const pyspySamples, empty = 1482, 3
	sum := sink.Tables[0].Summary
	if got, _ := evidence.AsInt(sum.Metrics["total_weight"].Value); got != pyspySamples || expectedTotal(t, path) != pyspySamples {
		t.Fatalf("total %d, want py-spy's %d", got, pyspySamples)
	}
	var self int64
	for _, r := range sink.Tables[0].Rows {
		n, _ := evidence.AsInt(r["self_weight"])
		self += n
	}
	if self != pyspySamples-empty {
		t.Fatalf("self weights sum to %d, want %d (the empty stacks are on no frame)", self, pyspySamples-empty)
	}
	if !sum.Complete || !hasLimitation(sum, "1 lines have an empty stack: their weight (3) is on no frame; the decoded total_weight counts it") {
		t.Fatalf("summary %+v", sum)
	}
	// A file of empty stacks only is a total with no frames.
	s, err := decode(t, strings.NewReader(" 5\n\t2\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := evidence.AsInt(s.Tables[0].Summary.Metrics["total_weight"].Value); got != 7 || len(s.Tables[0].Rows) != 0 {
		t.Fatalf("total %d, rows %d", got, len(s.Tables[0].Rows))
	}
}

func hasLimitation(s *evidence.Summary, want string) bool {
	for _, l := range s.Limitations {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// TestUnit: folded stacks state no unit. By default the weights are in
// unit "unstated" with a limitation saying so, not "samples"; the unit
// option states it, and only samples carry a samples metric.
func TestUnit(t *testing.T) {
	text := []byte("main;a 513513513\nmain 1001\n")
	for _, c := range []struct {
		opt, unit string
		limited   bool
	}{
		{"", "unstated", true},
		{"samples", "samples", false},
		{"events", "events", false},
		{"ns", "ns", false},
	} {
		t.Run(c.unit, func(t *testing.T) {
			opts := evidence.Object{}
			if c.opt != "" {
				opts[OptionUnit] = c.opt
			}
			sink, err := formatstest.Run(t, Spec, "x.folded", text, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, tb := range sink.Tables {
				for _, col := range tb.Header.Columns {
					if strings.HasSuffix(col.Name, "weight") && col.Unit != c.unit {
						t.Fatalf("%s column %s unit %q, want %q", tb.Header.Name, col.Name, col.Unit, c.unit)
					}
				}
				m := tb.Summary.Metrics
				if m["total_weight"].Unit != c.unit || m["total_weight"].Value != int64(513514514) {
					t.Fatalf("total %+v", m["total_weight"])
				}
				if _, ok := m["samples"]; ok != (c.unit == "samples") {
					t.Fatalf("samples metric %+v in unit %s", m["samples"], c.unit)
				}
				if hasLimitation(tb.Summary, "unit not stated") != c.limited {
					t.Fatalf("limitations %q", tb.Summary.Limitations)
				}
			}
		})
	}
	if _, err := formatstest.Run(t, Spec, "x.folded", text, nil, evidence.Object{OptionUnit: "furlongs"}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("unknown unit: %v", err)
	}
}

func TestReaders(t *testing.T) {
	data, err := os.ReadFile(testdata("collapsed/perf-vertx-stacks-01-collapsed-all.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := decode(t, bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
		"data+err": iotest.DataErrReader(bytes.NewReader(data)),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := decode(t, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(weightsOf(t, s)) != fmt.Sprint(weightsOf(t, ref)) {
				t.Fatal("weights differ from a plain read")
			}
		})
	}
	t.Run("error", func(t *testing.T) {
		_, err := decode(t, io.MultiReader(bytes.NewReader(data[:1000]), iotest.ErrReader(errors.New("gone"))), nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeIOFailure {
			t.Fatalf("want IO_FAILURE, got %v", err)
		}
	})
}

func TestSniff(t *testing.T) {
	vertx, _ := os.ReadFile(testdata("collapsed/perf-vertx-stacks-01-collapsed-all.txt"))
	script, _ := os.ReadFile(testdata("perf/hot.perf.txt"))
	cases := []struct {
		name   string
		prefix []byte
		want   formats.Verdict
	}{
		{"vertx", vertx[:formats.SniffBytes], formats.Yes},
		{"perf script", script[:2000], formats.No},
		{"single frames only", []byte("main 3\nidle 4\n"), formats.NeedMore},
		{"partial line", []byte("main;a"), formats.NeedMore},
		{"json", []byte("{\"a\": 1}\n"), formats.No},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v := Sniff(c.prefix); v != c.want {
				t.Fatalf("sniff %v, want %v", v, c.want)
			}
		})
	}
}

// FuzzDecode: no panic, typed failures, and weights that add up. Seeds
// are a few short lines of each real fixture: the fuzzer minimizes every
// new input with a number of executions quadratic in its length, so
// seeds of a hundred bytes or two keep it fuzzing instead of minimizing.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"collapsed/perf-vertx-stacks-01-collapsed-all.txt", "collapsed/hot.folded", "collapsed/tmpl.folded", "collapsed/simple-with-header.folded"} {
		b, err := os.ReadFile(testdata(name))
		if err != nil {
			f.Fatal(err)
		}
		var seed []byte
		for _, ln := range bytes.SplitAfter(b, []byte("\n")) {
			if len(ln) <= 96 && len(seed)+len(ln) <= 160 {
				seed = append(seed, ln...)
			}
		}
		f.Add(seed)
	}
	f.Add([]byte("a;[unknown];a 3\r\nb 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Sniff(data[:min(len(data), formats.SniffBytes)])
		sink, err := decode(t, bytes.NewReader(data), map[string]int64{LimitLineBytes: 4096, LimitFrames: 512})
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) {
				t.Fatalf("untyped failure %T: %v", err, err)
			}
			return
		}
		total, _ := evidence.AsInt(sink.Tables[0].Summary.Metrics["total_weight"].Value)
		for _, r := range sink.Tables[0].Rows {
			s, _ := evidence.AsInt(r["self_weight"])
			i, _ := evidence.AsInt(r["inclusive_weight"])
			if s < 0 || s > i || i > total {
				t.Fatalf("row breaks 0 <= self <= inclusive <= total=%d: %v", total, r)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	path := testdata("collapsed/perf-vertx-stacks-01-collapsed-all.txt")
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		b.Fatal(err)
	}
	lims, _ := formats.EffectiveLimits(Spec, nil)
	b.SetBytes(art.Size)
	b.ReportAllocs()
	for range b.N {
		if err := formats.Run(context.Background(), Spec, art, lims, nil, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Row values are bounded by max_value_bytes, as in the JSON decoders
// (9.11): a long frame is cut and marked, ids stay those of the full
// text, and both tables say what they cut.
func TestValueBound(t *testing.T) {
	text := []byte("main;" + strings.Repeat("f", 100) + " 3\nmain 1\n")
	full, err := formatstest.Run(t, Spec, "x.folded", text, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Run(t, Spec, "x.folded", text, nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}
