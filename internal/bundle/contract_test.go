package bundle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// The table contract (docs/tables.md, generated from package table and
// ParquetType) is what bundles write: for every declared table, the
// Parquet file a bundle holds has exactly its columns, each an OPTIONAL
// leaf of the stated physical and logical type, in name order, with the
// header and units in the key-value metadata.
func TestContractMatchesParquet(t *testing.T) {
	store := t.TempDir()
	b, err := NewBuilder(store)
	must(t, err)
	defer b.Abort()
	schemas := table.All()
	for i, s := range schemas {
		h := s.Header("s")
		h.ID = s.Name
		w, err := b.BeginTable(h)
		must(t, err)
		row := evidence.Object{}
		for _, c := range s.Columns {
			row[c.Name] = nil
		}
		must(t, w.Row(row))
		must(t, w.End(&evidence.Summary{RowsObserved: 1, Complete: true}))
		if got, want := w.rel, "tables/"+s.Name+"/"+itoa(i)+".parquet"; got != want {
			t.Fatalf("table %s at %s, want %s", s.Name, got, want)
		}
	}
	bl, err := b.Publish(context.Background())
	must(t, err)
	for i, s := range schemas {
		p := filepath.Join(bl.Path, "tables", s.Name, itoa(i)+".parquet")
		f, err := os.Open(p)
		must(t, err)
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		must(t, err)
		fields := pf.Schema().Fields()
		if len(fields) != len(s.Columns) {
			t.Fatalf("%s: %d leaves, %d columns", s.Name, len(fields), len(s.Columns))
		}
		for j, fl := range fields {
			if j > 0 && fields[j-1].Name() >= fl.Name() {
				t.Errorf("%s: leaves not in name order at %s", s.Name, fl.Name())
			}
			c, ok := s.Column(fl.Name())
			if !ok {
				t.Fatalf("%s: leaf %s is no column", s.Name, fl.Name())
			}
			phys, logical, err := ParquetType(c.Type)
			must(t, err)
			got := ""
			if lt := fl.Type().LogicalType(); lt != nil {
				got = lt.String()
			}
			if !fl.Optional() || !fl.Leaf() || fl.Type().Kind().String() != phys || got != logical {
				t.Errorf("%s.%s: leaf %s %s optional=%v, contract %s %s OPTIONAL", s.Name, c.Name, fl.Type().Kind(), got, fl.Optional(), phys, logical)
			}
		}
		kv := map[string]bool{}
		for _, m := range pf.Metadata().KeyValueMetadata {
			kv[m.Key] = true
		}
		if !kv[MetaTable] || !kv[MetaUnits] {
			t.Errorf("%s: key-value metadata %v", s.Name, kv)
		}
		f.Close()
	}
}

func itoa(i int) string {
	b, _ := evidence.Canonical(i)
	return string(b)
}
