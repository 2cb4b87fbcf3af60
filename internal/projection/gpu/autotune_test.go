package gpu

import (
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/tritonautotune"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

func decodeAutotune(t testing.TB) []*projectiontest.Input {
	t.Helper()
	files, err := filepath.Glob("../../../testdata/triton/cache/*/*.autotune.json")
	if err != nil || len(files) != 3 {
		t.Fatalf("%v %v", files, err)
	}
	var in []*projectiontest.Input
	for _, f := range files {
		in = append(in, projectiontest.Decode(t, tritonautotune.Spec, f, nil)...)
	}
	return in
}

func TestAutotune(t *testing.T) {
	in := decodeAutotune(t)
	res, err := projectiontest.Run(Autotune, nil, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 12 || !res.Summary.Complete {
		t.Fatalf("%d rows %+v", len(res.Rows), res.Summary)
	}
	res, err = projectiontest.Run(Autotune, evidence.Object{"mode": "best"}, in...)
	if err != nil {
		t.Fatal(err)
	}
	// One best per kernel and key: two add_kernel keys, one matmul key.
	if len(res.Rows) != 3 {
		t.Fatalf("%v", res.Rows)
	}
	for _, r := range res.Rows {
		if r["best"] != true {
			t.Fatalf("%v", r)
		}
	}
	// The 16M add_kernel key ties on the median: the 0.2 quantile decides.
	for _, r := range res.Rows {
		if k := r["tuning_key"].([]any); k[0] == int64(16777216) && r["config_index"] != int64(3) {
			t.Fatalf("tie: %v", r)
		}
	}
	res, err = projectiontest.Run(Autotune, evidence.Object{"kernel_pattern": "^matmul", "include_failed": false}, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%v", res.Rows)
	}
}

func FuzzAutotuneRows(f *testing.F) {
	projectiontest.FuzzRows(f, Autotune, decodeAutotune(f)[0], nil, evidence.Object{"mode": "best"})
}

func BenchmarkAutotune(b *testing.B) {
	projectiontest.Bench(b, Autotune, nil, decodeAutotune(b)...)
}
