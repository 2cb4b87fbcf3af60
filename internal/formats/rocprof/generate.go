package rocprof

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Generate writes a rocprofv3 trace CSV of about size bytes for
// benchmarks: seed's header, then its records repeated, each copy's
// Start/End_Timestamp and Correlation_Id rewritten so the trace stays in
// time order and ids stay distinct. seed is a real rocprofv3 trace CSV.
func Generate(w io.Writer, seed []byte, size int64) error {
	recs, err := csv.NewReader(bytes.NewReader(seed)).ReadAll()
	if err != nil || len(recs) < 2 {
		return fmt.Errorf("seed: %d records, %v", len(recs), err)
	}
	head := recs[0]
	start, end, corr := slices.Index(head, "Start_Timestamp"), slices.Index(head, "End_Timestamp"), slices.Index(head, "Correlation_Id")
	if start < 0 || end < 0 {
		return fmt.Errorf("seed has no timestamps")
	}
	cw := &countWriter{w: w}
	out := csv.NewWriter(cw)
	if err := out.Write(head); err != nil {
		return err
	}
	var ts, id int64 = 1_000_000_000, 1
	for cw.n < size {
		for _, r := range recs[1:] {
			r = slices.Clone(r)
			r[start], r[end] = strconv.FormatInt(ts, 10), strconv.FormatInt(ts+12_800, 10)
			if corr >= 0 {
				r[corr] = strconv.FormatInt(id, 10)
			}
			if err := out.Write(r); err != nil {
				return err
			}
			ts += 13_000
			id++
		}
		out.Flush()
		if err := out.Error(); err != nil {
			return err
		}
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
