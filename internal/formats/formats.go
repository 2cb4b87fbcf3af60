// Package formats is the contract between native formats and the rest of
// flameox: a Spec names a format, recognizes it from a bounded prefix and
// decodes it into typed tables through a Sink. The explicit list of specs
// lives in internal/registry; this package only runs them.
package formats

import (
	"context"
	"io"
	"os"

	"github.com/flameox/flameox/internal/evidence"
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

// Limit is a raw parser ceiling: it bounds native traversal (bytes read,
// nodes, samples), never the rows of a projection. Crossing one is a
// LIMIT_EXCEEDED failure, not a silent cut.
type Limit struct {
	Name    string
	Default int64
	Unit    string
	Doc     string
}

// Spec describes one native format.
type Spec struct {
	Name     string   // registry name, e.g. "v8-cpuprofile"
	Title    string   // human name, e.g. "Node/V8 CPU profile"
	Family   string   // evidence family, e.g. "CPU profiles"
	Suffixes []string // explicit-path suffixes, lower case, with the dot
	// Sniff recognizes the format from at most SniffBytes of the file's
	// start. Nil means suffixes and explicit format hints only.
	Sniff    func(prefix []byte) Verdict
	Tables   []string // row schemas (internal/schema) the decoder emits
	Limits   []Limit
	Producer string // the tool that writes this format
	Version  string // decoder version; part of cache keys and table headers
	Decoder  Decoder
	// Options lists decoder options (name → doc) accepted in Input.Options.
	Options map[string]string
}

// Input is one native artifact ready to decode.
type Input struct {
	Artifact *evidence.Artifact
	// R streams the artifact's bytes from the start. The runner hashes
	// what passes through it and checks the digest after Decode returns.
	R io.Reader
	// File is the open descriptor behind R, for decoders that hand the
	// artifact to an isolated worker or need random access. Reading it
	// directly bypasses the digest check, so such decoders call
	// in.VerifyFile first.
	File    *os.File
	Limits  map[string]int64
	Options evidence.Object

	verified bool
}

// Limit returns the effective value of a named limit.
func (in *Input) Limit(name string) int64 { return in.Limits[name] }

// Sink receives the tables a decoder produces.
type Sink interface {
	// Begin opens a table. The sink fills in the table id, format,
	// artifact ids, operation and decoder identity.
	Begin(t *evidence.Table) (TableWriter, error)
}

// TableWriter receives one table's rows and its closing summary.
type TableWriter interface {
	Row(values evidence.Object) error
	End(s *evidence.Summary) error
}

// Decoder turns a native artifact into tables.
type Decoder interface {
	Decode(ctx context.Context, in *Input, out Sink) error
}

// DecoderFunc adapts a function to Decoder.
type DecoderFunc func(ctx context.Context, in *Input, out Sink) error

func (f DecoderFunc) Decode(ctx context.Context, in *Input, out Sink) error { return f(ctx, in, out) }
