package benchsamples_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bs "github.com/flameox/flameox/pkg/benchsamples"
)

func TestFromEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.bench.jsonl")
	t.Setenv(bs.EnvVar, path)
	w, err := bs.FromEnv(bs.Producer{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	s := &bs.Series{ID: "a", Name: "n", Unit: "ns", Samples: []float64{1.5, 2}}
	if err := w.Series(s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%q", data)
	}
	if p, err := bs.ParseHeader([]byte(lines[0])); err != nil || p.Name != "t" {
		t.Fatalf("header %v %v", p, err)
	}
	got, err := bs.ParseSeries([]byte(lines[1]))
	if err != nil || got.ID != "a" || len(got.Samples) != 2 || got.Samples[0] != 1.5 {
		t.Fatalf("series %+v %v", got, err)
	}
	// Outside a capture: validated, written nowhere.
	t.Setenv(bs.EnvVar, "")
	w, err = bs.FromEnv(bs.Producer{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Series(&bs.Series{ID: "a", Name: "n", Unit: "s"}); !errors.Is(err, bs.ErrBounds) {
		t.Fatalf("bad unit: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterRefuses: what Check refuses is never written.
func TestWriterRefuses(t *testing.T) {
	var b bytes.Buffer
	w, err := bs.NewWriter(&b, bs.Producer{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	n := b.Len()
	for name, s := range map[string]*bs.Series{
		"nan":      {ID: "a", Name: "n", Unit: "ns", Samples: []float64{math.NaN()}},
		"no id":    {Name: "n", Unit: "ns"},
		"reserved": {ID: "a", Name: "n", Unit: "ns", Dimensions: map[string]string{"trial": "1"}},
		"long":     {ID: strings.Repeat("x", bs.MaxLabel+1), Name: "n", Unit: "ns"},
		"bad utf8": {ID: "a", Name: "\xff", Unit: "ns"},
	} {
		if err := w.Series(s); !errors.Is(err, bs.ErrBounds) {
			t.Errorf("%s: %v", name, err)
		}
	}
	w.Flush()
	if b.Len() != n {
		t.Fatalf("refused series were written: %q", b.String()[n:])
	}
}
