package rank

import (
	"context"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/store"
)

// Fleet names the bundles to rank across: a store and the index
// conditions a bundle must meet (none: every bundle).
type Fleet struct {
	Store string
	Where []store.Cond
}

// widener is a projection whose artifact bound a caller that pools by
// design may raise (projection.Inputs.Widen).
type widener interface{ Widen(n int) }

// Bundles runs the operation over the preserved tables of the bundles of a
// store that the conditions select, reading their Parquet tables back
// without decoding native bytes. Selection comes first (the index, then the
// operation's own filters, then its bounds); each table keeps its
// artifact, so rows of different bundles are never merged unless the
// operation itself merges them and says so. A table identical to one
// already admitted from another bundle (the same evidence preserved twice,
// header and all) is read once. The summary counts the bundles: selected
// by the conditions, admitted (a table of theirs was ranked), duplicate
// tables skipped. Failures preserved in the admitted bundles are passed
// on and make the result incomplete; they do not decide the status, since
// they are past runs' failures, not this one's.
func Bundles(ctx context.Context, req Request, fl Fleet, out Output) error {
	s := &session{req: req}
	return s.after(s.bundles(ctx, fl, out), out)
}

type fleetBundle struct {
	r      *bundle.Reader
	tables []int // manifest indices of the tables the operation reads
}

func (s *session) bundles(ctx context.Context, fl Fleet, out Output) error {
	sel, err := store.Select(fl.Store, fl.Where)
	if err != nil {
		return err
	}
	if len(sel.IDs) == 0 {
		return noBundles(fl, sel)
	}
	// Open every manifest first: the operation is chosen, and the
	// artifacts it pools counted, before a row is read.
	var list []fleetBundle
	seen := map[string]bool{} // canonical headers (id left out) admitted
	artifacts := map[string]bool{}
	dups := 0
	for _, id := range sel.IDs {
		if err := ctx.Err(); err != nil {
			return evidence.Wrap(evidence.CodeCancelled, err, "rank")
		}
		r, err := bundle.OpenTables(bundle.Dir(fl.Store, id))
		if err != nil {
			return err
		}
		fb := fleetBundle{r: r}
		for i, te := range r.Manifest.Tables {
			ok, err := s.choose(te.Header.Name)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			h := *te.Header
			h.ID = ""
			key, err := evidence.Canonical(&h)
			if err != nil {
				return evidence.Wrap(evidence.CodeInternal, err, "table header")
			}
			if seen[string(key)] {
				dups++
				continue
			}
			seen[string(key)] = true
			for _, a := range te.Header.ArtifactIDs {
				artifacts[a] = true
			}
			fb.tables = append(fb.tables, i)
		}
		list = append(list, fb)
	}
	if s.op == nil {
		what := "any operation"
		if s.req.Operation != "" {
			what = s.req.Operation
		}
		return evidence.Failf(evidence.CodeInvalidArgument, "the %d selected bundles of %s hold no table for %s", len(sel.IDs), fl.Store, what)
	}
	if w, ok := s.proj.(widener); ok {
		w.Widen(len(artifacts))
	}
	fo := &fleetOutput{Output: out, sel: sel, dups: dups}
	for _, fb := range list {
		if len(fb.tables) > 0 {
			fo.admitted++
		}
		if err := s.bundle(ctx, fb, fo); err != nil {
			return err
		}
	}
	return s.finish(fo)
}

// bundle passes a bundle's provenance on and feeds its tables.
func (s *session) bundle(ctx context.Context, fb fleetBundle, out *fleetOutput) error {
	r := fb.r
	if len(fb.tables) == 0 {
		return nil
	}
	if err := out.Pass(r.Block()); err != nil {
		return err
	}
	for _, a := range r.Artifacts() {
		if err := out.Pass(a); err != nil {
			return err
		}
	}
	for _, f := range r.Failures() {
		out.failures++
		if err := out.Pass(f); err != nil {
			return err
		}
	}
	for _, i := range fb.tables {
		te := r.Manifest.Tables[i]
		t := *te.Header
		// Table ids are unique within a bundle; across bundles the
		// bundle's id keeps them apart.
		t.ID = r.ID.Hex() + "/" + te.Header.ID
		if err := s.admit(&t); err != nil {
			return evidence.AsFailure(err, evidence.CodeInvalidArgument).At(r.Dir, "")
		}
		n := 0
		for row, err := range r.Rows(i) {
			if err != nil {
				return err
			}
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "rank")
			}
			if err := s.proj.Row(&t, row); err != nil {
				return evidence.AsFailure(err, evidence.CodeInvalidArgument).At(r.Dir, "")
			}
		}
		if te.Summary != nil {
			sm := *te.Summary
			sm.TableID = t.ID
			if err := s.proj.Summary(&t, &sm); err != nil {
				return err
			}
		}
	}
	return nil
}

func noBundles(fl Fleet, sel *store.Selection) error {
	var where []string
	for _, c := range fl.Where {
		where = append(where, "--where "+c.String())
	}
	msg := "the store " + fl.Store + " holds no bundle"
	if len(where) > 0 {
		msg = "no bundle of the store " + fl.Store + " meets " + strings.Join(where, " ")
	}
	f := evidence.Failf(evidence.CodeInvalidArgument, "%s", msg)
	f.Details = evidence.Object{"published": sel.Published, "unindexed": sel.Unindexed}
	f.Location.Field = "where"
	return f
}

// fleetOutput adds what the bundles tell to the result's summary.
type fleetOutput struct {
	Output
	sel      *store.Selection
	admitted int
	dups     int
	failures int
}

func (o *fleetOutput) End(s *evidence.Summary) error {
	if s.Metrics == nil {
		s.Metrics = map[string]evidence.Metric{}
	}
	s.Metrics["bundles_published"] = evidence.Metric{Value: o.sel.Published, Unit: "bundles"}
	s.Metrics["bundles_selected"] = evidence.Metric{Value: len(o.sel.IDs), Unit: "bundles"}
	s.Metrics["bundles_admitted"] = evidence.Metric{Value: o.admitted, Unit: "bundles"}
	s.Metrics["bundles_unindexed"] = evidence.Metric{Value: o.sel.Unindexed, Unit: "bundles"}
	s.Metrics["duplicate_tables"] = evidence.Metric{Value: o.dups, Unit: "tables"}
	if o.dups > 0 {
		s.Limit(plural(o.dups, "table") + " identical to one of another bundle (the same evidence preserved again) read once")
	}
	if o.failures > 0 {
		s.Limit(plural(o.failures, "failure") + " preserved in the admitted bundles (passed on above): their evidence may be partial")
		s.Complete = false
	}
	if o.sel.Unindexed > 0 && len(o.sel.IDs) < o.sel.Published {
		s.Limit(plural(o.sel.Unindexed, "bundle") + " of the store have no index entry, so no --where can select them")
	}
	return o.Output.End(s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
