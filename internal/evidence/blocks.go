package evidence

import (
	"fmt"
	"path/filepath"
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

// KnownKind reports whether kind is one of the block kinds of Schema.
func KnownKind(kind string) bool {
	switch kind {
	case KindCapture, KindArtifact, KindTable, KindRow, KindSummary, KindFailure, KindBundle:
		return true
	}
	return false
}

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

// emptyList and emptyObject give a nil list or object its empty form: the
// block contract has [] and {} there, never null.
func emptyList[E any](s []E) []E {
	if s == nil {
		return []E{}
	}
	return s
}

func emptyObject(o Object) Object {
	if o == nil {
		return Object{}
	}
	return o
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

// Check is the one validator of an artifact, whether it came as a block or
// was built in process: an id of the form sha256:<64 lower-case hex>, an
// absolute path (a relative one would name different bytes from another
// directory) and a size that is not negative. Every reader of artifact
// blocks (decode, rank, preserve) refuses what it refuses.
func (a *Artifact) Check() error { return a.check(true) }

func (a *Artifact) check(absolute bool) error {
	h, ok := strings.CutPrefix(a.ID, "sha256:")
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return (&Failure{Code: CodeInvalidArgument, Message: fmt.Sprintf("artifact id %q: want sha256:<64 lower-case hex digits>", a.ID),
			Location: Location{Field: "artifact_id"}})
	}
	if absolute && !filepath.IsAbs(a.Path) {
		return (&Failure{Code: CodeInvalidArgument, Message: fmt.Sprintf("artifact %s: path %q is not absolute", a.ID, a.Path),
			Location: Location{Field: "path"}}).At(a.Path, a.ID)
	}
	if a.Size < 0 {
		return (&Failure{Code: CodeInvalidArgument, Message: fmt.Sprintf("artifact %s: negative size %d", a.ID, a.Size),
			Location: Location{Field: "size"}}).At(a.Path, a.ID)
	}
	return nil
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
		"artifact_ids": emptyList(t.ArtifactIDs),
		"decoder":      t.Decoder.value(),
		"arguments":    emptyObject(t.Arguments),
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
	dst, err := AppendRowPrefix(dst, r.TableID)
	if err != nil {
		return dst, err
	}
	dst = append(dst, r.Encoded...)
	return append(dst, '}'), nil
}

// AppendRowPrefix appends what precedes the values in the line of a row
// of table tableID; the values and a closing '}' complete it. A writer of
// many rows of one table encodes it once.
func AppendRowPrefix(dst []byte, tableID string) ([]byte, error) {
	dst = append(dst, `{"kind":"row","schema":"`+Schema+`","table_id":`...)
	dst, err := appendString(dst, tableID)
	if err != nil {
		return dst, err
	}
	return append(dst, `,"values":`...), nil
}

// Truncation says that a bound cut rows from a table.
type Truncation struct {
	Reason  string // one of the Reason constants
	Limit   int64
	Omitted int64
}

// Truncation reasons: one vocabulary for every table, so a consumer tests
// one name whichever projection or decoder cut the rows.
const (
	ReasonRowLimit  = "row_limit"  // a bound on rows (--top, max rows)
	ReasonByteLimit = "byte_limit" // a bound on bytes
	// ReasonDecoderLimit: the input table was cut by its decoder's bound.
	ReasonDecoderLimit = "decoder_limit"
)

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
	return Object{
		"schema":        Schema,
		"kind":          KindSummary,
		"table_id":      s.TableID,
		"rows_observed": s.RowsObserved,
		"rows_emitted":  s.RowsEmitted,
		"complete":      s.Complete,
		"truncation":    trunc,
		"coverage":      emptyObject(s.Coverage),
		"limitations":   emptyList(s.Limitations),
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

// fields reads one block's fields and keeps the first failure, so that a
// reader names each field once and reports the first bad one.
type fields struct {
	o    Object
	kind string
	err  error
}

// fail records that field is not what it must be, unless an earlier field
// failed.
func (f *fields) fail(field, want string) {
	if f.err == nil {
		f.err = fieldError(f.kind, field, want)
	}
}

// str reads a string field; an optional one may be absent or null.
func (f *fields) str(field string, required bool) string {
	v, ok := f.o[field]
	if !ok || v == nil {
		if required {
			f.fail(field, "a string")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.fail(field, "a string")
	}
	return s
}

func (f *fields) integer(field string) int64 {
	n, ok := AsInt(f.o[field])
	if !ok {
		f.fail(field, "an integer")
	}
	return n
}

// producer reads an optional producer object; absent, it is the zero
// Producer.
func (f *fields) producer(field string) Producer {
	v, ok := f.o[field]
	if !ok {
		return Producer{}
	}
	p, ok := v.(Object)
	if !ok {
		f.fail(field, "an object")
		return Producer{}
	}
	n, _ := p["name"].(string)
	ver, _ := p["version"].(string)
	return Producer{Name: n, Version: ver}
}

// done returns what a reader read, or only its failure.
func done[T any](v *T, f *fields) (*T, error) {
	if f.err != nil {
		return nil, f.err
	}
	return v, nil
}

// ArtifactFrom reads an artifact block of a stream and validates it
// (Check).
func ArtifactFrom(o Object) (*Artifact, error) { return artifactFrom(o, true) }

// BundledArtifactFrom reads an artifact record of a bundle manifest, whose
// path is relative to the bundle (the bundle reader checks it); the rest
// is validated as in a stream.
func BundledArtifactFrom(o Object) (*Artifact, error) { return artifactFrom(o, false) }

func artifactFrom(o Object, absolute bool) (*Artifact, error) {
	f := fields{o: o, kind: KindArtifact}
	a := Artifact{ID: f.str("artifact_id", true)}
	a.Path = f.str("path", true)
	a.Size = f.integer("size")
	a.Name = f.str("name", false)
	a.Role = f.str("role", false)
	a.Format = f.str("format", false)
	a.CaptureID = f.str("capture_id", false)
	a.Producer = f.producer("producer")
	if f.err == nil {
		f.err = a.check(absolute)
	}
	return done(&a, &f)
}

// TableFrom reads a table header block.
func TableFrom(o Object) (*Table, error) {
	f := fields{o: o, kind: KindTable}
	t := Table{
		ID:         f.str("table_id", true),
		Name:       f.str("name", true),
		Operation:  f.str("operation", false),
		Projection: f.str("projection", false),
		Format:     f.str("format", false),
		Evidence:   f.str("evidence", false),
	}
	cols, ok := o["columns"].([]any)
	if !ok {
		f.fail("columns", "an array")
	}
	for i, c := range cols {
		co, ok := c.(Object)
		if !ok {
			f.fail(fmt.Sprintf("columns[%d]", i), "an object")
			continue
		}
		cf := fields{o: co, kind: KindTable, err: f.err}
		col := Column{Name: cf.str("name", true), Type: cf.str("type", true)}
		f.err = cf.err
		col.Unit, _ = co["unit"].(string)
		col.Description, _ = co["description"].(string)
		t.Columns = append(t.Columns, col)
	}
	if ids, ok := o["artifact_ids"].([]any); ok {
		for _, id := range ids {
			s, ok := id.(string)
			if !ok {
				f.fail("artifact_ids", "an array of strings")
			}
			t.ArtifactIDs = append(t.ArtifactIDs, s)
		}
	}
	t.Decoder = f.producer("decoder")
	t.Arguments, _ = o["arguments"].(Object)
	return done(&t, &f)
}

// RowFrom reads a row block.
func RowFrom(o Object) (*Row, error) {
	f := fields{o: o, kind: KindRow}
	r := Row{TableID: f.str("table_id", true)}
	var ok bool
	if r.Values, ok = o["values"].(Object); !ok {
		f.fail("values", "an object")
	}
	return done(&r, &f)
}

// SummaryFrom reads a summary block.
func SummaryFrom(o Object) (*Summary, error) {
	f := fields{o: o, kind: KindSummary}
	s := Summary{
		TableID:      f.str("table_id", true),
		RowsObserved: f.integer("rows_observed"),
		RowsEmitted:  f.integer("rows_emitted"),
	}
	var ok bool
	if s.Complete, ok = o["complete"].(bool); !ok {
		f.fail("complete", "a boolean")
	}
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
				f.fail("metrics."+k, "an object")
				continue
			}
			u, _ := mo["unit"].(string)
			s.Metrics[k] = Metric{Value: mo["value"], Unit: u}
		}
	}
	return done(&s, &f)
}

// FailureFrom reads a failure block.
func FailureFrom(o Object) (*Failure, error) {
	f := fields{o: o, kind: KindFailure}
	fl := Failure{Code: Code(f.str("code", true)), Message: f.str("message", true)}
	if l, ok := o["location"].(Object); ok {
		fl.Location.Path, _ = l["path"].(string)
		fl.Location.ArtifactID, _ = l["artifact_id"].(string)
		fl.Location.Field, _ = l["field"].(string)
		n, _ := AsInt(l["line"])
		fl.Location.Line = int(n)
		n, _ = AsInt(l["column"])
		fl.Location.Column = int(n)
		fl.Location.Offset, _ = AsInt(l["offset"])
	}
	fl.Details, _ = o["details"].(Object)
	if r, ok := o["retry"].(Object); ok {
		fl.Retry = &Retry{}
		fl.Retry.Action, _ = r["action"].(string)
		if argv, ok := r["argv"].([]any); ok {
			for _, a := range argv {
				s, _ := a.(string)
				fl.Retry.Argv = append(fl.Retry.Argv, s)
			}
		}
	}
	return done(&fl, &f)
}
