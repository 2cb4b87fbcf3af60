package rank

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"

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
	readers, err := openManifests(ctx, fl.Store, sel.IDs)
	if err != nil {
		return err
	}
	for _, r := range readers {
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
	var read []fleetBundle
	for _, fb := range list {
		if len(fb.tables) > 0 {
			read = append(read, fb)
		}
	}
	fo.admitted = len(read)
	rctx, stop := context.WithCancel(ctx)
	ahead := readAhead(rctx, read)
	defer func() { stop(); ahead.wait() }()
	for k, fb := range read {
		if err := s.bundle(ctx, fb, ahead.rows(k), fo); err != nil {
			return err
		}
		ahead.done()
	}
	return s.finish(fo)
}

// openManifests opens (and verifies) the manifests of bundles ids, a few
// at once, since each costs file system round trips more than CPU. The
// first failure in id order is the result, as a sequential open's would be.
func openManifests(ctx context.Context, store string, ids []bundle.ID) ([]*bundle.Reader, error) {
	out := make([]*bundle.Reader, len(ids))
	errs := make([]error, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(ids), 2*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for k := range next {
				out[k], errs[k] = bundle.OpenTables(bundle.Dir(store, ids[k]))
			}
		})
	}
	var err error
feed:
	for k := range ids {
		select {
		case next <- k:
		case <-ctx.Done():
			err = evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "rank")
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return out, nil
}

// batch is a run of rows of one table read ahead, or the end of the table
// (end), or the error that ended reading.
type batch struct {
	rows []evidence.Object
	end  bool
	err  error
}

// ahead reads the admitted tables of a few bundles at once, while the
// projection takes the rows of the earliest, in order. A bundle is read
// only when a slot is free, and its rows wait in a short channel, so
// memory stays bounded by the slots whatever the tables' sizes.
type ahead struct {
	out   []chan batch
	slots chan struct{}
	wg    sync.WaitGroup
}

const batchRows = 256

func readAhead(ctx context.Context, list []fleetBundle) *ahead {
	a := &ahead{out: make([]chan batch, len(list)), slots: make(chan struct{}, 2*runtime.GOMAXPROCS(0))}
	for k := range list {
		a.out[k] = make(chan batch, 4)
	}
	a.wg.Go(func() {
		for k, fb := range list {
			select {
			case a.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			a.wg.Go(func() { readBundle(ctx, fb, a.out[k]) })
		}
	})
	return a
}

// readBundle sends the rows of fb's admitted tables, in batches, each
// table closed by an end batch; it stops at the first error.
func readBundle(ctx context.Context, fb fleetBundle, out chan<- batch) {
	send := func(b batch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, i := range fb.tables {
		rows := make([]evidence.Object, 0, batchRows)
		for row, err := range fb.r.Rows(i) {
			if err != nil {
				send(batch{err: err})
				return
			}
			if rows = append(rows, row); len(rows) == batchRows {
				if !send(batch{rows: rows}) {
					return
				}
				rows = make([]evidence.Object, 0, batchRows)
			}
		}
		if !send(batch{rows: rows, end: true}) {
			return
		}
	}
}

// rows is the channel of bundle k's rows.
func (a *ahead) rows(k int) <-chan batch { return a.out[k] }

// done frees the slot of the bundle just consumed.
func (a *ahead) done() { <-a.slots }

func (a *ahead) wait() { a.wg.Wait() }

// bundle passes a bundle's provenance on and feeds its tables, whose rows
// come read ahead on in.
func (s *session) bundle(ctx context.Context, fb fleetBundle, in <-chan batch, out *fleetOutput) error {
	r := fb.r
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
		for b := range in {
			if b.err != nil {
				return b.err
			}
			if ctx.Err() != nil {
				return evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "rank")
			}
			for _, row := range b.rows {
				if err := s.proj.Row(&t, row); err != nil {
					return evidence.AsFailure(err, evidence.CodeInvalidArgument).At(r.Dir, "")
				}
			}
			if b.end {
				break
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
