package formats

import (
	"fmt"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
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

// StreamSink writes a decoder's tables to a block stream as they come.
type StreamSink struct {
	Stamper
	W *evidence.Writer
}

// Begin implements Sink.
func (s *StreamSink) Begin(t *evidence.Table) (TableWriter, error) {
	s.Stamp(t)
	if err := s.W.Write(t); err != nil {
		return nil, err
	}
	return &streamTable{w: s.W, t: t}, nil
}

type streamTable struct {
	w    *evidence.Writer
	t    *evidence.Table
	rows int64
	row  evidence.Row
}

func (st *streamTable) Row(values evidence.Object) error {
	if err := CheckRow(st.t, values); err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "table %s", st.t.Name)
	}
	st.rows++
	st.row = evidence.Row{TableID: st.t.ID, Values: values}
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
