package formats

import (
	"fmt"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Stamper fills in the parts of a decoder's table headers that the runtime
// owns: a table id unique per artifact, the format, the artifact id, the
// operation and the decoder identity.
type Stamper struct {
	Spec      *Spec
	Artifact  *evidence.Artifact
	Arguments evidence.Object // effective limits and options
	names     map[string]int
}

// Stamp completes t.
func (s *Stamper) Stamp(t *evidence.Table) {
	if s.names == nil {
		s.names = map[string]int{}
	}
	s.names[t.Name]++
	t.ID = s.Artifact.Digest()[:12] + "." + t.Name
	if n := s.names[t.Name]; n > 1 {
		t.ID += "#" + strconv.Itoa(n)
	}
	t.Format = s.Spec.Name
	t.ArtifactIDs = []string{s.Artifact.ID}
	if t.Operation == "" {
		t.Operation = "decode"
	}
	t.Decoder = evidence.Producer{Name: s.Spec.Name, Version: s.Spec.Version}
	if t.Evidence == "" {
		t.Evidence = evidence.Observed
	}
	if t.Arguments == nil {
		t.Arguments = s.Arguments
	}
}

// Schema returns the declared schema of a stamped table.
func (s *Stamper) Schema(t *evidence.Table) (*table.Schema, error) {
	ts := table.Lookup(t.Name)
	if ts == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "decoder %s begins table %s, which package table does not declare", s.Spec.Name, t.Name)
	}
	return ts, nil
}

// StreamSink writes a decoder's tables to a block stream as they come.
type StreamSink struct {
	Stamper
	W *evidence.Writer
}

// Wants implements Sink: a stream keeps every table.
func (s *StreamSink) Wants(*table.Schema) bool { return true }

// Begin implements Sink.
func (s *StreamSink) Begin(t *evidence.Table) (TableWriter, error) {
	s.Stamp(t)
	ts, err := s.Schema(t)
	if err != nil {
		return nil, err
	}
	if err := s.W.Write(t); err != nil {
		return nil, err
	}
	return &streamTable{w: s.W, t: t, s: ts, artifact: s.Artifact.ID}, nil
}

type streamTable struct {
	w        *evidence.Writer
	t        *evidence.Table
	s        *table.Schema
	artifact string
	rows     int64
	row      evidence.Row
	buf      []byte
}

// Row encodes the row once, straight from its typed form.
func (st *streamTable) Row(row any) error {
	var err error
	st.buf, err = st.s.AppendValues(st.buf[:0], row, st.artifact)
	if err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "table %s", st.t.Name)
	}
	st.rows++
	st.row = evidence.Row{TableID: st.t.ID, Encoded: st.buf}
	return st.w.Write(&st.row)
}

func (st *streamTable) End(s *evidence.Summary) error {
	s.TableID = st.t.ID
	s.RowsEmitted = st.rows
	return st.w.Write(s)
}

// CheckRow verifies that a row has exactly the table's columns, each of its
// declared type (null is allowed in every column).
func CheckRow(t *evidence.Table, values evidence.Object) error {
	if len(values) != len(t.Columns) {
		return fmt.Errorf("row has %d values for %d columns", len(values), len(t.Columns))
	}
	for _, c := range t.Columns {
		v, ok := values[c.Name]
		if !ok {
			return fmt.Errorf("row lacks column %q", c.Name)
		}
		if v == nil {
			continue
		}
		if !typeOK(c.Type, v) {
			return fmt.Errorf("column %q of type %s holds %T", c.Name, c.Type, v)
		}
	}
	return nil
}

func typeOK(typ string, v any) bool {
	switch typ {
	case evidence.TypeString:
		_, ok := v.(string)
		return ok
	case evidence.TypeInt:
		switch v.(type) {
		case int, int64, uint64, int32, uint32:
			return true
		}
		_, ok := evidence.AsInt(v)
		return ok
	case evidence.TypeDouble:
		switch v.(type) {
		case float64, int, int64:
			return true
		}
		_, ok := evidence.AsFloat(v)
		return ok
	case evidence.TypeBool:
		_, ok := v.(bool)
		return ok
	case evidence.TypeJSON:
		return true
	}
	return false
}
