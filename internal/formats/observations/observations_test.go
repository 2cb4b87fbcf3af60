package observations

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/jsonpreview"
	"github.com/flameox/flameox/pkg/observe"
)

const fixtures = "../../../testdata/observations"

var testArtifact = &evidence.Artifact{ID: "sha256:" + strings.Repeat("0", 64), Path: "/test"}

type (
	sink     = formatstest.Sink
	recorded = formatstest.Table
)

func decode(t testing.TB, r io.Reader) (*recorded, error) {
	t.Helper()
	var s sink
	if err := Decode(context.Background(), formatstest.MustInput(t, Spec, testArtifact, r, nil), &s); err != nil {
		return nil, err
	}
	if len(s.Tables) != 1 || s.Tables[0].Summary == nil {
		t.Fatalf("want one closed table")
	}
	return s.Tables[0], nil
}

func decodeFile(t *testing.T, name string) *recorded {
	t.Helper()
	path := filepath.Join(fixtures, name)
	s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Tables[0].Rows {
		if r["artifact_id"] != art.ID {
			t.Fatalf("row artifact_id %v, want %s", r["artifact_id"], art.ID)
		}
	}
	return s.Tables[0]
}

func TestFixtures(t *testing.T) {
	cases := []struct {
		file                            string
		rows, obs, starts, ends, pids   int64
		firstName, firstKind, lastValue string
	}{
		{"python.observations.jsonl", 23, 12, 6, 5, 2, "", "phase_start", `"done"`},
		{"go.observations.jsonl", 11, 9, 1, 1, 1, "", "phase_start", `"done"`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tb := decodeFile(t, c.file)
			s := tb.Summary
			if !s.Complete || s.RowsObserved != c.rows || int64(len(tb.Rows)) != c.rows {
				t.Fatalf("summary %+v, %d rows", s, len(tb.Rows))
			}
			for name, want := range map[string]int64{"observations": c.obs, "phase_starts": c.starts, "phase_ends": c.ends, "processes": c.pids} {
				if got := s.Metrics[name].Value; got != want {
					t.Errorf("%s = %v, want %d", name, got, want)
				}
			}
			if tb.Rows[0]["kind"] != c.firstKind || tb.Rows[0]["name"] != nil {
				t.Errorf("first row %v", tb.Rows[0])
			}
			if v, _ := evidence.Canonical(tb.Rows[len(tb.Rows)-1]["value"]); string(v) != c.lastValue {
				t.Errorf("last value %s", v)
			}
			for i, r := range tb.Rows {
				if r["line"] != int64(i+1) {
					t.Fatalf("row %d has line %v", i, r["line"])
				}
			}
		})
	}
	// Exact values survive: a 2**70 integer from Python, an unsigned 64-bit
	// seed from Go, non-ASCII keys.
	py := decodeFile(t, "python.observations.jsonl")
	if v, _ := evidence.Canonical(py.Rows[2]["value"]); string(v) != `"1180591620717411303424"` {
		t.Fatalf("2**70 decoded as %s", v)
	}
	if v, _ := evidence.Canonical(py.Rows[1]["value"]); !strings.Contains(string(v), `"débit":"élevé"`) {
		t.Fatalf("config %s", v)
	}
	g := decodeFile(t, "go.observations.jsonl")
	if v, _ := evidence.Canonical(g.Rows[8]["value"]); !strings.Contains(string(v), `"seed":"18446744073709551615"`) {
		t.Fatalf("go config %s", v)
	}
}

// line builds a record line with the given value JSON.
func line(value string) string {
	return `{"v":1,"kind":"observation","name":"x","value":` + value + `,"ts":1,"pid":1}` + "\n"
}

func nestJSON(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }

func listJSON(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func objJSON(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// padded returns a valid line of exactly n bytes, newline included.
func padded(n int) string {
	base := line(`""`)
	return line(`"` + strings.Repeat("p", n-len(base)) + `"`)
}

func TestHostile(t *testing.T) {
	good := line("1")
	cases := []struct {
		name string
		in   string
		line int
	}{
		{"16 KiB + 1 line", good + padded(observe.MaxLine+1), 2},
		{"64 KiB + 1 line", good + padded(64<<10+1), 2},
		{"unterminated line beyond the bound", good + strings.Repeat("x", observe.MaxLine+1), 2},
		{"NaN", line("NaN"), 1},
		{"Infinity", line("Infinity"), 1},
		{"-Infinity", line("-Infinity"), 1},
		{"overflowing double", line("1e999"), 1},
		{"nesting 9", line(nestJSON(9)), 1},
		{"nesting 9 in an object", line(`{"a":` + nestJSON(8) + `}`), 1},
		{"257 entries", line(listJSON(257)), 1},
		{"257 members", line(objJSON(257)), 1},
		{"boolean timestamp", `{"v":1,"kind":"observation","name":"x","value":1,"ts":true,"pid":1}` + "\n", 1},
		{"fractional timestamp", `{"v":1,"kind":"observation","name":"x","value":1,"ts":1.0,"pid":1}` + "\n", 1},
		{"invalid UTF-8 in a key", line("{\"a\xff\":1}"), 1},
		{"invalid UTF-8 in a value", line("\"\xc3\""), 1},
		{"invalid UTF-8 in a name", strings.Replace(good, `"x"`, "\"\xe2\x82\"", 1), 1},
		{"lone surrogate in a value", line(`"\ud800"`), 1},
		{"lone surrogate in a key", line(`{"\udc80":1}`), 1},
		{"low surrogate first", line(`"\udc00\ud800"`), 1},
		{"empty name", strings.Replace(good, `"x"`, `""`, 1), 1},
		{"201-character name", strings.Replace(good, `"x"`, `"`+strings.Repeat("é", 201)+`"`, 1), 1},
		{"empty phase", `{"v":1,"kind":"phase_start","phase":"","ts":1,"pid":1}` + "\n", 1},
		{"null phase on a phase record", `{"v":1,"kind":"phase_end","phase":null,"ts":1,"pid":1}` + "\n", 1},
		{"duplicate key", `{"v":1,"v":1,"kind":"observation","name":"x","value":1,"ts":1,"pid":1}` + "\n", 1},
		{"unknown field", `{"v":1,"kind":"observation","name":"x","value":1,"ts":1,"pid":1,"z":0}` + "\n", 1},
		{"blank line", good + "\n", 2},
		{"not JSON", good + good + "garbage\n", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb, err := decode(t, strings.NewReader(c.in))
			var f *evidence.Failure
			if !errors.As(err, &f) {
				t.Fatalf("want DECODE_FAILURE, got %v (rows %v)", err, tb)
			}
			if f.Code != evidence.CodeDecodeFailure || f.Location.Line != c.line {
				t.Fatalf("got %s at line %d, want DECODE_FAILURE at line %d: %v", f.Code, f.Location.Line, c.line, f)
			}
		})
	}
	accepted := []struct{ name, in string }{
		{"exactly 16 KiB", padded(observe.MaxLine)},
		{"nesting 8", line(nestJSON(8))},
		{"256 entries", line(listJSON(256))},
		{"256 members", line(objJSON(256))},
		{"200-character name", strings.Replace(good, `"x"`, `"`+strings.Repeat("é", 200)+`"`, 1)},
		{"surrogate pair", line(`"\ud83d\ude00"`)},
		{"huge integer", line(strings.Repeat("9", 400))},
		{"underflowing double", line("1e-400")},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			if len(padded(observe.MaxLine)) != observe.MaxLine {
				t.Fatal("padded line has the wrong size")
			}
			tb, err := decode(t, strings.NewReader(c.in))
			if err != nil || len(tb.Rows) != 1 {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

func TestTruncated(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "python.observations.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(raw, []byte(`"name":"loss"`))
	tb, err := decode(t, bytes.NewReader(raw[:cut]))
	if err != nil {
		t.Fatalf("truncation must not fail: %v", err)
	}
	if tb.Summary.Complete || len(tb.Summary.Limitations) != 1 || tb.Summary.Metrics["unterminated_bytes"].Value.(int64) <= 0 || len(tb.Rows) != 6 {
		t.Fatalf("summary %+v, %d rows", tb.Summary, len(tb.Rows))
	}
	if tb, err = decode(t, strings.NewReader("")); err != nil || !tb.Summary.Complete || len(tb.Rows) != 0 {
		t.Fatalf("empty file: %v", err)
	}
}

func TestIOTestReaders(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "python.observations.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := decode(t, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := evidence.Canonical([]any{base.Summary, base.Rows})
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"OneByteReader": iotest.OneByteReader,
		"HalfReader":    iotest.HalfReader,
		"DataErrReader": iotest.DataErrReader,
	} {
		t.Run(name, func(t *testing.T) {
			tb, err := decode(t, wrap(bytes.NewReader(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := evidence.Canonical([]any{tb.Summary, tb.Rows}); !bytes.Equal(got, want) {
				t.Fatal("output differs from a plain reader's")
			}
		})
	}
	t.Run("ErrReader", func(t *testing.T) {
		_, err := decode(t, io.MultiReader(bytes.NewReader(raw[:300]), iotest.ErrReader(errors.New("gone"))))
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeIOFailure {
			t.Fatalf("want IO_FAILURE, got %v", err)
		}
	})
}

func TestSniff(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "go.observations.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   string
		want formats.Verdict
	}{
		{"fixture", string(raw), formats.Yes},
		{"partial record", string(raw[:20]), formats.Yes},
		{"bad record", `{"v":1,"kind":"bogus"}` + "\n", formats.Yes},
		{"partial line", `{"kin`, formats.NeedMore},
		// Never No: the name decides (TestNameClaims).
		{"other jsonl", `{"a":1}` + "\n", formats.NeedMore},
		{"text", "hello", formats.NeedMore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sniff([]byte(c.in)); got != c.want {
				t.Fatalf("Sniff = %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzDecode: no panic, only typed DECODE_FAILUREs, a consistent summary.
// The fuzzer minimizes every new input with a number of executions
// quadratic in its length, so the seeds are short: each record line of the
// real fixtures on its own, and the first few lines whole and cut off.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"python.observations.jsonl", "go.observations.jsonl"} {
		raw, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		recs := bytes.SplitAfter(raw, []byte("\n"))
		for _, r := range recs {
			if len(r) > 0 {
				f.Add(r)
			}
		}
		head := bytes.Join(recs[:min(3, len(recs))], nil)
		f.Add(head)
		f.Add(head[:len(head)*2/3])
	}
	f.Add([]byte(line(nestJSON(8)) + line(objJSON(3))))
	f.Fuzz(func(t *testing.T, data []byte) {
		Sniff(data[:min(len(data), formats.SniffBytes)])
		tb, err := decode(t, bytes.NewReader(data))
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) || fl.Code != evidence.CodeDecodeFailure {
				t.Fatalf("want a typed DECODE_FAILURE, got %v", err)
			}
			return
		}
		if tb.Summary.RowsObserved != int64(len(tb.Rows)) {
			t.Fatalf("rows_observed %d, rows %d", tb.Summary.RowsObserved, len(tb.Rows))
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	for i := range 20000 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&buf, `{"v":1,"kind":"observation","name":"step_time","value":%d.5,"phase":"train","unit":"ms","ts":%d,"pid":4242}`+"\n", i, 1700000000000000000+i)
		case 1:
			fmt.Fprintf(&buf, `{"v":1,"kind":"observation","name":"metrics","value":{"loss":0.25,"acc":[0.5,0.75,0.875],"tag":"epoch-%d"},"ts":%d,"pid":4242}`+"\n", i, 1700000000000000000+i)
		case 2:
			fmt.Fprintf(&buf, `{"v":1,"kind":"phase_start","phase":"batch","ts":%d,"pid":4242}`+"\n", 1700000000000000000+i)
		default:
			fmt.Fprintf(&buf, `{"v":1,"kind":"phase_end","phase":"batch","ts":%d,"pid":4242}`+"\n", 1700000000000000000+i)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(context.Background(), formatstest.MustInput(b, Spec, testArtifact, bytes.NewReader(data), nil), formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A file whose name or first line claims the format fails as it when
// malformed; it never becomes a generic JSONL preview with exit 0.
func TestNameClaims(t *testing.T) {
	specs := []*formats.Spec{Spec, jsonpreview.JSONL}
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       *formats.Spec
	}{
		{"bad.observations.jsonl", `{"kind":"observation","name":"x"}` + "\n", Spec},
		{"text.observations.jsonl", "not json\n", Spec},
		{"claimed.jsonl", `{"v":1,"kind":"bogus","ts":1,"pid":1}` + "\n", Spec},
		{"other.jsonl", `{"a":1}` + "\n", jsonpreview.JSONL},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := formats.Detect(specs, p, []byte(c.body), "")
			if err != nil || got != c.want {
				t.Fatalf("detected %s (%v), want %s", specName(got), err, c.want.Name)
			}
			if got != Spec {
				return
			}
			_, err = formatstest.DecodeFile(t, Spec, p, nil, nil)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || f.Location.Line != 1 {
				t.Fatalf("got %v, want DECODE_FAILURE at line 1", err)
			}
		})
	}
}

func specName(s *formats.Spec) string {
	if s == nil {
		return "nothing"
	}
	return s.Name
}

// Every summary metric states its unit.
func TestMetricUnits(t *testing.T) {
	for _, name := range []string{"python.observations.jsonl", "go.observations.jsonl"} {
		s, err := formatstest.DecodeFile(t, Spec, filepath.Join(fixtures, name), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for m, v := range s.Tables[0].Summary.Metrics {
			if v.Unit == "" {
				t.Errorf("%s: metric %s has no unit", name, m)
			}
		}
	}
}
