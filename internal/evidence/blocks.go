package evidence

import (
	"fmt"
	"strings"
)

// Schema names the version of the block contract. Readers refuse blocks of
// another schema rather than guess at them.
const Schema = "flameox/1"

// Block kinds.
const (
	KindCapture  = "capture"
	KindArtifact = "artifact"
	KindTable    = "table"
	KindRow      = "row"
	KindSummary  = "summary"
	KindFailure  = "failure"
	KindBundle   = "bundle"
)

// Block is one line of a flameox stream.
type Block interface {
	Kind() string
	Marshaler
}

// Producer names a tool and its version.
type Producer struct {
	Name    string
	Version string
}

func (p Producer) value() Object {
	return Object{"name": p.Name, "version": nullable(p.Version)}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Artifact is a native file: staged by a capture or named explicitly.
// Its ID is the SHA-256 of its bytes, so the same bytes have one identity
// wherever they are.
type Artifact struct {
	ID        string // "sha256:" + 64 hex digits
	Path      string // absolute
	Size      int64
	Name      string // the producer's file name
	Role      string // e.g. "cpu-profile", "console-stdout", "explicit"
	Format    string // registry format name; "" when unknown
	Producer  Producer
	CaptureID string
}

func (a *Artifact) Kind() string { return KindArtifact }

func (a *Artifact) CanonicalValue() any {
	return Object{
		"schema":      Schema,
		"kind":        KindArtifact,
		"artifact_id": a.ID,
		"path":        a.Path,
		"size":        a.Size,
		"name":        a.Name,
		"role":        a.Role,
		"format":      nullable(a.Format),
		"producer":    a.Producer.value(),
		"capture_id":  nullable(a.CaptureID),
	}
}

// Digest returns the hex SHA-256 part of the artifact id.
func (a *Artifact) Digest() string { return strings.TrimPrefix(a.ID, "sha256:") }

// Column types.
const (
	TypeString = "string"
	TypeInt    = "int"
	TypeDouble = "double"
	TypeBool   = "bool"
	TypeJSON   = "json" // any canonical JSON value
)

// Column describes one field of a table's rows.
type Column struct {
	Name        string
	Type        string
	Unit        string // normalized unit; "" when the column has none
	Description string
}

func (c Column) value() Object {
	return Object{"name": c.Name, "type": c.Type, "unit": nullable(c.Unit), "description": c.Description}
}

// Evidence levels.
const (
	Observed = "observed" // read from the native artifact
	Derived  = "derived"  // computed from observed evidence
)

// Table is the header that opens a table: what the rows are, where they
// came from, and in which units.
type Table struct {
	ID          string
	Name        string // row schema, e.g. "cpu.frames"
	Operation   string // registry operation, or "decode"
	Projection  string // projection name; "" for a decoder's native table
	Format      string
	Columns     []Column
	Evidence    string
	ArtifactIDs []string
	Decoder     Producer
	Arguments   Object // effective arguments, limits included
}

func (t *Table) Kind() string { return KindTable }

func (t *Table) CanonicalValue() any {
	cols := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = c.value()
	}
	args := t.Arguments
	if args == nil {
		args = Object{}
	}
	ids := t.ArtifactIDs
	if ids == nil {
		ids = []string{}
	}
	return Object{
		"schema":       Schema,
		"kind":         KindTable,
		"table_id":     t.ID,
		"name":         t.Name,
		"operation":    t.Operation,
		"projection":   nullable(t.Projection),
		"format":       nullable(t.Format),
		"columns":      cols,
		"evidence":     t.Evidence,
		"artifact_ids": ids,
		"decoder":      t.Decoder.value(),
		"arguments":    args,
	}
}

// Column returns the named column.
func (t *Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Row is one row of a table: its values as an object, or already encoded
// (Encoded, the canonical JSON object a typed row encodes itself to).
type Row struct {
	TableID string
	Values  Object
	Encoded []byte
}

func (r *Row) Kind() string { return KindRow }

func (r *Row) CanonicalValue() any {
	if r.Encoded != nil {
		v, err := ParseValue(r.Encoded, 0)
		if err != nil {
			return nil
		}
		return Object{"schema": Schema, "kind": KindRow, "table_id": r.TableID, "values": v}
	}
	return Object{"schema": Schema, "kind": KindRow, "table_id": r.TableID, "values": r.Values}
}

// AppendBlock appends the row's canonical line without building its
// object: the keys of a row block are fixed and already in canonical order.
func (r *Row) AppendBlock(dst []byte) ([]byte, error) {
	if r.Encoded == nil {
		return AppendCanonical(dst, r.CanonicalValue())
	}
	dst = append(dst, `{"kind":"row","schema":"`+Schema+`","table_id":`...)
	dst, err := appendString(dst, r.TableID)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"values":`...)
	dst = append(dst, r.Encoded...)
	return append(dst, '}'), nil
}

// Truncation says that a bound cut rows from a table.
type Truncation struct {
	Reason  string // e.g. "row_limit"
	Limit   int64
	Omitted int64
}

// Metric is a scalar with its unit.
type Metric struct {
	Value any
	Unit  string
}

// Summary closes a table and states how complete it is.
type Summary struct {
	TableID      string
	RowsObserved int64 // rows in the selected population, before bounding
	RowsEmitted  int64
	Complete     bool
	Truncation   *Truncation
	Coverage     Object
	Limitations  []string
	Metrics      map[string]Metric
}

func (s *Summary) Kind() string { return KindSummary }

func (s *Summary) CanonicalValue() any {
	var trunc any
	if s.Truncation != nil {
		trunc = Object{"reason": s.Truncation.Reason, "limit": s.Truncation.Limit, "omitted": s.Truncation.Omitted}
	}
	metrics := Object{}
	for k, m := range s.Metrics {
		metrics[k] = Object{"value": m.Value, "unit": nullable(m.Unit)}
	}
	lim := s.Limitations
	if lim == nil {
		lim = []string{}
	}
	cov := s.Coverage
	if cov == nil {
		cov = Object{}
	}
	return Object{
		"schema":        Schema,
		"kind":          KindSummary,
		"table_id":      s.TableID,
		"rows_observed": s.RowsObserved,
		"rows_emitted":  s.RowsEmitted,
		"complete":      s.Complete,
		"truncation":    trunc,
		"coverage":      cov,
		"limitations":   lim,
		"metrics":       metrics,
	}
}

// Limit adds a limitation, once.
func (s *Summary) Limit(text string) {
	for _, l := range s.Limitations {
		if l == text {
			return
		}
	}
	s.Limitations = append(s.Limitations, text)
}

// Member is one file of an evidence bundle.
type Member struct {
	Path   string // relative to the bundle directory
	SHA256 string
	Size   int64
	Role   string // "native", "table", "manifest", "failure"
}

// Bundle announces a published evidence bundle.
type Bundle struct {
	ID      string
	Path    string
	Members []Member
}

func (b *Bundle) Kind() string { return KindBundle }

func (b *Bundle) CanonicalValue() any {
	ms := make([]any, len(b.Members))
	for i, m := range b.Members {
		ms[i] = Object{"path": m.Path, "sha256": m.SHA256, "size": m.Size, "role": m.Role}
	}
	return Object{"schema": Schema, "kind": KindBundle, "bundle_id": b.ID, "path": b.Path, "members": ms}
}

// Raw is a parsed block of any kind, kept as its canonical object so that
// commands can pass blocks they do not consume through unchanged.
type Raw struct {
	Line int
	Obj  Object
}

func (r *Raw) Kind() string {
	k, _ := r.Obj["kind"].(string)
	return k
}

func (r *Raw) CanonicalValue() any { return r.Obj }

// fieldError reports a missing or mistyped block field.
func fieldError(kind, field, want string) error {
	return Failf(CodeInvalidArgument, "%s block: field %q must be %s", kind, field, want)
}

func str(o Object, kind, field string, required bool) (string, error) {
	v, ok := o[field]
	if !ok || v == nil {
		if required {
			return "", fieldError(kind, field, "a string")
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldError(kind, field, "a string")
	}
	return s, nil
}

func integer(o Object, kind, field string) (int64, error) {
	n, ok := AsInt(o[field])
	if !ok {
		return 0, fieldError(kind, field, "an integer")
	}
	return n, nil
}

func producerOf(o Object, kind, field string) (Producer, error) {
	p, ok := o[field].(Object)
	if !ok {
		return Producer{}, fieldError(kind, field, "an object")
	}
	n, _ := p["name"].(string)
	v, _ := p["version"].(string)
	return Producer{Name: n, Version: v}, nil
}

// ArtifactFrom reads an artifact block.
func ArtifactFrom(o Object) (*Artifact, error) {
	var a Artifact
	var err error
	if a.ID, err = str(o, KindArtifact, "artifact_id", true); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(a.ID, "sha256:") || len(a.ID) != 71 {
		return nil, fieldError(KindArtifact, "artifact_id", "sha256:<64 hex digits>")
	}
	if a.Path, err = str(o, KindArtifact, "path", true); err != nil {
		return nil, err
	}
	if a.Size, err = integer(o, KindArtifact, "size"); err != nil {
		return nil, err
	}
	if a.Name, err = str(o, KindArtifact, "name", false); err != nil {
		return nil, err
	}
	if a.Role, err = str(o, KindArtifact, "role", false); err != nil {
		return nil, err
	}
	if a.Format, err = str(o, KindArtifact, "format", false); err != nil {
		return nil, err
	}
	if a.CaptureID, err = str(o, KindArtifact, "capture_id", false); err != nil {
		return nil, err
	}
	if _, ok := o["producer"]; ok {
		if a.Producer, err = producerOf(o, KindArtifact, "producer"); err != nil {
			return nil, err
		}
	}
	return &a, nil
}

// TableFrom reads a table header block.
func TableFrom(o Object) (*Table, error) {
	var t Table
	var err error
	if t.ID, err = str(o, KindTable, "table_id", true); err != nil {
		return nil, err
	}
	if t.Name, err = str(o, KindTable, "name", true); err != nil {
		return nil, err
	}
	if t.Operation, err = str(o, KindTable, "operation", false); err != nil {
		return nil, err
	}
	if t.Projection, err = str(o, KindTable, "projection", false); err != nil {
		return nil, err
	}
	if t.Format, err = str(o, KindTable, "format", false); err != nil {
		return nil, err
	}
	if t.Evidence, err = str(o, KindTable, "evidence", false); err != nil {
		return nil, err
	}
	cols, ok := o["columns"].([]any)
	if !ok {
		return nil, fieldError(KindTable, "columns", "an array")
	}
	for i, c := range cols {
		co, ok := c.(Object)
		if !ok {
			return nil, fieldError(KindTable, fmt.Sprintf("columns[%d]", i), "an object")
		}
		var col Column
		if col.Name, err = str(co, KindTable, "name", true); err != nil {
			return nil, err
		}
		if col.Type, err = str(co, KindTable, "type", true); err != nil {
			return nil, err
		}
		col.Unit, _ = co["unit"].(string)
		col.Description, _ = co["description"].(string)
		t.Columns = append(t.Columns, col)
	}
	if ids, ok := o["artifact_ids"].([]any); ok {
		for _, id := range ids {
			s, ok := id.(string)
			if !ok {
				return nil, fieldError(KindTable, "artifact_ids", "an array of strings")
			}
			t.ArtifactIDs = append(t.ArtifactIDs, s)
		}
	}
	if _, ok := o["decoder"]; ok {
		if t.Decoder, err = producerOf(o, KindTable, "decoder"); err != nil {
			return nil, err
		}
	}
	t.Arguments, _ = o["arguments"].(Object)
	return &t, nil
}

// RowFrom reads a row block.
func RowFrom(o Object) (*Row, error) {
	id, err := str(o, KindRow, "table_id", true)
	if err != nil {
		return nil, err
	}
	vals, ok := o["values"].(Object)
	if !ok {
		return nil, fieldError(KindRow, "values", "an object")
	}
	return &Row{TableID: id, Values: vals}, nil
}

// SummaryFrom reads a summary block.
func SummaryFrom(o Object) (*Summary, error) {
	var s Summary
	var err error
	if s.TableID, err = str(o, KindSummary, "table_id", true); err != nil {
		return nil, err
	}
	if s.RowsObserved, err = integer(o, KindSummary, "rows_observed"); err != nil {
		return nil, err
	}
	if s.RowsEmitted, err = integer(o, KindSummary, "rows_emitted"); err != nil {
		return nil, err
	}
	c, ok := o["complete"].(bool)
	if !ok {
		return nil, fieldError(KindSummary, "complete", "a boolean")
	}
	s.Complete = c
	if t, ok := o["truncation"].(Object); ok {
		s.Truncation = &Truncation{}
		s.Truncation.Reason, _ = t["reason"].(string)
		s.Truncation.Limit, _ = AsInt(t["limit"])
		s.Truncation.Omitted, _ = AsInt(t["omitted"])
	}
	s.Coverage, _ = o["coverage"].(Object)
	if ls, ok := o["limitations"].([]any); ok {
		for _, l := range ls {
			if t, ok := l.(string); ok {
				s.Limitations = append(s.Limitations, t)
			}
		}
	}
	if ms, ok := o["metrics"].(Object); ok {
		s.Metrics = map[string]Metric{}
		for k, m := range ms {
			mo, ok := m.(Object)
			if !ok {
				return nil, fieldError(KindSummary, "metrics."+k, "an object")
			}
			u, _ := mo["unit"].(string)
			s.Metrics[k] = Metric{Value: mo["value"], Unit: u}
		}
	}
	return &s, nil
}

// FailureFrom reads a failure block.
func FailureFrom(o Object) (*Failure, error) {
	code, err := str(o, KindFailure, "code", true)
	if err != nil {
		return nil, err
	}
	msg, err := str(o, KindFailure, "message", true)
	if err != nil {
		return nil, err
	}
	f := &Failure{Code: Code(code), Message: msg}
	if l, ok := o["location"].(Object); ok {
		f.Location.Path, _ = l["path"].(string)
		f.Location.ArtifactID, _ = l["artifact_id"].(string)
		f.Location.Field, _ = l["field"].(string)
		n, _ := AsInt(l["line"])
		f.Location.Line = int(n)
		n, _ = AsInt(l["column"])
		f.Location.Column = int(n)
		f.Location.Offset, _ = AsInt(l["offset"])
	}
	f.Details, _ = o["details"].(Object)
	if r, ok := o["retry"].(Object); ok {
		f.Retry = &Retry{}
		f.Retry.Action, _ = r["action"].(string)
		if argv, ok := r["argv"].([]any); ok {
			for _, a := range argv {
				s, _ := a.(string)
				f.Retry.Argv = append(f.Retry.Argv, s)
			}
		}
	}
	return f, nil
}
