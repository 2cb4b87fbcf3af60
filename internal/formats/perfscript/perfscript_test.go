package perfscript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// row is one cpu.frames row reduced to what the tests compare.
type row struct {
	process, thread, function, module, sym string
	self, incl                             int64
}

func frameRows(t testing.TB, s *formatstest.Sink) []row {
	t.Helper()
	var out []row
	for _, tb := range s.Named("cpu.frames") {
		for _, r := range tb.Rows {
			str := func(k string) string { v, _ := r[k].(string); return v }
			out = append(out, row{str("process"), str("thread"), str("function"), str("module"), str("symbolization"),
				intOf(t, r["self_weight"]), intOf(t, r["inclusive_weight"])})
		}
	}
	return out
}

// parseText decodes perf script text given in a test.
func parseText(t testing.TB, text string, opts evidence.Object, o Options) (*formatstest.Sink, error) {
	t.Helper()
	res, err := parse(t, strings.NewReader(text), nil, opts, o)
	if err != nil {
		return nil, err
	}
	sink := &formatstest.Sink{}
	if err := emit(nil, sink, res, nil, nil); err != nil {
		t.Fatal(err)
	}
	return sink, nil
}

func find(rows []row, process, function string) (row, bool) {
	for _, r := range rows {
		if r.process == process && r.function == function {
			return r, true
		}
	}
	return row{}, false
}

func TestParse(t *testing.T) {
	type want struct {
		process, function, module, sym string
		self, incl                     int64
	}
	cases := []struct {
		name string
		text string
		want []want
	}{
		{
			name: "perf 6.1 default with offsets",
			text: "hot 12459   740.711076:    1001001 cpu-clock:ppp: \n" +
				"\t            1169 hot_spin+0x20 (/tmp/px/hot)\n" +
				"\t           2724a __libc_start_call_main+0x7a (/usr/lib/libc.so.6)\n\n" +
				"hot 12459   740.712076:    1001001 cpu-clock:ppp: \n" +
				"\t            1171 hot_spin+0x22 (/tmp/px/hot)\n" +
				"\t           2724a __libc_start_call_main+0x7a (/usr/lib/libc.so.6)\n\n",
			want: []want{
				{"hot", "hot_spin", "/tmp/px/hot", "symbolized", 2, 2},
				{"hot", "__libc_start_call_main", "/usr/lib/libc.so.6", "symbolized", 0, 2},
			},
		},
		{
			name: "demangled C++ keeps spaces, parentheses and templates",
			text: "tmpl 7/7 cpu-clock: \n" +
				"\t12bd flameox::(anonymous namespace)::Mixer<unsigned long, 64>::operator()+0x25 (/bin/tmpl)\n" +
				"\t124b std::vector<int, std::allocator<int> >::push_back(int const&) (/bin/tmpl)\n" +
				"\t1000 f(int) (/tmp/x (deleted))\n\n",
			want: []want{
				{"tmpl", "flameox::(anonymous namespace)::Mixer<unsigned long, 64>::operator()", "/bin/tmpl", "symbolized", 1, 1},
				{"tmpl", "std::vector<int, std::allocator<int> >::push_back(int const&)", "/bin/tmpl", "symbolized", 0, 1},
				{"tmpl", "f(int)", "/tmp/x (deleted)", "symbolized", 0, 1},
			},
		},
		{
			name: "unresolved leaf keeps its samples",
			text: "app 1 1.0: 1 cycles: \n\t7fc1ef8f2ad7 [unknown] ([unknown])\n\t401000 main (/bin/app)\n\n" +
				"app 1 2.0: 1 cycles: \n\t7fc1ef8f2ff0 [unknown] ([unknown])\n\t401000 main (/bin/app)\n\n" +
				"app 1 3.0: 1 cycles: \n\t401100 [unknown] (/bin/app)\n\t401000 main (/bin/app)\n\n",
			want: []want{
				{"app", "[unknown]", "", "unresolved", 2, 2},
				{"app", "[unknown]", "/bin/app", "unresolved", 1, 1},
				{"app", "main", "/bin/app", "symbolized", 0, 3},
			},
		},
		{
			name: "recursion counts a frame once per stack",
			text: "r 5 cpu-clock: \n\t1 leaf (/b)\n\t2 rec (/b)\n\t2 rec (/b)\n\t2 rec (/b)\n\t3 main (/b)\n\n",
			want: []want{
				{"r", "leaf", "/b", "symbolized", 1, 1},
				{"r", "rec", "/b", "symbolized", 0, 1},
				{"r", "main", "/b", "symbolized", 0, 1},
			},
		},
		{
			name: "processes are separate series; comm may hold spaces and padding",
			text: "     Web Content 10/11 [001] 5.5: 100 cycles:u: \n\tabc render (/lib/xul.so)\n\n" +
				"java 20/21 [000] 5.6: 100 cycles:u: \n\tabc render (/lib/xul.so)\n\n" +
				"GC Thread#0 20/22 [000] 5.7: 100 cycles:u: \n\tdef gc (/lib/jvm.so)\n\n",
			want: []want{
				{"Web Content", "render", "/lib/xul.so", "symbolized", 1, 1},
				{"java", "render", "/lib/xul.so", "symbolized", 1, 1},
				{"GC Thread#0", "gc", "/lib/jvm.so", "symbolized", 1, 1},
			},
		},
		{
			name: "samples without callchains carry their frame on the header line",
			text: "a 1 1.0: 1 cycles:  ffffffff81b954cc iowrite16+0xc ([kernel.kallsyms])\n" +
				"a 1 1.1: 1 cycles:  401000 main (/bin/a)\n" +
				"a 1 1.2: 1 sched:sched_switch: prev_comm=a prev_pid=1\n",
			want: []want{
				{"a", "iowrite16", "[kernel.kallsyms]", "symbolized", 1, 1},
				{"a", "main", "/bin/a", "symbolized", 1, 1},
			},
		},
		{
			name: "header comments and blank lines between samples",
			text: "# ========\n# perf version : 6.1.187\n# ========\n#\n\n\na 1 1.0: 1 cycles: \n\t1 f (/b)\n\n\n",
			want: []want{{"a", "f", "/b", "symbolized", 1, 1}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink, err := parseText(t, c.text, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rows := frameRows(t, sink)
			if len(rows) != len(c.want) {
				t.Fatalf("%d rows, want %d: %+v", len(rows), len(c.want), rows)
			}
			for _, w := range c.want {
				found := false
				for _, r := range rows {
					if r.process == w.process && r.function == w.function && r.module == w.module {
						found = true
						if r.sym != w.sym || r.self != w.self || r.incl != w.incl {
							t.Errorf("%s %s: got %+v, want %+v", w.process, w.function, r, w)
						}
					}
				}
				if !found {
					t.Errorf("no row for %+v in %+v", w, rows)
				}
			}
		})
	}
}

func TestThreadsOption(t *testing.T) {
	text := "java 20/21 cycles: \n\t1 run (/j)\n\njava 20/22 cycles: \n\t1 run (/j)\n\n"
	for _, c := range []struct {
		threads bool
		rows    int
	}{{false, 1}, {true, 2}} {
		sink, err := parseText(t, text, evidence.Object{OptionThreads: c.threads}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rows := frameRows(t, sink)
		if len(rows) != c.rows {
			t.Fatalf("threads=%v: %d rows: %+v", c.threads, len(rows), rows)
		}
		if c.threads && (rows[0].thread != "20/21" || rows[1].thread != "20/22") {
			t.Fatalf("thread column %+v", rows)
		}
	}
}

func TestEventsGetTheirOwnTables(t *testing.T) {
	text := "a 1 cycles: \n\t1 f (/b)\n\na 1 instructions: \n\t1 f (/b)\n\na 1 instructions: \n\t1 g (/b)\n\n"
	sink, err := parseText(t, text, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	frames := sink.Named("cpu.frames")
	if len(frames) != 2 || len(sink.Named("cpu.edges")) != 2 {
		t.Fatalf("%d frames tables", len(frames))
	}
	for _, tb := range frames {
		ev := tb.Summary.Coverage["event"]
		total := intOf(t, tb.Summary.Metrics["total_weight"].Value)
		if (ev == "cycles" && total != 1) || (ev == "instructions" && total != 2) {
			t.Fatalf("event %v total %d", ev, total)
		}
	}
}

func TestEdges(t *testing.T) {
	text := "a 1 c: \n\t1 leaf (/b)\n\t2 mid (/b)\n\t3 main (/b)\n\n" +
		"a 1 c: \n\t2 mid (/b)\n\t3 main (/b)\n\n" +
		"a 1 c: \n\t4 rec (/b)\n\t4 rec (/b)\n\t3 main (/b)\n\n"
	sink, err := parseText(t, text, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int64{}
	for _, r := range sink.Named("cpu.edges")[0].Rows {
		got[r["caller_function"].(string)+">"+r["callee_function"].(string)] = [2]int64{intOf(t, r["weight"]), intOf(t, r["self_weight"])}
	}
	want := map[string][2]int64{"main>mid": {2, 1}, "mid>leaf": {1, 1}, "main>rec": {1, 0}, "rec>rec": {1, 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
}

func TestFixtures(t *testing.T) {
	cases := []struct {
		file             string
		process, hottest string
		samples          int64
		version          string
	}{
		{"perf/hot.perf.txt", "flameox-hot", "hot_spin", 0, ""},
		{"perf/tmpl.perf.txt", "flameox-tmpl", "flameox::(anonymous namespace)::Mixer<unsigned long, 64>::operator()", 0, "6.1.187"},
		{"perf/simple-with-header.linux-perf.txt", "simple-terminat", "_Z4betav", 136, "4.15.18"},
		{"perf/rust-mangled.linux-perf.txt", "trace", "_RNvXsb_NtCsfiKabdrepoq_5alloc3vecINtB5_3VecdEINtNtNtCsTACXlTRjQ_4core3ops5index5IndexjE5indexCs8K9WJNlS7Dz_5trace", 96, ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			sink, err := decodeFile(t, ScriptSpec, testdata(c.file), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			frames := sink.Named("cpu.frames")
			if len(frames) != 1 {
				t.Fatalf("%d frames tables", len(frames))
			}
			sum := frames[0].Summary
			samples := intOf(t, sum.Metrics["samples"].Value)
			if c.samples != 0 && samples != c.samples {
				t.Errorf("samples %d, want %d", samples, c.samples)
			}
			if v, _ := sum.Coverage["recorded_with_perf_version"].(string); v != c.version {
				t.Errorf("perf version %q, want %q", v, c.version)
			}
			var best row
			var selfSum int64
			for _, r := range frameRows(t, sink) {
				selfSum += r.self
				if r.incl > samples || r.self > r.incl {
					t.Errorf("row %+v breaks self <= inclusive <= samples=%d", r, samples)
				}
				if r.process == c.process && r.self > best.self {
					best = r
				}
			}
			if selfSum != samples {
				t.Errorf("self weights sum to %d, samples %d", selfSum, samples)
			}
			if best.function != c.hottest {
				t.Errorf("hottest frame of %s is %q, want %q", c.process, best.function, c.hottest)
			}
		})
	}
	// The child process of hot.c runs warm_spin only: it must be its own series.
	sink, err := decodeFile(t, ScriptSpec, testdata("perf/hot.perf.txt"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := find(frameRows(t, sink), "hot-child", "warm_spin"); !ok || r.self == 0 {
		t.Errorf("no warm_spin samples in process hot-child")
	}
	if _, ok := find(frameRows(t, sink), "hot-child", "hot_spin"); ok {
		t.Errorf("hot-child has hot_spin: processes were blended")
	}
}

// TestChunkingInvariance parses every fixture with tiny chunks and several
// workers: the result must not depend on where chunks were cut.
func TestChunkingInvariance(t *testing.T) {
	for _, f := range []string{"perf/hot.perf.txt", "perf/tmpl.perf.txt", "perf/simple-with-header.linux-perf.txt", "perf/rust-mangled.linux-perf.txt"} {
		data, err := os.ReadFile(testdata(f))
		if err != nil {
			t.Fatal(err)
		}
		var ref []row
		for i, o := range []Options{{Workers: 1}, {Workers: 2, ChunkBytes: 300}, {Workers: 3, ChunkBytes: 4096}, {Workers: 4, ChunkBytes: 1}} {
			sink, err := parseText(t, string(data), nil, o)
			if err != nil {
				t.Fatalf("%s %+v: %v", f, o, err)
			}
			rows := frameRows(t, sink)
			if i == 0 {
				ref = rows
			} else if !slices.Equal(rows, ref) {
				t.Fatalf("%s: options %+v changed the rows", f, o)
			}
		}
	}
}

func TestReaders(t *testing.T) {
	data, err := os.ReadFile(testdata("perf/tmpl.perf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := parseText(t, string(data), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
		"data+err": iotest.DataErrReader(bytes.NewReader(data)),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := parse(t, r, nil, nil, Options{ChunkBytes: 1000})
			if err != nil {
				t.Fatal(err)
			}
			sink := &formatstest.Sink{}
			if err := emit(nil, sink, res, nil, nil); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(frameRows(t, sink), frameRows(t, ref)) {
				t.Fatal("rows differ from a plain read")
			}
		})
	}
	t.Run("error", func(t *testing.T) {
		_, err := parse(t, io.MultiReader(bytes.NewReader(data[:5000]), iotest.ErrReader(errors.New("disk gone"))), nil, nil, Options{})
		wantCode(t, err, evidence.CodeIOFailure)
	})
}

func wantCode(t *testing.T, err error, code evidence.Code) *evidence.Failure {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("want a %s failure, got %v", code, err)
	}
	if f.Code != code {
		t.Fatalf("want %s, got %s: %v", code, f.Code, f)
	}
	return f
}

func TestHostile(t *testing.T) {
	sample := "a 1 1.0: 1 cycles: \n\t1 f (/b)\n\t2 main (/b)\n\n"
	cases := []struct {
		name   string
		text   string
		limits map[string]int64
		code   evidence.Code
		line   int
	}{
		{"truncated callchain", sample + "a 1 2.0: 1 cycles: \n\t1 f (/b)\n", nil, evidence.CodeDecodeFailure, 5},
		{"truncated line", sample + "a 1 2.0: 1 cycles: \n\t1 f (/b", nil, evidence.CodeDecodeFailure, 6},
		{"garbage header", sample + "this is not perf output\n", nil, evidence.CodeDecodeFailure, 5},
		{"binary", "\x00\x01\x02PERFILE2\xff\n", nil, evidence.CodeDecodeFailure, 1},
		{"callchain before any header", "\t1 f (/b)\n", nil, evidence.CodeDecodeFailure, 1},
		{"unbalanced module", "a 1 c: \n\t1 f (/b))\n\n", nil, evidence.CodeDecodeFailure, 2},
		{"comm not UTF-8", sample + "\x80 0 A: 0 ()\n", nil, evidence.CodeDecodeFailure, 5},
		{"symbol not UTF-8", sample + "a 1 c: \n\t1 f\xff (/b)\n\n", nil, evidence.CodeDecodeFailure, 6},
		{"module not UTF-8", "a 1 c: \n\t1 f (/b\xc3)\n\n", nil, evidence.CodeDecodeFailure, 2},
		{"perf version not UTF-8", "# perf version : 6.\xff\n" + sample, nil, evidence.CodeDecodeFailure, 1},
		{"huge line", sample + "a 1 c: \n\t1 " + strings.Repeat("x", 5000) + " (/b)\n\n", map[string]int64{collapsed.LimitLineBytes: 4096}, evidence.CodeLimitExceeded, 6},
		{"huge line without newline", strings.Repeat("y", 3<<20), map[string]int64{collapsed.LimitLineBytes: 1 << 20}, evidence.CodeLimitExceeded, 1},
		{"too deep", "a 1 c: \n" + strings.Repeat("\t1 f (/b)\n", 5) + "\n", map[string]int64{collapsed.LimitStack: 4}, evidence.CodeLimitExceeded, 6},
		{"too many frames", "a 1 c: \n\t1 f (/b)\n\t2 g (/b)\n\t3 h (/b)\n\n", map[string]int64{collapsed.LimitFrames: 2}, evidence.CodeLimitExceeded, 4},
		{"too many samples", strings.Repeat(sample, 3), map[string]int64{LimitSamples: 2}, evidence.CodeLimitExceeded, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, strings.NewReader(c.text), c.limits, nil, Options{})
			f := wantCode(t, err, c.code)
			if c.line > 0 && f.Location.Line != c.line {
				t.Fatalf("failure at line %d, want %d: %v", f.Location.Line, c.line, f)
			}
			if c.code == evidence.CodeLimitExceeded {
				wantReceipt(t, f, c.limits)
			}
		})
	}
}

// wantReceipt checks that a LIMIT_EXCEEDED failure names the one limit
// the test lowered, with its value and unit.
func wantReceipt(t *testing.T, f *evidence.Failure, limits map[string]int64) evidence.Object {
	t.Helper()
	lim, _ := f.Details["limit"].(evidence.Object)
	for name, v := range limits {
		if lim["name"] != name || lim["value"] != v || lim["unit"] == nil {
			t.Fatalf("receipt %v, want %s=%d", f.Details["limit"], name, v)
		}
	}
	return lim
}

// TestMaxBytes: perf script text is bounded by its size before it is
// read; text converted from perf.data, whose size is not known before, is
// bounded as it is read.
func TestMaxBytes(t *testing.T) {
	text := strings.Repeat("a 1 1.0: 1 cycles: \n\t1 f (/b)\n\n", 3)
	limits := map[string]int64{formats.LimitBytes: 50}
	t.Run("artifact size", func(t *testing.T) {
		art := &evidence.Artifact{ID: "sha256:" + strings.Repeat("0", 64), Path: "/virtual/x.perf.txt", Size: int64(len(text))}
		in, err := formatstest.Input(ScriptSpec, art, strings.NewReader(text), limits, nil)
		if err != nil {
			t.Fatal(err)
		}
		sink := &formatstest.Sink{}
		lim := wantReceipt(t, wantCode(t, decodeScript(context.Background(), in, sink), evidence.CodeLimitExceeded), limits)
		if lim["observed"] != int64(len(text)) || len(sink.Tables) != 0 {
			t.Fatalf("observed %v, %d tables", lim["observed"], len(sink.Tables))
		}
	})
	t.Run("converted stream", func(t *testing.T) {
		_, err := parse(t, strings.NewReader(text), limits, nil, Options{BoundBytes: true})
		wantReceipt(t, wantCode(t, err, evidence.CodeLimitExceeded), limits)
		if _, err := parse(t, strings.NewReader(text), map[string]int64{formats.LimitBytes: int64(len(text))}, nil, Options{BoundBytes: true}); err != nil {
			t.Fatalf("a stream of exactly max_bytes: %v", err)
		}
	})
}

// TestFirstFailureWins puts two bad lines in different chunks: whatever
// the workers do, the earlier one is reported.
func TestFirstFailureWins(t *testing.T) {
	good := strings.Repeat("a 1 c: \n\t1 f (/b)\n\n", 200)
	text := good + "bad one\n" + good + "bad two\n" + good
	for _, w := range []int{1, 2, 4} {
		_, err := parse(t, strings.NewReader(text), nil, nil, Options{Workers: w, ChunkBytes: 256})
		f := wantCode(t, err, evidence.CodeDecodeFailure)
		if f.Location.Line != 601 {
			t.Fatalf("workers=%d: failure at line %d, want 601", w, f.Location.Line)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := formatstest.MustInput(t, ScriptSpec, nil, nil, nil)
	_, err := Parse(ctx, in, strings.NewReader("a 1 c: \n\t1 f (/b)\n\n"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestSniff(t *testing.T) {
	read := func(f string) []byte {
		b, err := os.ReadFile(testdata(f))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > formats.SniffBytes {
			b = b[:formats.SniffBytes]
		}
		return b
	}
	cases := []struct {
		name         string
		prefix       []byte
		script, data formats.Verdict
	}{
		{"hot text", read("perf/hot.perf.txt"), formats.Yes, formats.No},
		{"tmpl text with header", read("perf/tmpl.perf.txt"), formats.Yes, formats.No},
		{"speedscope header", read("perf/simple-with-header.linux-perf.txt"), formats.Yes, formats.No},
		{"rust", read("perf/rust-mangled.linux-perf.txt"), formats.Yes, formats.No},
		{"perf.data", read("perf/hot.perf.data"), formats.No, formats.Yes},
		{"folded", read("collapsed/hot.folded"), formats.No, formats.No},
		{"json", []byte(`{"nodes": []}` + "\n"), formats.No, formats.No},
		{"only comments", []byte("# ========\n# perf version : 6.1\n"), formats.NeedMore, formats.No},
		{"short", []byte("PERF"), formats.NeedMore, formats.NeedMore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v := Sniff(c.prefix); v != c.script {
				t.Errorf("perf-script sniff %v, want %v", v, c.script)
			}
			if v := SniffData(c.prefix); v != c.data {
				t.Errorf("perf-data sniff %v, want %v", v, c.data)
			}
		})
	}
}

// TestDetect goes through formats.Detect with the sibling formats, as the
// CLI does for an explicit path.
func TestDetect(t *testing.T) {
	specs := []*formats.Spec{DataSpec, ScriptSpec, collapsed.Spec}
	for path, want := range map[string]string{
		"perf/hot.perf.data":                     "perf-data",
		"perf/hot.perf.txt":                      "perf-script",
		"perf/simple-with-header.linux-perf.txt": "perf-script",
		"collapsed/hot.folded":                   "collapsed-stacks",
	} {
		prefix, err := formats.ReadPrefix(testdata(path))
		if err != nil {
			t.Fatal(err)
		}
		s, err := formats.Detect(specs, testdata(path), prefix, "")
		if err != nil || s.Name != want {
			t.Errorf("%s: detected %v (%v), want %s", path, s, err, want)
		}
	}
}

// TestCollapsedCrossCheck compares the perf script decode of each fixture
// with the collapsed-stacks decode of the folded stacks that regen.sh
// wrote from the same text with an independent awk collapser.
func TestCollapsedCrossCheck(t *testing.T) {
	for _, name := range []string{"hot", "tmpl", "simple-with-header"} {
		t.Run(name, func(t *testing.T) {
			src := "perf/" + name + ".perf.txt"
			if name == "simple-with-header" {
				src = "perf/simple-with-header.linux-perf.txt"
			}
			ps, err := decodeFile(t, ScriptSpec, testdata(src), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := decodeFile(t, collapsed.Spec, testdata("collapsed/"+name+".folded"), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			total := func(s *formatstest.Sink) int64 {
				return intOf(t, s.Named("cpu.frames")[0].Summary.Metrics["total_weight"].Value)
			}
			if total(ps) != total(cs) {
				t.Fatalf("totals: perf script %d, folded %d", total(ps), total(cs))
			}
			if a, b := selfByFunction(t, ps), selfByFunction(t, cs); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("self by function differs:\nperf script %v\nfolded      %v", a, b)
			}
		})
	}
}

// perf script rows go through the shared value bound (max_value_bytes):
// long module paths and symbols are cut and the tables say so.
func TestValueBound(t *testing.T) {
	full, err := decodeFile(t, ScriptSpec, testdata("perf/hot.perf.txt"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := decodeFile(t, ScriptSpec, testdata("perf/hot.perf.txt"), nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}
