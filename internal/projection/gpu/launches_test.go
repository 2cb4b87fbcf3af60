package gpu

import (
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/nsys"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

var nvfuser = filepath.Join("../../../testdata/nsys", "nvfuser-report1_pqtdir", "META_DATA_EXPORT.parquet")

func decodeNsys(t testing.TB) *projectiontest.Input {
	t.Helper()
	return projectiontest.Decode(t, nsys.Spec, nvfuser, nil)[0]
}

func TestLaunchGroups(t *testing.T) {
	in := decodeNsys(t)
	res, err := projectiontest.Run(Launches, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	// 15 kernel names, one memcpy, one memset.
	if res.Summary.RowsObserved != 17 || len(res.Rows) != 17 || !res.Summary.Complete {
		t.Fatalf("%+v, %d rows", res.Summary, len(res.Rows))
	}
	var count, total int64
	var share float64
	for i, r := range res.Rows {
		c, _ := evidence.AsInt(r["count"])
		tot, _ := evidence.AsInt(r["total_ns"])
		count += c
		total += tot
		share += r["share"].(float64)
		if i > 0 {
			prev, _ := evidence.AsInt(res.Rows[i-1]["total_ns"])
			if prev < tot {
				t.Fatalf("not ranked by total time at row %d", i)
			}
		}
	}
	if count != 21 || share < 0.999999 || share > 1.000001 {
		t.Fatalf("count %d share %v", count, share)
	}
	// The ranking's top is nvFuser's kernel (135137 ns, pyarrow's count).
	if res.Rows[0]["total_ns"] != int64(135137) || res.Rows[0]["kind"] != "kernel" {
		t.Fatalf("top %v", res.Rows[0])
	}
}

func TestSelectBeforeBound(t *testing.T) {
	in := decodeNsys(t)
	res, err := projectiontest.Run(Launches, evidence.Object{"kinds": []any{"kernel"}, "name_pattern": "vectorized_elementwise", "top": 2}, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.RowsObserved != 11 || len(res.Rows) != 2 || res.Summary.Complete || res.Summary.Truncation == nil {
		t.Fatalf("%+v", res.Summary)
	}
	res, err = projectiontest.Run(Launches, evidence.Object{"mode": "launches", "kinds": []any{"memcpy", "memset"}}, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Header.Name != "gpu.selected_launches" || !res.Summary.Complete {
		t.Fatalf("%v %+v", res.Rows, res.Summary)
	}
	res, err = projectiontest.Run(Launches, evidence.Object{"device": 1}, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 0 {
		t.Fatalf("device 1 ran nothing: %v", res.Rows)
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range []evidence.Object{{"kinds": []any{"runtime"}}, {"name_pattern": "("}} {
		if _, err := projectiontest.Start(Launches, args); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func FuzzLaunchRows(f *testing.F) {
	projectiontest.FuzzRows(f, Launches, decodeNsys(f), nil, evidence.Object{"mode": "launches"})
}

func BenchmarkLaunches(b *testing.B) {
	in := decodeNsys(b)
	projectiontest.Bench(b, Launches, nil, in)
}
