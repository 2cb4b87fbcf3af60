package observe

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

func nest(depth int) any {
	var v any = 1
	for range depth {
		v = []any{v}
	}
	return v
}

func entries(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func members(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[strings.Repeat("k", 1+i%3)+string(rune('a'+i%26))+string(rune('A'+i/26))] = i
	}
	return m
}

func readRecords(t *testing.T, path string) []*Record {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Record
	for _, l := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if len(l) > MaxLine {
			t.Fatalf("SDK wrote a %d-byte line", len(l))
		}
		r, err := ParseRecord(l)
		if err != nil {
			t.Fatalf("SDK wrote a record the decoder refuses: %v\n%s", err, l)
		}
		out = append(out, r)
	}
	return out
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := evidence.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.observations.jsonl")
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	values := []struct {
		name string
		in   any
		want string // canonical form after decoding
	}{
		{"nil", nil, `null`},
		{"bool", true, `true`},
		{"int", -42, `-42`},
		{"uint64", uint64(math.MaxUint64), `"18446744073709551615"`},
		{"float", 0.25, `0.25`},
		{"float32", float32(1.5), `1.5`},
		{"number", json.Number("1e300"), `1e+300`},
		{"string", "naïve \"quoted\"\n\x01", `"naïve \"quoted\"\n\u0001"`},
		{"slice", []float64{1, 2.5}, `[1,2.5]`},
		{"map", map[string]any{"b": []string{"x"}, "a": nil, "é": 1}, `{"a":null,"b":["x"],"é":1}`},
		{"depth 8", nest(8), `[[[[[[[[1]]]]]]]]`},
		{"256 entries", entries(256), canon(t, entries(256))},
		{"256 members", members(256), canon(t, members(256))},
	}
	for _, v := range values {
		if err := rec.Observe("v_"+v.name, v.in, Unit("ms"), InPhase("p")); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
	}
	long := strings.Repeat("é", MaxLabel)
	if err := rec.Observe(long, 1, At(7)); err != nil {
		t.Fatalf("200-character name: %v", err)
	}
	end, err := rec.Phase(long)
	if err != nil {
		t.Fatal(err)
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got := readRecords(t, path)
	if len(got) != len(values)+3 {
		t.Fatalf("%d records", len(got))
	}
	for i, v := range values {
		r := got[i]
		if r.Kind != KindObservation || r.Name != "v_"+v.name || r.Unit != "ms" || r.Phase != "p" || r.PID != int64(os.Getpid()) || r.TS <= 0 {
			t.Fatalf("%s: record %+v", v.name, r)
		}
		if c := canon(t, r.Value); c != v.want {
			t.Errorf("%s: value %s, want %s", v.name, c, v.want)
		}
	}
	if r := got[len(values)]; r.Name != long || r.TS != 7 || r.Phase != "" {
		t.Fatalf("long name record %+v", r)
	}
	if s, e := got[len(values)+1], got[len(values)+2]; s.Kind != KindPhaseStart || e.Kind != KindPhaseEnd || s.Phase != long {
		t.Fatalf("phase records %+v %+v", s, e)
	}
}

func TestExactLineBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// Find the string length that makes the line exactly MaxLine bytes.
	probe := filepath.Join(t.TempDir(), "probe")
	p, _ := Open(probe)
	if err := p.Observe("s", "", At(1)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	raw, _ := os.ReadFile(probe)
	fill := strings.Repeat("x", MaxLine-len(raw))
	if err := rec.Observe("s", fill, At(1)); err != nil {
		t.Fatalf("a line of exactly %d bytes: %v", MaxLine, err)
	}
	err = rec.Observe("s", fill+"x", At(1))
	if !errors.Is(err, ErrBounds) {
		t.Fatalf("a line of %d bytes: %v", MaxLine+1, err)
	}
	rec.Close()
	if got := readRecords(t, path); len(got) != 1 {
		t.Fatalf("%d records", len(got))
	}
}

type point struct{ X int }

func TestWriteBounds(t *testing.T) {
	cases := []struct {
		name string
		call func(r *Recorder) error
	}{
		{"NaN", func(r *Recorder) error { return r.Observe("x", math.NaN()) }},
		{"+Inf", func(r *Recorder) error { return r.Observe("x", math.Inf(1)) }},
		{"-Inf in a slice", func(r *Recorder) error { return r.Observe("x", []float64{1, math.Inf(-1)}) }},
		{"infinite json.Number", func(r *Recorder) error { return r.Observe("x", json.Number("1e999")) }},
		{"not a number", func(r *Recorder) error { return r.Observe("x", json.Number("NaN")) }},
		{"nesting 9", func(r *Recorder) error { return r.Observe("x", nest(9)) }},
		{"257 entries", func(r *Recorder) error { return r.Observe("x", entries(257)) }},
		{"257 members", func(r *Recorder) error { return r.Observe("x", members(257)) }},
		{"invalid UTF-8 value", func(r *Recorder) error { return r.Observe("x", "a\xffb") }},
		{"invalid UTF-8 key", func(r *Recorder) error { return r.Observe("x", map[string]int{"\xc3": 1}) }},
		{"invalid UTF-8 name", func(r *Recorder) error { return r.Observe("\xed\xa0\x80", 1) }},
		{"empty name", func(r *Recorder) error { return r.Observe("", 1) }},
		{"201-character name", func(r *Recorder) error { return r.Observe(strings.Repeat("é", 201), 1) }},
		{"201-character unit", func(r *Recorder) error { return r.Observe("x", 1, Unit(strings.Repeat("u", 201))) }},
		{"long phase", func(r *Recorder) error { return r.StartPhase(strings.Repeat("p", 201)) }},
		{"empty phase", func(r *Recorder) error { return r.EndPhase("") }},
		{"negative timestamp", func(r *Recorder) error { return r.Observe("x", 1, At(-1)) }},
		{"struct", func(r *Recorder) error { return r.Observe("x", point{1}) }},
		{"pointer", func(r *Recorder) error { return r.Observe("x", &point{1}) }},
		{"int keys", func(r *Recorder) error { return r.Observe("x", map[int]int{1: 1}) }},
		{"channel", func(r *Recorder) error { return r.Observe("x", make(chan int)) }},
		{"line over 16 KiB", func(r *Recorder) error { return r.Observe("x", strings.Repeat("y", MaxLine)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "o")
			rec, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.call(rec); !errors.Is(err, ErrBounds) {
				t.Fatalf("want a bounds error, got %v", err)
			}
			rec.Close()
			if raw, _ := os.ReadFile(path); len(raw) != 0 {
				t.Fatalf("a refused record wrote %q", raw)
			}
			// A nil recorder (not under capture) validates just the same.
			if err := c.call(nil); !errors.Is(err, ErrBounds) {
				t.Fatalf("nil recorder accepted it: %v", err)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "")
	r, err := FromEnv()
	if err != nil || r != nil {
		t.Fatalf("unset: %v %v", r, err)
	}
	if err := r.Observe("x", 1); err != nil {
		t.Fatalf("nil recorder refused a valid record: %v", err)
	}
	path := filepath.Join(t.TempDir(), "env.observations.jsonl")
	t.Setenv(EnvVar, path)
	if r, err = FromEnv(); err != nil || r == nil {
		t.Fatalf("set: %v %v", r, err)
	}
	if err := r.Observe("x", 1); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := r.Observe("x", 1); err == nil {
		t.Fatal("closed recorder wrote")
	}
	if got := readRecords(t, path); len(got) != 1 {
		t.Fatalf("%d records", len(got))
	}
}

func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	a, _ := Open(path)
	b, _ := Open(path) // two descriptors, as two processes would have
	var wg sync.WaitGroup
	big := strings.Repeat("z", 8000)
	for _, r := range []*Recorder{a, b, a, b} {
		wg.Go(func() {
			for range 200 {
				if err := r.Observe("w", big); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	a.Close()
	b.Close()
	if got := readRecords(t, path); len(got) != 800 {
		t.Fatalf("%d records, want 800", len(got))
	}
}

func TestParseRecordRefuses(t *testing.T) {
	ok := `{"v":1,"kind":"observation","name":"x","value":1,"ts":1,"pid":1}`
	if _, err := ParseRecord([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"boolean ts":       `{"v":1,"kind":"observation","name":"x","value":1,"ts":true,"pid":1}`,
		"boolean pid":      `{"v":1,"kind":"observation","name":"x","value":1,"ts":1,"pid":false}`,
		"fractional ts":    `{"v":1,"kind":"observation","name":"x","value":1,"ts":1.5,"pid":1}`,
		"string ts":        `{"v":1,"kind":"observation","name":"x","value":1,"ts":"1","pid":1}`,
		"negative ts":      `{"v":1,"kind":"observation","name":"x","value":1,"ts":-1,"pid":1}`,
		"huge ts":          `{"v":1,"kind":"observation","name":"x","value":1,"ts":9223372036854775808,"pid":1}`,
		"version 2":        `{"v":2,"kind":"observation","name":"x","value":1,"ts":1,"pid":1}`,
		"missing value":    `{"v":1,"kind":"observation","name":"x","ts":1,"pid":1}`,
		"missing pid":      `{"v":1,"kind":"observation","name":"x","value":1,"ts":1}`,
		"unknown field":    `{"v":1,"kind":"observation","name":"x","value":1,"ts":1,"pid":1,"extra":0}`,
		"unknown kind":     `{"v":1,"kind":"metric","name":"x","value":1,"ts":1,"pid":1}`,
		"null phase start": `{"v":1,"kind":"phase_start","phase":null,"ts":1,"pid":1}`,
		"phase with value": `{"v":1,"kind":"phase_end","phase":"p","value":1,"ts":1,"pid":1}`,
		"not an object":    `[1]`,
		"trailing data":    ok + ` 1`,
	}
	for name, line := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseRecord([]byte(line)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
