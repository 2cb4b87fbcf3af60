package preview

import (
	"fmt"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// Region says how much of a streamed artifact a decoder observed. A nil
// *Region (Parquet) means the decoder is not byte-bounded.
type Region struct {
	Read       int64  // bytes observed, to the end of the last record read whole
	Total      int64  // the artifact's size
	EndReached bool   // the decoder read to the end of the artifact
	Bound      int64  // the max_bytes bound in force
	Stop       string // why reading ended early, when it did
}

// Coverage renders the region for a summary.
func (r *Region) Coverage() evidence.Object {
	if r == nil {
		return evidence.Object{}
	}
	return evidence.Object{"bytes_read": r.Read, "bytes_total": r.Total, "end_reached": r.EndReached}
}

func (r *Region) ended() bool { return r == nil || r.EndReached }

// limitation states what an early stop leaves unobserved.
func (r *Region) limitation() string {
	if r.ended() {
		return ""
	}
	why := r.Stop
	if why == "" {
		why = fmt.Sprintf("max_bytes=%d", r.Bound)
	}
	return fmt.Sprintf("reading stopped at byte %d of %d (%s); content after that byte was not observed, so counts describe the first %d bytes only", r.Read, r.Total, why, r.Read)
}

// Result is what a record-shaped preview decoder found in its region. Write
// emits it as preview.fields then preview.records.
type Result struct {
	Region *Region
	// Fields of the records. FieldsDeclared marks a schema the artifact
	// declares (a CSV header, a Parquet footer) rather than one derived from
	// the records read. Nulls is null where the format has no null (CSV).
	Fields         []*table.Field
	FieldsDeclared bool
	// WantFields is false when the sink declines preview.fields: a decoder
	// then need not derive them.
	WantFields bool
	// FieldsOmitted counts key occurrences of fields beyond the max_fields
	// bound, which were not tracked.
	FieldsOmitted int64
	MaxFields     int64

	Records  []table.Record // the emitted records, in order
	Observed int64          // records counted in the region, emitted or not
	MaxRows  int64
	ByStatus map[string]int64
	// noRecords: the sink declines preview.records, so no record is kept
	// (they are still counted, and Fields still describe them).
	noRecords bool
	// Truncation overrides the computed one (Parquet knows the omitted count
	// from its footer rather than from counting).
	Truncation  *evidence.Truncation
	Incomplete  []string // reasons the records table is incomplete besides bounds
	Limitations []string // stated on both tables
	Coverage    evidence.Object
	Metrics     map[string]evidence.Metric
}

// NewResult starts a result that keeps at most max_rows records, none when
// the sink declines preview.records (Keep is then always false, so no
// record value is built for nobody).
func NewResult(in *formats.Input, out formats.Sink) *Result {
	return &Result{MaxRows: in.Int(MaxRows), noRecords: !out.Wants(table.PreviewRecords.Schema),
		WantFields: out.Wants(table.PreviewFields.Schema)}
}

// Count records one observed record of the given status.
func (r *Result) Count(status string) {
	if r.ByStatus == nil {
		r.ByStatus = map[string]int64{}
	}
	r.ByStatus[status]++
	r.Observed++
}

// Keep reports whether the next observed record is to be kept: it is
// within max_rows and the sink wants the records.
func (r *Result) Keep() bool { return !r.noRecords && int64(len(r.Records)) < r.MaxRows }

func (r *Result) coverage() evidence.Object {
	c := r.Region.Coverage()
	for k, v := range r.Coverage {
		c[k] = v
	}
	return c
}

// Write emits the fields and records tables with honest summaries.
func (r *Result) Write(out formats.Sink, fieldsEvidence string) error {
	if err := r.writeFields(out, fieldsEvidence); err != nil {
		return err
	}
	return r.writeRecords(out)
}

func (r *Result) writeFields(out formats.Sink, ev string) error {
	tw, err := out.Begin(&evidence.Table{Name: table.PreviewFields.Name, Columns: table.PreviewFields.EvidenceColumns(""), Evidence: ev})
	if err != nil {
		return err
	}
	for _, f := range r.Fields {
		if f.Path == nil {
			f.Path = []string{} // a path is a list, empty for CSV without header
		}
		if err := tw.Row(f); err != nil {
			return err
		}
	}
	s := &evidence.Summary{RowsObserved: int64(len(r.Fields)), Coverage: r.coverage(), Complete: true}
	if r.FieldsDeclared {
		s.Limit("observed and nulls count the records read, not the whole artifact")
	} else {
		s.Limit("fields are derived from the records read; a field that first appears later is not listed")
		if l := r.Region.limitation(); l != "" {
			s.Complete = false
			s.Limit(l)
		}
	}
	if r.FieldsOmitted > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("more than max_fields=%d distinct fields; %d key occurrences belong to fields that were not tracked", r.MaxFields, r.FieldsOmitted))
		s.Metrics = map[string]evidence.Metric{"untracked_key_occurrences": {Value: r.FieldsOmitted, Unit: "count"}}
	}
	for _, l := range r.Limitations {
		s.Limit(l)
	}
	return tw.End(s)
}

func (r *Result) writeRecords(out formats.Sink) error {
	tw, err := out.Begin(table.PreviewRecords.Header(""))
	if err != nil {
		return err
	}
	for i := range r.Records {
		if err := tw.Row(&r.Records[i]); err != nil {
			return err
		}
	}
	emitted := int64(len(r.Records))
	s := &evidence.Summary{RowsObserved: r.Observed, Coverage: r.coverage(), Complete: true,
		Metrics: map[string]evidence.Metric{}}
	for _, st := range []string{table.StatusOK, table.StatusInvalid, table.StatusOversized, table.StatusRagged} {
		s.Metrics["records_"+st] = evidence.Metric{Value: r.ByStatus[st], Unit: "count"}
	}
	for k, m := range r.Metrics {
		s.Metrics[k] = m
	}
	switch {
	case r.Truncation != nil:
		s.Truncation = r.Truncation
	case r.Observed > emitted:
		s.Truncation = &evidence.Truncation{Reason: "row_limit", Limit: r.MaxRows, Omitted: r.Observed - emitted}
	case !r.Region.ended():
		s.Truncation = &evidence.Truncation{Reason: "byte_limit", Limit: r.Region.Bound, Omitted: r.Region.Total - r.Region.Read}
	}
	if s.Truncation != nil {
		s.Complete = false
	}
	if l := r.Region.limitation(); l != "" {
		s.Complete = false
		s.Limit(l)
	}
	if n := r.ByStatus[table.StatusOversized]; n > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d records are larger than max_record_bytes; their values are not shown", n))
	}
	for _, l := range r.Incomplete {
		s.Complete = false
		s.Limit(l)
	}
	for _, l := range r.Limitations {
		s.Limit(l)
	}
	return tw.End(s)
}
