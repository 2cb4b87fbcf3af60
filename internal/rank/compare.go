package rank

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/wire"
)

// A comparison (Request.Baseline) splits the inputs into two sides: the
// baseline paths and the new paths (Paths' arguments). Each side's paths
// are opened with its artifact role (projection.RoleBaseline, RoleNew),
// so their artifact blocks say the side and their tables get distinct
// ids even when both sides hold the same bytes. The operation must be
// one whose projection Compares; inferred, it is the first such
// operation that consumes the first baseline artifact's tables. Every
// table is assigned its side (projection.Comparer.Side) before it is
// admitted; the projection decides what pairs with what.

// baselineOf completes a request whose arguments name the baseline
// (projection.BaselineParam: --baseline, MCP's baseline) but whose
// Baseline field does not.
func baselineOf(req Request) Request {
	if len(req.Baseline) > 0 {
		return req
	}
	switch v := req.Args[projection.BaselineParam.Name].(type) {
	case []string:
		req.Baseline = v
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				req.Baseline = append(req.Baseline, s)
			}
		}
	}
	return req
}

// comparing reports whether the request splits its inputs into sides.
func (s *session) comparing() bool { return len(s.req.Baseline) > 0 }

// fits reports whether op may run for this request: a comparing
// operation exactly when the inputs have sides.
func (s *session) fits(op *registry.Operation) bool { return op.Projection.Compares == s.comparing() }

// misfit is the failure of a named operation that does not fit the
// request's sides.
func (s *session) misfit(op *registry.Operation) error {
	if s.comparing() {
		var names []string
		for _, o := range registry.Operations() {
			if o.Projection.Compares {
				names = append(names, o.Name)
			}
		}
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("operation %s does not compare profiles; --baseline needs one that does: %v", op.Name, names),
			Details:  evidence.Object{"operations": names},
			Location: evidence.Location{Field: "baseline"}}
	}
	return &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message:  fmt.Sprintf("operation %s compares a baseline with new profiles: give --baseline BASE_PATH and the new profiles as PATH arguments", op.Name),
		Location: evidence.Location{Field: "baseline"}}
}

// inferred picks the operation for a table name: the first in registry
// order that consumes it and fits the request's sides.
//
// An output asked for (Request.Output: svg, folded…) picks, among them,
// the first operation that lists it in its Outputs.
func (s *session) inferred(tableName string) *registry.Operation {
	var first *registry.Operation
	for _, op := range registry.OperationsForTables([]string{tableName}) {
		if !s.fits(op) {
			continue
		}
		if s.req.Output == "" || slices.Contains(op.Outputs, s.req.Output) {
			return op
		}
		if first == nil {
			first = op
		}
	}
	return first
}

// side tells a comparing projector the side of table t, read from its
// artifact's role.
func (s *session) side(t *evidence.Table, role string) {
	c, ok := s.proj.(projection.Comparer)
	if !ok {
		return
	}
	side := projection.SideNew
	if role == projection.RoleBaseline {
		side = projection.SideBase
	}
	c.Side(t.ID, t.ArtifactIDs, side)
}

// sidedPaths lists the paths to open with their roles: the baseline's
// first, so the operation is inferred from it.
func sidedPaths(req Request, paths []string) (out []string, roles []string, err error) {
	if len(req.Baseline) == 0 {
		roles = make([]string, len(paths))
		for i := range roles {
			roles[i] = formats.RoleExplicit
		}
		return paths, roles, nil
	}
	if len(paths) == 0 {
		return nil, nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  "--baseline gives the baseline side; give the new profiles as PATH arguments too",
			Location: evidence.Location{Field: "baseline"}}
	}
	for _, p := range req.Baseline {
		out, roles = append(out, p), append(roles, projection.RoleBaseline)
	}
	for _, p := range paths {
		out, roles = append(out, p), append(roles, projection.RoleNew)
	}
	return out, roles, nil
}

// errStreamSides refuses a comparison of a block stream: its artifacts
// carry no side.
var errStreamSides = &evidence.Failure{Code: evidence.CodeInvalidArgument,
	Message:  "--baseline names each side by its argument: give the baseline with --baseline PATH and the new side as PATH arguments, - for decoded blocks on stdin",
	Location: evidence.Location{Field: "baseline"}}

// StdinSide is the path argument that reads a comparison side's decoded
// blocks from stdin (flameox-decode NEW | flameox-rank --baseline BASE -).
const StdinSide = "-"

// isBlocks reports whether a side's path holds decoded blocks rather
// than a native artifact: "-" (stdin), or a file whose first line is a
// flameox block (flameox-decode's output saved to a file).
func isBlocks(path string) (bool, error) {
	if path == StdinSide {
		return true, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, evidence.Wrap(evidence.CodeIOFailure, err, "open %s", path)
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return false, evidence.Wrap(evidence.CodeIOFailure, err, "read %s", path)
	}
	var head struct{ Schema, Kind string }
	if json.Unmarshal(bytes.TrimSpace(line), &head) != nil || head.Schema != evidence.Schema {
		return false, nil
	}
	return evidence.KnownKind(head.Kind), nil
}

// blockSides runs a comparison whose sides are decoded blocks: each
// --baseline path and PATH argument is "-" (stdin, at most once) or a
// file of flameox-decode's blocks, read in turn, baseline first, each
// table on its argument's side. The side comes from the argument, not
// from the artifact: the same blocks on both sides compare as two
// profiles. It returns false, doing nothing, when no side is blocks; a
// mix of blocks and native artifacts is refused (decode the native ones
// first), since a native artifact's format and operation are resolved
// before any blocks are read.
func (s *session) blockSides(ctx context.Context, req Request, paths []string, out Output) (bool, error) {
	sided, roles, err := sidedPaths(req, paths)
	if err != nil {
		return false, err
	}
	var blocks, native []string
	stdin := 0
	for _, p := range sided {
		ok, err := isBlocks(p)
		if err != nil {
			return true, err
		}
		if ok {
			blocks = append(blocks, p)
		} else {
			native = append(native, p)
		}
		if p == StdinSide {
			stdin++
		}
	}
	switch {
	case len(blocks) == 0:
		return false, nil
	case len(native) > 0:
		return true, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("--baseline with decoded blocks (%s) needs every side as blocks; decode %s first (flameox-decode PATH > PATH.jsonl)",
				strings.Join(blocks, ", "), strings.Join(native, ", ")),
			Location: evidence.Location{Field: "baseline"}}
	case stdin > 1:
		return true, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "stdin (-) can be one side of a comparison, not both: save one side's blocks to a file (flameox-decode PATH > base.jsonl)", Location: evidence.Location{Field: "baseline"}}
	case stdin == 1 && req.Stdin == nil:
		return true, evidence.Failf(evidence.CodeInternal, "a comparison side reads stdin, and the request has none")
	}
	for i, p := range sided {
		var r io.Reader = req.Stdin
		if p != StdinSide {
			f, err := os.Open(p)
			if err != nil {
				return true, evidence.Wrap(evidence.CodeIOFailure, err, "open %s", p)
			}
			defer f.Close()
			r = f
		}
		if err := s.consume(ctx, wire.NewReader(r), out, roles[i]); err != nil {
			return true, sideFailure(err, p)
		}
	}
	return true, s.finish(out)
}

// sideFailure says which side's input a failure without a path came from.
func sideFailure(err error, path string) error {
	f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
	if f.Location.Path == "" || f.Location.Path == "<stdin>" {
		if path == StdinSide {
			path = "<stdin>"
		}
		f.Location.Path = path
	}
	return f
}
