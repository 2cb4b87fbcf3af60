package pstats

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	"github.com/flameox/flameox/internal/formats/pstats/marshal"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

type capture = formatstest.Sink

const testdata = "../../../testdata/pstats"

// run decodes data as the runner would hand it over: its size known
// before the read.
func run(data []byte, limits map[string]int64) (*capture, error) {
	return runReader(bytes.NewReader(data), int64(len(data)), limits, &capture{})
}

// runReader decodes from r into c; size is the artifact's, 0 if unknown.
func runReader(r io.Reader, size int64, limits map[string]int64, c *capture) (*capture, error) {
	in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/x.pstats", Size: size}, r, limits, nil)
	if err != nil {
		return c, err
	}
	return c, Spec.Decoder.Decode(context.Background(), in, c)
}

func fixtures(t testing.TB) []string {
	paths, err := filepath.Glob(filepath.Join(testdata, "*.pstats"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no pstats fixtures in %s", testdata)
	}
	return paths
}

func readFile(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pyStats is what CPython's own pstats module reads from a file.
type pyStats struct {
	TotalTT    float64 `json:"total_tt"`
	TotalCalls int64   `json:"total_calls"`
	PrimCalls  int64   `json:"prim_calls"`
	Functions  []struct {
		Key     []any
		CC, NC  int64
		TT, CT  float64
		Callers [][2]json.RawMessage
	}
}

const pyReader = `
import json, pstats, sys, types
def name(n):
    if isinstance(n, types.CodeType):
        return '<code object %s, file "%s", line %d>' % (n.co_name, n.co_filename, n.co_firstlineno)
    return n
s = pstats.Stats(sys.argv[1])
funcs = []
for (f, l, n), (cc, nc, tt, ct, callers) in s.stats.items():
    cl = [[[cf, cln, name(cn)], v if isinstance(v, int) else list(v)] for (cf, cln, cn), v in callers.items()]
    funcs.append({"key": [f, l, name(n)], "cc": cc, "nc": nc, "tt": tt, "ct": ct, "callers": cl})
json.dump({"total_tt": s.total_tt, "total_calls": s.total_calls, "prim_calls": s.prim_calls, "functions": funcs}, sys.stdout)
`

func bits(t *testing.T, v any) uint64 {
	t.Helper()
	f, ok := evidence.AsFloat(v)
	if !ok {
		t.Fatalf("%v (%T) is not a double", v, v)
	}
	return math.Float64bits(f)
}

// TestMatchesCPythonPstats decodes every fixture and checks, function by
// function and edge by edge, that it equals what CPython's pstats module
// reads from the same file: counts exactly, times and total_tt bit for bit.
func TestMatchesCPythonPstats(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot compare with CPython's pstats")
	}
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out, err := exec.Command(py, "-c", pyReader, path).Output()
			if err != nil {
				t.Fatalf("python3 pstats: %v", err)
			}
			var want pyStats
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.UseNumber()
			if err := dec.Decode(&want); err != nil {
				t.Fatal(err)
			}
			c, err := run(readFile(t, path), nil)
			if err != nil {
				t.Fatal(err)
			}
			frames, edges := c.Table(table.CPUFrames.Name), c.Table(table.CPUEdges.Name)
			if len(frames.Rows) != len(want.Functions) {
				t.Fatalf("%d frames, pstats has %d functions", len(frames.Rows), len(want.Functions))
			}
			m := frames.Summary.Metrics
			if got := bits(t, m[table.MetricTotalWeight].Value); got != math.Float64bits(want.TotalTT) {
				t.Errorf("total_weight %v, pstats total_tt %v", m[table.MetricTotalWeight].Value, want.TotalTT)
			}
			if m["total_calls"].Value != want.TotalCalls || m["primitive_calls"].Value != want.PrimCalls {
				t.Errorf("calls %v/%v, pstats %d/%d", m["total_calls"].Value, m["primitive_calls"].Value, want.TotalCalls, want.PrimCalls)
			}
			e := 0
			for i, f := range want.Functions {
				row := frames.Rows[i]
				id := canonicalKey(t, f.Key)
				if row["frame_id"] != id {
					t.Fatalf("frame %d is %v, pstats has %s", i, row["frame_id"], id)
				}
				// pstats' line 0 (a built-in, a fake frame) is the schema's -1.
				line := mustInt(t, f.Key[1])
				if line == 0 {
					line = -1
				}
				if row["function"] != f.Key[2] || row["line"] != line {
					t.Errorf("%s: function/line %v/%v", id, row["function"], row["line"])
				}
				if row["calls"] != f.NC || row["primitive_calls"] != f.CC {
					t.Errorf("%s: calls %v/%v, pstats %d/%d", id, row["calls"], row["primitive_calls"], f.NC, f.CC)
				}
				if bits(t, row["self_weight"]) != math.Float64bits(f.TT) || bits(t, row["inclusive_weight"]) != math.Float64bits(f.CT) {
					t.Errorf("%s: times %v/%v, pstats %v/%v", id, row["self_weight"], row["inclusive_weight"], f.TT, f.CT)
				}
				for _, cl := range f.Callers {
					if e >= len(edges.Rows) {
						t.Fatalf("only %d edges", len(edges.Rows))
					}
					edge := edges.Rows[e]
					e++
					var ck []any
					mustUnmarshal(t, cl[0], &ck)
					if edge["callee_id"] != id || edge["caller_id"] != canonicalKey(t, ck) {
						t.Fatalf("edge %d: %v → %v, pstats %v → %s", e, edge["caller_id"], edge["callee_id"], ck, id)
					}
					var timed []float64
					if json.Unmarshal(cl[1], &timed) == nil {
						if edge["calls"] != int64(timed[0]) || edge["primitive_calls"] != int64(timed[1]) ||
							bits(t, edge["self_weight"]) != math.Float64bits(timed[2]) || bits(t, edge["weight"]) != math.Float64bits(timed[3]) {
							t.Errorf("edge %d: %v, pstats %v", e, edge, timed)
						}
						continue
					}
					var n int64
					mustUnmarshal(t, cl[1], &n)
					if edge["calls"] != n || edge["weight"] != nil || edge["primitive_calls"] != nil {
						t.Errorf("edge %d: %v, pstats count %d", e, edge, n)
					}
				}
			}
			if e != len(edges.Rows) {
				t.Errorf("%d edges, pstats has %d", len(edges.Rows), e)
			}
		})
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := evidence.AsInt(v)
	if !ok {
		t.Fatalf("%v is not an int", v)
	}
	return n
}

func canonicalKey(t *testing.T, k []any) string {
	t.Helper()
	b, err := evidence.Canonical([]any{k[0], mustInt(t, k[1]), k[2]})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtureFacts checks facts about the workload that hold whatever the
// timings: the hot function, recursion counts, built-ins and the profile
// module's synthetic frames.
func TestFixtureFacts(t *testing.T) {
	find := func(rows []evidence.Object, fn string) evidence.Object {
		for _, r := range rows {
			if r["function"] == fn {
				return r
			}
		}
		t.Fatalf("no frame %q", fn)
		return nil
	}
	cases := []struct {
		file      string
		timedEdge bool
	}{
		{"cprofile-workload.pstats", true},
		{"cprofile-dump-stats.pstats", true},
		{"profile-workload.pstats", false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := run(readFile(t, filepath.Join(testdata, c.file)), nil)
			if err != nil {
				t.Fatal(err)
			}
			frames, edges := got.Table(table.CPUFrames.Name), got.Table(table.CPUEdges.Name)
			if !frames.Summary.Complete || !edges.Summary.Complete {
				t.Fatal("summaries must be complete")
			}
			if u, _ := frames.Header.Column("self_weight"); u.Unit != "s" {
				t.Fatalf("self_weight unit %q", u.Unit)
			}
			hot := find(frames.Rows, "hot")
			if hot["calls"] != int64(40) || hot["file"] != "workload.py" || hot["line"] != int64(8) || hot["symbolization"] != table.Symbolized {
				t.Errorf("hot: %v", hot)
			}
			var maxSelf float64
			var hottest string
			for _, r := range frames.Rows {
				if f, _ := evidence.AsFloat(r["self_weight"]); f > maxSelf {
					maxSelf, hottest = f, r["function"].(string)
				}
			}
			if hottest != "hot" {
				t.Errorf("hottest function is %s, want hot", hottest)
			}
			fib := find(frames.Rows, "fib")
			// fib(16) makes 3193 calls, one of them primitive.
			if fib["calls"] != int64(3193) || fib["primitive_calls"] != int64(1) {
				t.Errorf("fib: %v", fib)
			}
			if l := find(frames.Rows, "<lambda>"); l["symbolization"] != table.Anonymous {
				t.Errorf("lambda: %v", l)
			}
			var self int
			for _, e := range edges.Rows {
				if e["caller_function"] == "fib" && e["callee_function"] == "fib" {
					self++
					if c.timedEdge && e["calls"] != int64(3192) {
						t.Errorf("fib→fib: %v", e)
					}
				}
				if !c.timedEdge && e["weight"] != nil {
					t.Errorf("profile-module edge with a weight: %v", e)
				}
			}
			if self != 1 {
				t.Errorf("%d fib→fib edges", self)
			}
			if c.timedEdge {
				b := find(frames.Rows, "<built-in method builtins.sorted>")
				if b["file"] != nil || b["line"] != int64(-1) || b["symbolization"] != table.Symbolized {
					t.Errorf("built-in: %v", b)
				}
			} else {
				if p := find(frames.Rows, "profiler"); p["symbolization"] != table.Synthetic || p["file"] != nil {
					t.Errorf("profiler frame: %v", p)
				}
				if p := find(frames.Rows, `<code object <module>, file "workload.py", line 1>`); p["symbolization"] != table.Synthetic {
					t.Errorf("statement frame: %v", p)
				}
				if len(edges.Summary.Limitations) == 0 {
					t.Error("profile-module edges must state that they carry no weights")
				}
			}
		})
	}
}

// Re-encoded stats (dump_stats writes different back-references) decode
// to the same tables.
func TestEncodingsAgree(t *testing.T) {
	a, err := run(readFile(t, filepath.Join(testdata, "cprofile-workload.pstats")), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := run(readFile(t, filepath.Join(testdata, "cprofile-dump-stats.pstats")), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Tables {
		ja, _ := evidence.Canonical(a.Tables[i].Rows)
		jb, _ := evidence.Canonical(b.Tables[i].Rows)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("table %s differs", a.Tables[i].Header.Name)
		}
	}
}

func TestReaders(t *testing.T) {
	data := readFile(t, filepath.Join(testdata, "cprofile-workload.pstats"))
	want, err := run(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := evidence.Canonical(want.Tables[1].Rows)
	for name, r := range map[string]func() io.Reader{
		"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		"data+err": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := runReader(r(), int64(len(data)), nil, &capture{})
			if err != nil {
				t.Fatal(err)
			}
			if j, _ := evidence.Canonical(got.Tables[1].Rows); !bytes.Equal(j, wantJSON) {
				t.Fatal("edges differ from a plain read")
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		_, err := runReader(io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(errors.New("disk on fire"))), int64(len(data)), nil, &capture{})
		assertCode(t, err, evidence.CodeIOFailure)
	})
}

// Through formats.Run: the decoder streams the whole artifact, so the
// digest check passes.
func TestRunDigest(t *testing.T) {
	path := filepath.Join(testdata, "cprofile-workload.pstats")
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	lims, err := formats.EffectiveLimits(Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := formats.Run(context.Background(), Spec, art, lims, nil, &formats.StreamSink{W: w, Stamper: formats.Stamper{Spec: Spec, Artifact: art}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"kind":"summary"`); n != 2 {
		t.Fatalf("%d summaries", n)
	}
}

// assertReceipt checks the one LIMIT_EXCEEDED shape: details.limit names
// the limit crossed, with its effective value and unit.
func assertReceipt(t *testing.T, err error, limits map[string]int64) {
	t.Helper()
	var f *evidence.Failure
	errors.As(err, &f)
	r, ok := f.Details["limit"].(evidence.Object)
	if !ok {
		t.Fatalf("%v: details.limit is %T", err, f.Details["limit"])
	}
	name, _ := r["name"].(string)
	l, ok := Spec.Limit(name)
	if !ok || !strings.Contains(f.Message, name) {
		t.Fatalf("%v: receipt names limit %q", err, name)
	}
	want := l.Default
	if v, ok := limits[name]; ok {
		want = v
	}
	if r["value"] != want || r["unit"] != l.Unit {
		t.Fatalf("%v: receipt %v, want value %d unit %s", err, r, want, l.Unit)
	}
	if n, ok := r["observed"].(int64); ok && n <= want {
		t.Fatalf("%v: observed %d within the limit %d", err, n, want)
	}
}

func assertCode(t *testing.T, err error, code evidence.Code) {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v (%T), want a %s failure", err, err, code)
	}
	if f.Code != code {
		t.Fatalf("got %s (%v), want %s", f.Code, f, code)
	}
}

// enc writes marshal data for hand-made inputs.
type enc struct{ b []byte }

func (e *enc) raw(b ...byte) *enc { e.b = append(e.b, b...); return e }
func (e *enc) i32(n int32) *enc   { e.b = binary.LittleEndian.AppendUint32(e.b, uint32(n)); return e }
func (e *enc) int(n int32) *enc   { return e.raw('i').i32(n) }
func (e *enc) str(s string) *enc  { return e.raw('u').i32(int32(len(s))).raw([]byte(s)...) }
func (e *enc) float(f float64) *enc {
	e.raw('g')
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f))
	return e
}
func (e *enc) tuple(n int) *enc { return e.raw(')', byte(n)) }

// flagged marks the last type code written at off as one a reference may
// name (FLAG_REF).
func (e *enc) flagged(off int) *enc { e.b[off] |= 0x80; return e }
func (e *enc) ref(slot int32) *enc  { return e.raw('r').i32(slot) }
func (e *enc) key(file string, line int32, name string) *enc {
	return e.tuple(3).str(file).int(line).str(name)
}

// entry writes key → (cc, nc, tt, ct, {callers}) with each caller timed.
func (e *enc) entry(name string, callers ...string) *enc {
	e.key("m.py", 1, name).tuple(5).int(1).int(2).float(0.5).float(1.5).raw('{')
	for _, c := range callers {
		e.key("m.py", 1, c).tuple(4).int(2).int(1).float(0.25).float(0.75)
	}
	return e.raw('0')
}

func TestHostile(t *testing.T) {
	valid := func() *enc { return (&enc{}).raw('{').entry("a").entry("b", "a") }
	real := readFile(t, filepath.Join(testdata, "cprofile-workload.pstats"))
	cases := []struct {
		name   string
		data   []byte
		limits map[string]int64
		code   evidence.Code
		msg    string
	}{
		{"empty", nil, nil, evidence.CodeDecodeFailure, "not a pstats dict"},
		{"gzip", []byte{0x1f, 0x8b, 8, 0}, nil, evidence.CodeDecodeFailure, "expected a dict"},
		{"top level tuple", (&enc{}).tuple(0).b, nil, evidence.CodeDecodeFailure, "expected a dict"},
		{"truncated after key", (&enc{}).raw('{').key("m.py", 1, "a").b, nil, evidence.CodeDecodeFailure, "ends inside"},
		{"unterminated dict", valid().b, nil, evidence.CodeDecodeFailure, "ends inside dict"},
		{"trailing data", valid().raw('0', 'N').b, nil, evidence.CodeDecodeFailure, "after the object"},
		{"key not a tuple", (&enc{}).raw('{').str("a").b, nil, evidence.CodeDecodeFailure, "want a (file, line, name) tuple"},
		{"key of two", (&enc{}).raw('{').tuple(2).str("a").int(1).b, nil, evidence.CodeDecodeFailure, "tuple of 2"},
		{"line not int", (&enc{}).raw('{').tuple(3).str("a").str("1").str("f").b, nil, evidence.CodeDecodeFailure, "line is str"},
		{"value of four", (&enc{}).raw('{').key("m.py", 1, "a").tuple(4).b, nil, evidence.CodeDecodeFailure, "ends inside"},
		{"value wrong arity", (&enc{}).raw('{').key("m.py", 1, "a").tuple(2).int(1).int(1).raw('0').b, nil, evidence.CodeDecodeFailure, "tuple of 2"},
		{"negative calls", (&enc{}).raw('{').key("m.py", 1, "a").tuple(5).int(1).int(-2).float(0).float(0).raw('{', '0', '0').b, nil, evidence.CodeDecodeFailure, "negative"},
		{"time not a number", (&enc{}).raw('{').key("m.py", 1, "a").tuple(5).int(1).int(1).str("x").float(0).raw('{', '0', '0').b, nil, evidence.CodeDecodeFailure, "tottime is str"},
		{"callers not a dict", (&enc{}).raw('{').key("m.py", 1, "a").tuple(5).int(1).int(1).float(0).float(0).raw('N', '0').b, nil, evidence.CodeDecodeFailure, "callers is None"},
		{"unresolved caller", (&enc{}).raw('{').entry("a", "ghost").raw('0').b, nil, evidence.CodeDecodeFailure, "m.py:1(ghost) of m.py:1(a) is not a function"},
		{"duplicate function", (&enc{}).raw('{').entry("a").entry("a").raw('0').b, nil, evidence.CodeDecodeFailure, "appears twice"},
		{"duplicate caller", (&enc{}).raw('{').entry("a").entry("b", "a", "a").raw('0').b, nil, evidence.CodeDecodeFailure, "appears twice"},
		{"bad caller value", (&enc{}).raw('{').entry("a").key("m.py", 1, "b").tuple(5).int(1).int(1).float(0).float(0).raw('{').key("m.py", 1, "a").str("x").raw('0', '0').b, nil, evidence.CodeDecodeFailure, "want (calls, primitive calls, tottime, cumtime) or a call count"},
		{"bad ref", (&enc{}).raw('{').tuple(3).raw('r').i32(7).b, nil, evidence.CodeDecodeFailure, "reference 7 to an unknown object"},
		{"unknown type code", (&enc{}).raw('{').tuple(3).raw('Q').b, nil, evidence.CodeDecodeFailure, "unknown type code"},
		{"deep nesting", append((&enc{}).raw('{').b, bytes.Repeat([]byte{')', 1}, 200)...), nil, evidence.CodeLimitExceeded, "max_depth"},
		{"huge declared str", (&enc{}).raw('{').tuple(3).raw('u').i32(math.MaxInt32).b, nil, evidence.CodeLimitExceeded, "max_bytes"},
		{"huge declared tuple", (&enc{}).raw('{').raw('(').i32(math.MaxInt32).b, nil, evidence.CodeLimitExceeded, "max_objects"},
		{"too many functions", valid().raw('0').b, map[string]int64{LimitFunctions: 1}, evidence.CodeLimitExceeded, "max_functions=1"},
		{"too many edges", (&enc{}).raw('{').entry("a").entry("b", "a").entry("c", "a").raw('0').b, map[string]int64{LimitEdges: 1}, evidence.CodeLimitExceeded, "max_edges=1"},
		{"too many bytes", real, map[string]int64{formats.LimitBytes: 1000}, evidence.CodeLimitExceeded, "max_bytes=1000"},
		{"too many objects", real, map[string]int64{LimitObjects: 100}, evidence.CodeLimitExceeded, "max_objects=100"},
		{"first unresolved caller", (&enc{}).raw('{').entry("x", "g1").entry("y", "g2").raw('0').b, nil, evidence.CodeDecodeFailure, "m.py:1(g1) of m.py:1(x) is not a function"},
		{"caller of a caller unresolved", (&enc{}).raw('{').entry("x", "y").entry("y", "g").raw('0').b, nil, evidence.CodeDecodeFailure, "m.py:1(g) of m.py:1(y) is not a function"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(c.data, c.limits)
			assertCode(t, err, c.code)
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("%q lacks %q", err, c.msg)
			}
			if c.code == evidence.CodeLimitExceeded {
				assertReceipt(t, err, c.limits)
			}
		})
	}
	t.Run("bytes beyond max_bytes while reading", func(t *testing.T) {
		// The size is unknown: the reader's own bound stops it.
		_, err := runReader(bytes.NewReader(real), 0, map[string]int64{formats.LimitBytes: 1000}, &capture{})
		assertCode(t, err, evidence.CodeLimitExceeded)
		assertReceipt(t, err, map[string]int64{formats.LimitBytes: 1000})
	})
	t.Run("valid hand-made", func(t *testing.T) {
		if _, err := run(valid().raw('0').b, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("every truncation of a real file", func(t *testing.T) {
		for n := 0; n < len(real); n += 97 {
			_, err := run(real[:n], nil)
			assertCode(t, err, evidence.CodeDecodeFailure)
		}
	})
}

// Objects shared through back-references decode as their copies: a key
// tuple named again by reference (as an entry's key and as a caller), a
// callers dict and a value tuple shared by two entries.
func TestSharedObjects(t *testing.T) {
	callers := func(e *enc) *enc { return e.key("m.py", 2, "b").tuple(4).int(2).int(1).float(0.25).float(0.75) }
	value := func(e *enc) *enc { return e.tuple(5).int(1).int(2).float(0.5).float(1.5) }

	plain := (&enc{}).raw('{')
	for _, name := range []string{"a", "b"} {
		line := int32(1)
		if name == "b" {
			line = 2
		}
		plain.key("m.py", line, name)
		callers(value(plain).raw('{')).raw('0')
	}
	plain.raw('0')

	// Slots: a's key 0, a's callers dict 1, the caller key (b) 2, b's
	// value tuple 3; b's key is slot 2 again and its callers slot 1.
	sh := (&enc{}).raw('{')
	at := func() int { return len(sh.b) }
	n := at()
	value(sh.key("m.py", 1, "a").flagged(n))
	n = at()
	sh.raw('{').flagged(n)
	n = at()
	callers(sh).flagged(n).raw('0')
	n = at()
	sh.ref(2).tuple(5).flagged(n + 5).int(1).int(2).float(0.5).float(1.5).ref(1).raw('0')
	// The generic reader sees the same objects in both.
	pv, err := marshal.NewDecoder(bytes.NewReader(plain.b), marshal.Limits{}).Value()
	if err != nil {
		t.Fatal(err)
	}
	d := marshal.NewDecoder(bytes.NewReader(sh.b), marshal.Limits{})
	sv, err := d.Value()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pv) != fmt.Sprint(sv) || d.Refs() != 4 || len(sh.b) >= len(plain.b) {
		t.Fatalf("shared encoding: %v (%d slots), plain %v", sv, d.Refs(), pv)
	}

	want, err := run(plain.b, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(sh.b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range want.Tables {
		jw, _ := evidence.Canonical(tb.Rows)
		jg, _ := evidence.Canonical(got.Tables[i].Rows)
		if !bytes.Equal(jw, jg) || len(tb.Rows) != 2 {
			t.Fatalf("%s: shared %s, plain %s", tb.Header.Name, jg, jw)
		}
	}
}

// The hotspot projection declines cpu.edges: its rows are never built and
// the caller entries are not kept, yet every caller is still resolved and
// the frames are the same.
func TestDeclinedEdges(t *testing.T) {
	data := readFile(t, filepath.Join(testdata, "cprofile-workload.pstats"))
	all, err := run(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := runReader(bytes.NewReader(data), int64(len(data)), nil, &capture{Only: []string{table.CPUFrames.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames.Tables) != 1 {
		t.Fatalf("%d tables recorded", len(frames.Tables))
	}
	ja, _ := evidence.Canonical(all.Table(table.CPUFrames.Name).Rows)
	jf, _ := evidence.Canonical(frames.Tables[0].Rows)
	if !bytes.Equal(ja, jf) {
		t.Fatal("frames differ when edges are declined")
	}
	in := formatstest.MustInput(t, Spec, nil, bytes.NewReader(data), nil)
	p := newParser(in.R, marshal.Limits{}, false, 1<<40)
	if err := p.read(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if p.edges.n != 0 || p.nedges != int64(len(all.Table(table.CPUEdges.Name).Rows)) {
		t.Fatalf("%d caller entries kept of %d", p.edges.n, p.nedges)
	}
	// An unresolved caller fails the same with the edges declined.
	bad := (&enc{}).raw('{').entry("a", "ghost").raw('0').b
	_, err = runReader(bytes.NewReader(bad), int64(len(bad)), nil, &capture{Only: []string{table.CPUFrames.Name}})
	assertCode(t, err, evidence.CodeDecodeFailure)
}

func TestSniff(t *testing.T) {
	real := readFile(t, filepath.Join(testdata, "cprofile-workload.pstats"))
	prof := readFile(t, filepath.Join(testdata, "profile-workload.pstats"))
	cases := []struct {
		name string
		data []byte
		want formats.Verdict
	}{
		{"cProfile", real[:min(len(real), formats.SniffBytes)], formats.Yes},
		{"profile module", prof[:min(len(prof), formats.SniffBytes)], formats.Yes},
		{"first key only", real[:0x5c], formats.Yes},
		{"inside the first key", real[:40], formats.NeedMore},
		{"first bytes", real[:3], formats.NeedMore},
		{"empty", nil, formats.NeedMore},
		{"empty dict", []byte("{0"), formats.NeedMore},
		{"gzip (pprof .prof)", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, formats.No},
		{"protobuf (pprof .prof)", []byte{0x0a, 0x10, 0x0a, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's'}, formats.No},
		{"json", []byte(`{"a": 1}`), formats.No},
		{"dict of str keys", (&enc{}).raw('{').str("a").int(1).raw('0').b, formats.No},
		{"dict with a wrong value", (&enc{}).raw('{').key("m.py", 1, "a").int(3).raw('0').b, formats.No},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sniff(c.data); got != c.want {
				t.Fatalf("Sniff = %d, want %d", got, c.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	// Seeds are real files, whole when small and cut to their first
	// entries when not: the fuzzer minimizes each input it finds
	// interesting, one execution per step, so a seed of tens of KB would
	// spend minutes there instead of fuzzing.
	for _, p := range fixtures(f) {
		b := readFile(f, p)
		if len(b) > 1024 {
			b = b[:1024]
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add((&enc{}).raw('{').entry("a").entry("b", "a").raw('0').b)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Shared objects let a small file stand for many entries (a
		// callers dict referenced by every entry): the entity limits keep
		// each execution as cheap as the fixtures, the same bounds as the
		// fixtures' own sizes allow.
		limits := map[string]int64{formats.LimitBytes: 1 << 20, LimitObjects: 1 << 16, LimitDepth: 32,
			LimitFunctions: 1 << 12, LimitEdges: 1 << 13}
		c, err := run(b, limits)
		_ = Sniff(b)
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		frames, edges := c.Table(table.CPUFrames.Name), c.Table(table.CPUEdges.Name)
		if frames == nil || edges == nil || frames.Summary == nil || edges.Summary == nil {
			t.Fatal("success without both tables")
		}
		if int64(len(frames.Rows)) != frames.Summary.RowsObserved || int64(len(edges.Rows)) != edges.Summary.RowsObserved {
			t.Fatal("rows and summary disagree")
		}
		ids := map[any]bool{}
		for _, r := range frames.Rows {
			ids[r["frame_id"]] = true
		}
		for _, e := range edges.Rows {
			if !ids[e["caller_id"]] || !ids[e["callee_id"]] {
				t.Fatalf("edge %v → %v does not resolve", e["caller_id"], e["callee_id"])
			}
		}
	})
}

// cpython writes stats shared as CPython's marshal writes cProfile's: the
// stats dict and every str are flagged where first written and referenced
// after, as are the small ints CPython caches, and each caller's key is
// one tuple shared by every callers dict naming it (snapshot_stats makes
// one per caller function).
type cpython struct {
	enc
	slots int32
	strs  map[string]int32
	ints  map[int32]int32
	keys  map[string]int32
}

func newCPython() *cpython {
	e := &cpython{strs: map[string]int32{}, ints: map[int32]int32{}, keys: map[string]int32{}}
	e.raw('{' | 0x80)
	e.slots = 1
	return e
}

func (e *cpython) str(s string) *cpython {
	if slot, ok := e.strs[s]; ok {
		e.ref(slot)
		return e
	}
	e.strs[s], e.slots = e.slots, e.slots+1
	e.raw('Z'|0x80, byte(len(s))).raw([]byte(s)...)
	return e
}

func (e *cpython) int(n int32) *cpython {
	if n < 0 || n > 256 {
		e.enc.int(n)
		return e
	}
	if slot, ok := e.ints[n]; ok {
		e.ref(slot)
		return e
	}
	e.ints[n], e.slots = e.slots, e.slots+1
	e.raw('i' | 0x80).i32(n)
	return e
}

func (e *cpython) tuple(n int) *cpython     { e.enc.tuple(n); return e }
func (e *cpython) float(f float64) *cpython { e.enc.float(f); return e }

func (e *cpython) key(name string, line int32) *cpython {
	return e.tuple(3).str("/srv/app/module.py").int(line).str(name)
}

func (e *cpython) callerKey(name string, line int32) *cpython {
	if slot, ok := e.keys[name]; ok {
		e.ref(slot)
		return e
	}
	e.keys[name], e.slots = e.slots, e.slots+1
	e.raw(')'|0x80, 3)
	return e.str("/srv/app/module.py").int(line).str(name)
}

// BenchmarkDecode decodes a generated stats file of 20,000 functions with
// four callers each, encoded with CPython's sharing.
func BenchmarkDecode(b *testing.B) {
	e := newCPython()
	const n = 20000
	name := func(i int) string { return "function_" + strings.Repeat("x", i%7) + strconv.Itoa(i) }
	for i := range n {
		e.key(name(i), int32(i+1)).tuple(5).int(1).int(2).float(0.5).float(1.5).raw('{')
		for j := 1; j <= 4 && i-j >= 0; j++ {
			e.callerKey(name(i-j), int32(i-j+1)).tuple(4).int(2).int(1).float(0.25).float(0.75)
		}
		e.raw('0')
	}
	data := e.raw('0').b
	art := &evidence.Artifact{ID: "sha256:" + strings.Repeat("ab", 32)}
	b.Run("tables", func(b *testing.B) {
		// Rows are checked against their columns and dropped.
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			in := formatstest.MustInput(b, Spec, art, bytes.NewReader(data), nil)
			if err := Spec.Decoder.Decode(context.Background(), in, formatstest.Discard{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("frames only", func(b *testing.B) {
		// As for flameox-rank's hotspots: cpu.edges is declined, so its
		// rows are not built nor the caller entries kept. The frames are
		// recorded.
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			in := formatstest.MustInput(b, Spec, art, bytes.NewReader(data), nil)
			if err := Spec.Decoder.Decode(context.Background(), in, &formatstest.Sink{Only: []string{table.CPUFrames.Name}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonl", func(b *testing.B) {
		// Rows go through the stream sink into canonical JSONL, as in
		// flameox-decode.
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			w := wire.NewWriter(io.Discard)
			in := formatstest.MustInput(b, Spec, art, bytes.NewReader(data), nil)
			if err := Spec.Decoder.Decode(context.Background(), in, &formats.StreamSink{W: w, Stamper: formats.Stamper{Spec: Spec, Artifact: art}}); err != nil {
				b.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// pstats rows go through the shared value bound (max_value_bytes, 9.11):
// long names and files are cut and marked, ids keep the whole key, and
// both tables say what they cut.
func TestValueBound(t *testing.T) {
	path := "../../../testdata/pstats/cprofile-workload.pstats"
	full, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}
