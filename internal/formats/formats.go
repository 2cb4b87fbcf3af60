// Package formats is the contract between native formats and the rest of
// flameox: a Spec names a format, recognizes it from a bounded prefix and
// decodes it into typed tables through a Sink. The explicit list of specs
// lives in internal/registry; this package only runs them.
//
// It imports evidence, jsonscan, param, table and unit.
package formats

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Verdict is a sniffer's answer about a prefix.
type Verdict int8

const (
	No       Verdict = iota // certainly not this format
	NeedMore                // cannot tell from this prefix
	Yes                     // this format
)

// SniffBytes is how much of a file sniffers see.
const SniffBytes = 8 << 10

// SniffText is the sniffer of formats that take any text: No for a prefix
// holding a NUL byte, which text never has, else NeedMore, so that a text
// file reaches them by suffix or an explicit format, never by content.
func SniffText(prefix []byte) Verdict {
	if bytes.IndexByte(prefix, 0) >= 0 {
		return No
	}
	return NeedMore
}

// SniffObject is the sniffer of a JSON document whose top level is an
// object recognized by its keys: after leading white space (and a byte
// order mark, for formats whose writers put one) it says No unless the
// document opens an object, and otherwise asks match about the text it
// has. When match cannot tell (NeedMore), the answer is No if the prefix
// is the whole file and NeedMore if it is cut.
func SniffObject(prefix []byte, bom bool, match func(doc []byte) Verdict) Verdict {
	p := prefix
	if bom {
		p = bytes.TrimPrefix(p, BOM)
	}
	p = bytes.TrimLeft(p, " \t\r\n")
	switch {
	case len(p) == 0:
		return NeedMore
	case p[0] != '{':
		return No
	}
	if v := match(p); v != NeedMore {
		return v
	}
	if len(prefix) < SniffBytes {
		return No
	}
	return NeedMore
}

// BOM is the UTF-8 byte order mark, which some writers put before text
// (and before JSON, which forbids it).
var BOM = []byte{0xEF, 0xBB, 0xBF}

// SkipBOM consumes a byte order mark at the start of br and reports the
// bytes it skipped, 0 or 3. err is a read error other than EOF.
func SkipBOM(br *bufio.Reader) (int64, error) {
	p, err := br.Peek(len(BOM))
	if bytes.Equal(p, BOM) {
		_, _ = br.Discard(len(BOM))
		return int64(len(BOM)), nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return 0, nil
}

// Evidence families, the groups of the support table (Spec.Family). One
// spelling each, so that a family is never split in two by a typo.
const (
	FamilyCPU         = "CPU profiles"
	FamilyReliability = "Reliability"
	FamilyStatic      = "Static candidates"
	FamilyTraces      = "Execution traces"
	FamilyPreviews    = "Generic previews"
	FamilyBenchmarks  = "Benchmarks"
	FamilyGPU         = "GPU and kernels"
)

// CPUTables are the tables every CPU-profile format emits, the input of
// the CPU projections.
var CPUTables = []*table.Schema{table.CPUFrames.Schema, table.CPUEdges.Schema}

// CPUProfile completes the spec of a CPU-profile format: it is listed
// under FamilyCPU and emits CPUTables.
func CPUProfile(s Spec) *Spec {
	s.Family, s.Tables = FamilyCPU, CPUTables
	return &s
}

// CPUStackProfile is CPUProfile for a format whose samples carry whole
// stacks: it emits cpu.stacks too (the stacks projection's input).
func CPUStackProfile(s Spec) *Spec {
	p := CPUProfile(s)
	p.Tables = append(slices.Clone(CPUTables), table.CPUStacks.Schema)
	return p
}

// WithLines completes a CPU-profile spec whose samples record their
// source line: it emits cpu.lines beside cpu.frames (Caps.LineTable).
func WithLines(p *Spec) *Spec {
	p.Tables = append(slices.Clone(p.Tables), table.CPULines.Schema)
	p.Caps.SampledLines, p.Caps.LineTable = true, true
	return p
}

// Limit is a raw parser ceiling: it bounds native traversal (bytes read,
// nodes, samples), never the rows of a projection. Crossing one is a
// LIMIT_EXCEEDED failure, not a silent cut.
type Limit struct {
	Name    string
	Default int64
	Unit    string
	Doc     string // what is counted, as a noun phrase: "call-tree nodes"
}

// LimitBytes names the ceiling on the bytes of the artifact read, which
// every format that bounds its whole input declares (with a default and a
// doc of its own) and most check up front (Input.CheckSize).
const LimitBytes = "max_bytes"

// LimitToken names the ceiling on the bytes of one JSON string or number
// (jsonscan's Scanner.MaxToken) that JSON formats declare.
const LimitToken = jsonscan.TokenLimit

// Caps are what a format's tables can tell beyond their schema. Projections
// and pre-execution checks ask for a capability, never for a format name.
type Caps struct {
	// CallCounts: cpu.frames rows carry recorded call counts and cumulative
	// time per function (deterministic profilers), so hotspots can rank by
	// calls or cumulative time.
	CallCounts bool
	// Statements: coverage.files rows carry statement, missing-line and
	// branch totals (a report, not only executed lines).
	Statements bool
	// FieldPositions: preview.fields positions index the values of
	// preview.records rows (CSV), so a field selection can keep columns.
	FieldPositions bool
	// SampledLines: the format can carry cpu.frames whose line is the
	// line each sample was on, and its tables say when they do
	// (table.SampledLinesHeader), so hotspots can rank source lines.
	SampledLines bool
	// LineTable: the format's cpu.frames are functions, and it emits a
	// cpu.lines table of the lines its samples were on beside them.
	LineTable bool
}

// Spec describes one native format.
type Spec struct {
	Name     string   // registry name, e.g. "v8-cpuprofile"
	Title    string   // human name, e.g. "Node/V8 CPU profile"
	Family   string   // evidence family, e.g. "CPU profiles"
	Suffixes []string // explicit-path suffixes, lower case, with the dot
	// Sniff recognizes the format from at most SniffBytes of the file's
	// start. Nil means suffixes and explicit format hints only.
	Sniff  func(prefix []byte) Verdict
	Tables []*table.Schema // the tables the decoder emits
	Limits []Limit
	// Options are the decoder's options, declared with the argument model
	// of operations: the runner validates them (typed, bounded, defaults
	// filled) before Decode sees them.
	Options  []param.Param
	Caps     Caps
	Producer string // the tool that writes this format
	Version  string // decoder version; part of cache keys and table headers
	Decoder  Decoder
	// Companions, for a directory format, names the directory an artifact
	// belongs to and the files in it (slash-separated paths relative to
	// root) that belong with it, so that a bundle keeps the directory
	// whole; nil for a one-file format.
	Companions func(a *evidence.Artifact) (root string, names []string, err error)

	// ByContent: which of Tables an artifact holds depends on its content,
	// not only on the format (a pprof file is a CPU or a heap profile), so
	// an operation inferred for an explicit path is the one that reads the
	// first table the decoder emits.
	ByContent bool
}

// TableNames lists the names of the tables the format emits.
func (s *Spec) TableNames() []string {
	out := make([]string, len(s.Tables))
	for i, t := range s.Tables {
		out[i] = t.Name
	}
	return out
}

// Limit returns the named limit's declaration.
func (s *Spec) Limit(name string) (Limit, bool) {
	if i := slices.IndexFunc(s.Limits, func(l Limit) bool { return l.Name == name }); i >= 0 {
		return s.Limits[i], true
	}
	return Limit{}, false
}

// Input is one native artifact ready to decode.
type Input struct {
	Spec     *Spec
	Artifact *evidence.Artifact
	// R streams the artifact's bytes from the start, exactly the size
	// fstat gave when the runner opened it. The runner hashes what passes
	// through R in the same pass (the digest is known when R reaches EOF)
	// and hashes what the decoder leaves unread after Decode returns.
	// Artifact.Path and Artifact.Size are known during Decode;
	// Artifact.ID is not (for an explicit path it is the digest of this
	// very read), so decoders never read it.
	R io.Reader
	// File is the open descriptor behind R, for decoders that hand the
	// artifact to an isolated worker or need random access. Reading it
	// directly bypasses the digest, so such decoders call in.VerifyFile
	// first (their one hash of the file) and then never read R.
	File *os.File
	// Limits are the effective parser ceilings; Limit falls back to the
	// spec's defaults for any not given.
	Limits map[string]int64
	// Options are the validated decoder options, defaults filled in.
	Options evidence.Object
	given   map[string]bool

	src      *Source // the runner's source; nil for an Input built by hand
	verified bool
}

// Limit returns the effective value of a named limit: the requested one,
// else the spec's default.
func (in *Input) Limit(name string) int64 {
	if v, ok := in.Limits[name]; ok && v > 0 {
		return v
	}
	if in.Spec != nil {
		if l, ok := in.Spec.Limit(name); ok {
			return l.Default
		}
	}
	return 0
}

// Exceeded is the LIMIT_EXCEEDED failure for the named limit, with the
// one receipt shape every limit failure carries. observed is what was
// seen (nil when only "more than the limit" is known).
func (in *Input) Exceeded(name string, observed any) *evidence.Failure {
	l, _ := in.Spec.Limit(name)
	what := l.Doc
	if what == "" {
		what = l.Unit
	}
	return evidence.LimitExceeded(evidence.LimitReceipt{Name: name, Value: in.Limit(name), Observed: observed, Unit: l.Unit},
		"%s: more than %s=%d %s", in.Spec.Title, name, in.Limit(name), what)
}

// ExceededAt is Exceeded located at a byte offset of the artifact.
func (in *Input) ExceededAt(name string, observed any, offset int64) *evidence.Failure {
	f := in.Exceeded(name, observed)
	f.Location.Offset = offset
	return f
}

// CheckSize is the LimitBytes failure when the artifact is larger than the
// limit allows, else nil: formats that bound the whole file check it from
// the size the runner knows before anything is read.
func (in *Input) CheckSize() error {
	if in.Artifact != nil && in.Artifact.Size > in.Limit(LimitBytes) {
		return in.Exceeded(LimitBytes, in.Artifact.Size)
	}
	return nil
}

// JSONScanner is the scanner a JSON decoder reads r with: containers nest
// at most depth levels (a malformed document beyond that) and a string or
// number holds at most the named limit's bytes, crossing which is that
// limit's LIMIT_EXCEEDED, located at the token.
func (in *Input) JSONScanner(r io.Reader, depth int, tokenLimit string) *jsonscan.Scanner {
	s := jsonscan.New(r)
	s.MaxDepth = depth
	s.MaxToken = int(in.Limit(tokenLimit))
	s.Bound = func(err error, off int64) error {
		if err != jsonscan.ErrTokenTooLong {
			return nil // nesting is not a declared limit: the document is malformed
		}
		return in.ExceededAt(tokenLimit, nil, off)
	}
	return s
}

// JSONLineScanner is JSONScanner for one line of a JSON Lines file held
// in memory: it resets s (a new scanner when nil) to line, whose first
// byte is at stream offset at, so a crossed token limit is located in the
// stream, not the line.
func (in *Input) JSONLineScanner(s *jsonscan.Scanner, line []byte, at int64, depth int, tokenLimit string) *jsonscan.Scanner {
	if s == nil {
		s = jsonscan.NewBytes(nil)
	}
	s.Reset(line)
	s.MaxDepth = depth
	s.MaxToken = int(in.Limit(tokenLimit))
	s.Bound = func(err error, off int64) error {
		if err != jsonscan.ErrTokenTooLong {
			return nil
		}
		return in.ExceededAt(tokenLimit, nil, at+off)
	}
	return s
}

// Int returns an integer option.
func (in *Input) Int(name string) int64 { n, _ := evidence.AsInt(in.Options[name]); return n }

// Bool returns a boolean option.
func (in *Input) Bool(name string) bool { b, _ := in.Options[name].(bool); return b }

// String returns a string option.
func (in *Input) String(name string) string { s, _ := in.Options[name].(string); return s }

// Strings returns a string-list option.
func (in *Input) Strings(name string) []string { s, _ := in.Options[name].([]string); return s }

// Given reports whether the caller set the option (rather than taking its
// default).
func (in *Input) Given(name string) bool { return in.given[name] }

// Sink receives the tables a decoder produces.
type Sink interface {
	// Wants reports whether the sink keeps tables of this schema. A
	// decoder does not build the rows of a table nobody wants; it may
	// still Begin it (the sink discards it).
	Wants(s *table.Schema) bool
	// Begin opens a table. The sink fills in the table id, format,
	// artifact ids, operation and decoder identity.
	Begin(t *evidence.Table) (TableWriter, error)
}

// TableWriter receives one table's rows and its closing summary.
type TableWriter interface {
	// Row takes one row: a *T of the table's schema (table.Of[T]), encoded
	// once where it leaves the process, or an evidence.Object of exactly
	// its columns. In tables from one artifact the sink writes the
	// artifact_id column.
	Row(row any) error
	End(s *evidence.Summary) error
}

// LazyTable is a table begun at its first row (or at End when it has
// none), for decoders that stream one table out of a document: a document
// refused before any row leaves no table behind, and one that fails part
// way ends the table it began as incomplete (Abort).
type LazyTable struct {
	out   Sink
	table *evidence.Table
	tw    TableWriter
}

// NewLazyTable returns t, to be begun on out when first needed.
func NewLazyTable(out Sink, t *evidence.Table) *LazyTable {
	return &LazyTable{out: out, table: t}
}

// Begin begins the table unless it has begun.
func (l *LazyTable) Begin() error {
	if l.tw != nil {
		return nil
	}
	tw, err := l.out.Begin(l.table)
	if err != nil {
		return err
	}
	l.tw = tw
	return nil
}

// Row begins the table if need be and writes one row.
func (l *LazyTable) Row(row any) error {
	if err := l.Begin(); err != nil {
		return err
	}
	return l.tw.Row(row)
}

// End begins the table if need be and ends it with s.
func (l *LazyTable) End(s *evidence.Summary) error {
	if err := l.Begin(); err != nil {
		return err
	}
	return l.tw.End(s)
}

// Abort returns err, the failure that stopped decoding, after ending a
// begun table with s, which says how it is incomplete.
func (l *LazyTable) Abort(err error, s *evidence.Summary) error {
	if l.tw == nil {
		return err
	}
	if eerr := l.tw.End(s); eerr != nil {
		return eerr
	}
	return err
}

// Decoder turns a native artifact into tables.
type Decoder interface {
	Decode(ctx context.Context, in *Input, out Sink) error
}

// DecoderFunc adapts a function to Decoder.
type DecoderFunc func(ctx context.Context, in *Input, out Sink) error

func (f DecoderFunc) Decode(ctx context.Context, in *Input, out Sink) error { return f(ctx, in, out) }
