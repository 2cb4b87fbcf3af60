package projection_test

import (
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

func TestEach(t *testing.T) {
	var e projection.Each[int, any]
	a := records("a", "sha256:a")
	a.Arguments = evidence.Object{"max_rows": int64(5)}
	if err := e.Add(a, 7); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"twice":                 e.Add(records("a", "sha256:a"), 0),
		"row before its header": second(e.Of(records("b"), "row")),
		"summary before header": e.Summary(records("b"), &evidence.Summary{}),
	} {
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	x, err := e.Of(a, "row")
	if err != nil || x.State != 7 || x.Table != a {
		t.Fatalf("%+v %v", x, err)
	}
	x.Kept = append(x.Kept, &table.ObservationRecord{Kind: "observation", Line: 1})
	if err := e.Summary(a, &evidence.Summary{Complete: true}); err != nil || x.Summary == nil {
		t.Fatalf("summary not recorded: %v", err)
	}
	args := evidence.Object{"rows": int64(1)}
	var r projectiontest.Result
	err = e.Finish(&r, args, func(x *projection.One[int, any]) *evidence.Summary {
		return &evidence.Summary{RowsObserved: int64(len(x.Kept)), Complete: x.Summary.Complete}
	})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header
	if h.Name != a.Name || h.Format != a.Format || h.Decoder != a.Decoder || h.ArtifactIDs[0] != "sha256:a" ||
		h.Arguments["rows"] != int64(1) || h.Arguments["decode"].(evidence.Object)["max_rows"] != int64(5) || args["decode"] != nil {
		t.Fatalf("header %+v", h)
	}
	if len(r.Rows) != 1 || r.Rows[0][table.ArtifactColumn] != "sha256:a" || r.Summary.RowsEmitted != 1 {
		t.Fatalf("rows %v summary %+v", r.Rows, r.Summary)
	}
}

func second[A any](_ A, err error) error { return err }
