package parquetpreview

import (
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/parquet-go/parquet-go"
)

// Limits are the ceilings of reading Parquet with the checks below. A
// format whose native files are Parquet (an Nsight Systems export)
// declares them on its spec, so Input.Limit finds them.
var Limits = []formats.Limit{limitFooter, limitChunk, limitSchema}

// OpenFile opens a Parquet file of size bytes read through ra with the
// preview's checks: magic, footer length and schema size bounded before
// parquet-go allocates anything, malformed input a typed failure, and a
// read error of the disk IO_FAILURE.
func OpenFile(in *formats.Input, ra io.ReaderAt, size int64) (*parquet.File, error) {
	rc := &recorder{r: ra}
	if err := checkFooter(in, rc, size); err != nil {
		return nil, err
	}
	var f *parquet.File
	err := guarded("open", func() (err error) {
		f, err = parquet.OpenFile(rc, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	})
	if err == nil {
		err = checkSchemaElements(in, int64(len(f.Metadata().Schema)))
	}
	if err != nil {
		if rc.err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, rc.err, "read parquet")
		}
		return nil, err
	}
	return f, nil
}

// CheckRowGroup refuses row group gi of f when its column chunks declare
// more uncompressed bytes than max_column_chunk_bytes or pages outside
// the file; call it before reading the group's rows.
func CheckRowGroup(in *formats.Input, ra io.ReaderAt, f *parquet.File, gi int, size int64) error {
	return checkChunks(in, ra, f.Metadata().RowGroups[gi], gi, size)
}

// Guarded runs a parquet-go call, turning its errors and panics on
// malformed input into typed failures.
func Guarded(what string, fn func() error) error { return guarded(what, fn) }
