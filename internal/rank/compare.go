package rank

import (
	"fmt"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/registry"
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
	Message:  "--baseline compares explicit artifacts: give the baseline with --baseline PATH and the new profiles as PATH arguments, not decoded tables on stdin",
	Location: evidence.Location{Field: "baseline"}}
