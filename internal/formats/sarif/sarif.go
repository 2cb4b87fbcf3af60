// Package sarif decodes SARIF 2.1.0 static-analysis logs into one row per
// native result (table sarif.results).
//
// The log is streamed with internal/jsonscan: object keys are literal and a
// repeated key fails decoding, so no dotted or duplicated key can stand in
// for a native result. Row coordinates (run_index, result_index) index the
// native result inside runs[run_index].results. Result locations are
// normalized against a source root without reading any source file;
// locations that would leave the root are kept as rows with a typed
// location_status and a null path, never dropped.
//
// It imports formats, evidence, jsonscan, param and table.
package sarif

import (
	"bytes"
	"context"
	"path/filepath"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Table is the row schema this decoder emits.
var Table = table.SARIFResults.Name

// MessageBytes bounds the message text kept per result; longer text is cut
// on a rune boundary and message_truncated is set.
const MessageBytes = 1024

// uriBytes bounds a kept URI; a longer one is rejected as invalid_uri
// rather than cut, because a cut URI would name a different file.
const uriBytes = 4096

// Location statuses: "ok", "absent", or the reason a location was rejected.
const (
	StatusOK              = "ok"
	StatusAbsent          = "absent"                // the result has no physical location URI
	StatusOutsideRoot     = "outside_root"          // an absolute path outside the source root
	StatusFileOutsideRoot = "file_uri_outside_root" // a file:// URI outside the source root
	StatusTraversal       = "traversal"             // a ".." segment
	StatusRemote          = "remote_uri"            // http:, https: or another URI with an authority
	StatusScheme          = "unsupported_scheme"    // a scheme other than file without an authority
	StatusUnsupportedBase = "unsupported_uri_base"  // a uriBaseId the log does not define as a file location
	StatusSymlink         = "symlink_outside_root"  // an existing symlink leads out of the root
	StatusInvalidURI      = "invalid_uri"           // unparseable, too long, or holds a NUL byte
)

// Option names.
const OptSourceRoot = "source_root"

// Limit names.
const (
	LimitResults   = "max_results"
	LimitRules     = "max_rules"
	LimitArtifacts = "max_artifacts"
	LimitPending   = "max_pending_bytes"
)

// parserLimits are the raw parser ceilings.
var parserLimits = []formats.Limit{
	{Name: LimitResults, Default: 500_000, Unit: "results", Doc: "results read across all runs"},
	{Name: LimitRules, Default: 100_000, Unit: "rules", Doc: "rules kept per run (driver and extensions)"},
	{Name: LimitArtifacts, Default: 500_000, Unit: "artifacts", Doc: "run.artifacts entries kept per run"},
	{Name: formats.LimitToken, Default: 16 << 20, Unit: "bytes", Doc: "bytes in one JSON string or number"},
	{Name: LimitPending, Default: 256 << 20, Unit: "bytes", Doc: "bytes of results held while waiting for parts of the log they refer to (version after runs, tool after results)"},
}

// Spec is the registry entry for SARIF logs.
var Spec = &formats.Spec{
	Name:     "sarif",
	Title:    "SARIF 2.1.0 static-analysis log",
	Family:   formats.FamilyStatic,
	Suffixes: []string{".sarif", ".sarif.json"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.SARIFResults.Schema},
	Limits:   parserLimits,
	Producer: "SARIF 2.1.0 producers (gosec, ESLint, CodeQL, ...)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(decode),
	Options: []param.Param{{Name: OptSourceRoot, Type: param.String,
		Doc: "absolute directory that result URIs and path filters are normalized against; default: the artifact's directory"}},
}

// Sniff recognizes a SARIF log by SARIF's own top-level shape, not by
// words anywhere in the prefix: a "$schema" string naming sarif, or a
// "runs" array whose first run is an object holding "tool" or "results"
// (SARIF 2.1.0 §3.13, §3.14: every run has a tool). A "version" member
// alone is not SARIF's: pyperf, for one, writes "version": "1.0" at the
// top of its benchmark files.
func Sniff(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, true, func(p []byte) formats.Verdict {
		s := jsonscan.NewBytes(p)
		s.CheckDuplicates = false // a sniffer does not judge; the decoder refuses duplicates
		if _, err := s.Next(); err != nil {
			return formats.NeedMore
		}
		return sniffMembers(s, func(key string, v jsonscan.Token) (formats.Verdict, bool) {
			switch key {
			case "$schema":
				if v.Kind == jsonscan.String && bytes.Contains(bytes.ToLower(v.Bytes), []byte("sarif")) {
					return formats.Yes, true
				}
			case "runs":
				if v.Kind != jsonscan.ArrayStart {
					return formats.No, true
				}
				return sniffRun(s), true
			}
			return 0, false
		})
	})
}

// sniffRun looks at the first element of a top-level runs array.
func sniffRun(s *jsonscan.Scanner) formats.Verdict {
	run, err := s.Next()
	switch {
	case err != nil:
		return formats.NeedMore
	case run.Kind == jsonscan.ArrayEnd:
		return formats.NeedMore // an empty log: only $schema or the suffix can tell
	case run.Kind != jsonscan.ObjectStart:
		return formats.No
	}
	return sniffMembers(s, func(key string, v jsonscan.Token) (formats.Verdict, bool) {
		switch {
		case key == "tool" && v.Kind == jsonscan.ObjectStart, key == "results" && v.Kind == jsonscan.ArrayStart:
			return formats.Yes, true
		case key == "tool", key == "results":
			return formats.No, true
		}
		return 0, false
	})
}

// sniffMembers walks the members of an object whose '{' was read, handing
// each key and the first token of its value to decide until it decides;
// a member it passes over is skipped. An object that ends undecided is
// No; a prefix that ends first is NeedMore.
func sniffMembers(s *jsonscan.Scanner, decide func(key string, v jsonscan.Token) (formats.Verdict, bool)) formats.Verdict {
	for {
		k, err := s.Next()
		if err != nil {
			return formats.NeedMore
		}
		if k.Kind == jsonscan.ObjectEnd {
			return formats.No
		}
		v, err := s.Next()
		if err != nil {
			return formats.NeedMore
		}
		if verdict, ok := decide(string(k.Bytes), v); ok {
			return verdict
		}
		if err := s.Skip(v); err != nil {
			return formats.NeedMore
		}
	}
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	root, err := sourceRoot(in)
	if err != nil {
		return err
	}
	d := newDecoder(ctx, in, out, root)
	return d.run()
}

// sourceRoot returns the explicit source_root option or the artifact's
// directory.
func sourceRoot(in *formats.Input) (*Root, error) {
	dir := filepath.Dir(in.Artifact.Path)
	if in.Given(OptSourceRoot) {
		s := in.String(OptSourceRoot)
		if s == "" {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "option %s must be an absolute directory path", OptSourceRoot)
		}
		dir = s
	}
	return NewRoot(dir)
}

// arguments are the effective decoder arguments written into the table
// header: the limits and options in force, with the resolved source root,
// so a preserved replay keeps the same path scope.
func arguments(in *formats.Input, root *Root) evidence.Object {
	lim := evidence.Object{}
	for _, l := range parserLimits {
		lim[l.Name] = in.Limit(l.Name)
	}
	opts := evidence.Object{}
	for k, v := range in.Options {
		opts[k] = v
	}
	opts[OptSourceRoot] = root.Path
	return evidence.Object{"limits": lim, "options": opts}
}
