package coveragepy

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

// JSONFormat is the newest `coverage json` report format this decoder
// reads. coverage.py numbers them itself: 1 is every report written before
// meta.format existed (5.0 to 7.3), 2 added meta.format, 3 added function
// and class regions. The counts this decoder reads are in all three.
const JSONFormat = 3

type jsonDecoder struct{}

// numbers is a report "summary" block (per file, or the totals).
type numbers struct {
	ints     map[string]int64
	floats   map[string]float64
	displays map[string]string
}

// Integer summary fields, and the ones every summary must have.
var (
	intFields      = []string{"covered_lines", "num_statements", "missing_lines", "excluded_lines", "num_branches", "num_partial_branches", "covered_branches", "missing_branches"}
	requiredInts   = []string{"covered_lines", "num_statements", "missing_lines", "excluded_lines"}
	percentFields  = []string{"percent_covered", "percent_statements_covered", "percent_branches_covered"}
	displayFields  = []string{"percent_covered_display", "percent_statements_covered_display", "percent_branches_covered_display"}
	requiredFloats = []string{"percent_covered"}
)

type jsonRead struct {
	ctx    context.Context
	in     *formats.Input
	w      jsonscan.Walker
	tw     *formats.LazyTable
	meta   bool
	format int64
	ver    string
	branch bool
	sums   map[string]int64
	files  int64
	totals *numbers
}

func (jsonDecoder) Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	// The scanner buffers its reads itself (64 KiB).
	s := in.JSONScanner(in.R, 64, formats.LimitToken)
	d := &jsonRead{ctx: ctx, in: in, w: jsonscan.Walker{S: s}, sums: map[string]int64{},
		tw: formats.NewLazyTable(out, &evidence.Table{Name: table.CoverageFiles.Name, Columns: table.CoverageFiles.EvidenceColumns(""), Evidence: evidence.Observed})}
	err := d.document()
	if err == nil {
		err = d.checkTotals()
	}
	if err != nil {
		return d.abort(err)
	}
	return d.tw.End(d.summary())
}

func (d *jsonRead) document() error {
	err := d.w.Document("a coverage.py JSON report", func(key []byte) error {
		switch string(key) {
		case "meta":
			return d.metaBlock()
		case "files":
			if !d.meta {
				// coverage.py writes meta first; without it the rows could
				// not be known to be of a supported format before they are emitted.
				return evidence.Failf(evidence.CodeDecodeFailure, "coverage report: files precede meta (coverage json writes meta first)")
			}
			return d.filesBlock()
		case "totals":
			n, err := d.numbers("totals")
			d.totals = n
			return err
		}
		return d.w.SkipValue()
	})
	if err != nil {
		return err
	}
	if !d.meta {
		return evidence.Failf(evidence.CodeDecodeFailure, "coverage report: no meta block")
	}
	if d.totals == nil {
		return evidence.Failf(evidence.CodeDecodeFailure, "coverage report: no totals block")
	}
	return nil
}

func (d *jsonRead) metaBlock() error {
	d.format = -1
	var hasVersion bool
	err := d.w.Object("meta", func(key []byte) error {
		var err error
		switch string(key) {
		case "format":
			d.format, err = d.w.Int("meta.format")
		case "version":
			d.ver, _, _, err = d.w.Str("meta.version", 64)
			hasVersion = err == nil
		case "branch_coverage":
			d.branch, err = d.w.Bool("meta.branch_coverage")
		default:
			err = d.w.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	if d.format == -1 {
		// No meta.format: a format-1 report, which only coverage.py 5.0
		// to 7.3 write; meta.version must say so.
		if !hasVersion || !formatOneVersion(d.ver) {
			return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
				Message: fmt.Sprintf("coverage json report without meta.format from coverage.py version %q is not supported: reports without the field are written by coverage.py 5.0 to 7.3", d.ver),
				Details: evidence.Object{"version": d.ver}}
		}
		d.format = 1
	}
	if d.format < 1 || d.format > JSONFormat {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("coverage json report format %d is not supported (formats 1 to %d are read: coverage.py 5.0 to 7.x)", d.format, JSONFormat),
			Details: evidence.Object{"format": d.format}}
	}
	d.meta = true
	return nil
}

// formatOneVersion reports whether a coverage.py version wrote format-1
// reports: the JSON report appeared in 5.0 and meta.format in 7.4.
func formatOneVersion(v string) bool {
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i] // 7.0b1
	}
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma == 5 || ma == 6 || ma == 7 && mi <= 3
}

func (d *jsonRead) numbers(what string) (*numbers, error) {
	n := &numbers{ints: map[string]int64{}, floats: map[string]float64{}, displays: map[string]string{}}
	err := d.w.Object(what, func(key []byte) error {
		k := string(key)
		switch {
		case contains(intFields, k):
			v, err := d.w.Int(what + "." + k)
			if err == nil && v < 0 {
				return fmt.Errorf("%s.%s is negative", what, k)
			}
			n.ints[k] = v
			return err
		case contains(percentFields, k):
			f, err := d.w.Float(what + "." + k)
			n.floats[k] = f
			return err
		case contains(displayFields, k):
			s, _, _, err := d.w.Str(what+"."+k, 32)
			n.displays[k] = s
			return err
		}
		return d.w.SkipValue()
	})
	if err != nil {
		return nil, err
	}
	need := requiredInts
	if d.branch {
		need = intFields
	}
	for _, k := range need {
		if _, ok := n.ints[k]; !ok {
			return nil, fmt.Errorf("%s lacks %s", what, k)
		}
	}
	for _, k := range requiredFloats {
		if _, ok := n.floats[k]; !ok {
			return nil, fmt.Errorf("%s lacks %s", what, k)
		}
	}
	return n, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (d *jsonRead) filesBlock() error {
	tok, err := d.w.Expect(jsonscan.ObjectStart, "files")
	if err != nil {
		return err
	}
	if err := d.tw.Begin(); err != nil {
		return err
	}
	maxFiles := d.in.Limit(LimitFiles)
	return d.w.Members(tok, "files", func(key []byte) error {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		d.files++
		if d.files > maxFiles {
			return d.in.ExceededAt(LimitFiles, nil, d.w.S.Offset())
		}
		name := string(key)
		if err := d.file(name); err != nil {
			return fmt.Errorf("files[%q]: %w", name, err)
		}
		return nil
	})
}

// lineList counts an array of line numbers, keeping the first keep.
func (d *jsonRead) lineList(what string, keep int) (int64, []int64, error) {
	var n int64
	var kept []int64
	err := d.w.Ints(what, func(v int64) error {
		n++
		if len(kept) < keep {
			kept = append(kept, v)
		}
		return nil
	})
	return n, kept, err
}

func (d *jsonRead) file(name string) error {
	var (
		sum                        *numbers
		executed, missing, exclude int64 = -1, -1, -1 // -1: list absent
		missingNums                []int64
		ctxNames                   map[string]struct{}
	)
	maxCtx := d.in.Limit(LimitContexts)
	err := d.w.Object("a file", func(key []byte) error {
		var err error
		switch string(key) {
		case "summary":
			sum, err = d.numbers("summary")
		case "executed_lines":
			executed, _, err = d.lineList("executed_lines", 0)
		case "missing_lines":
			missing, missingNums, err = d.lineList("missing_lines", table.CoverageMissingNumbers)
		case "excluded_lines":
			exclude, _, err = d.lineList("excluded_lines", 0)
		case "contexts":
			ctxNames = map[string]struct{}{}
			return d.w.Object("contexts", func(line []byte) error {
				return d.w.Array("contexts of a line", func(i int, el jsonscan.Token) error {
					if el.Kind != jsonscan.String {
						return d.w.S.Errorf(el, "a context name must be a string")
					}
					if _, ok := ctxNames[string(el.Bytes)]; !ok {
						if int64(len(ctxNames)) >= maxCtx {
							return d.in.ExceededAt(LimitContexts, nil, el.Offset)
						}
						ctxNames[string(el.Bytes)] = struct{}{}
					}
					return nil
				})
			})
		default:
			err = d.w.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	if sum == nil || executed < 0 || missing < 0 || exclude < 0 {
		return fmt.Errorf("a file entry needs summary, executed_lines, missing_lines and excluded_lines")
	}
	// The missing and excluded lists and the summary come from one
	// analysis; a disagreement means the report was edited or damaged.
	// (executed_lines is not compared: it lists every executed line, while
	// covered_lines counts executed statements.)
	for _, c := range []struct {
		field string
		n     int64
	}{{"missing_lines", missing}, {"excluded_lines", exclude}} {
		if sum.ints[c.field] != c.n {
			return fmt.Errorf("summary.%s = %d but the line list has %d entries", c.field, sum.ints[c.field], c.n)
		}
	}
	if sum.ints["num_statements"] != sum.ints["covered_lines"]+missing {
		return fmt.Errorf("summary.num_statements = %d but covered + missing = %d", sum.ints["num_statements"], sum.ints["covered_lines"]+missing)
	}
	for _, k := range intFields {
		d.sums[k] += sum.ints[k]
	}
	branch := func(k string) table.Null[int64] {
		v, ok := sum.ints[k]
		return table.Null[int64]{V: v, Valid: ok && d.branch}
	}
	row := &table.CoverageFile{
		File:               name,
		Statements:         table.Some(sum.ints["num_statements"]),
		ExecutedLines:      table.Some(sum.ints["covered_lines"]),
		MissingLines:       table.Some(missing),
		ExcludedLines:      table.Some(exclude),
		NumBranches:        branch("num_branches"),
		CoveredBranches:    branch("covered_branches"),
		PartialBranches:    branch("num_partial_branches"),
		MissingBranches:    branch("missing_branches"),
		PercentCovered:     table.Some(sum.floats["percent_covered"]),
		MissingLineNumbers: missingNums,
	}
	if row.MissingLineNumbers == nil {
		row.MissingLineNumbers = []int64{} // recorded, and empty: not null
	}
	if ctxNames != nil {
		names := make([]string, 0, len(ctxNames))
		for n := range ctxNames {
			names = append(names, n)
		}
		sort.Strings(names)
		row.ContextCount = table.Some(int64(len(names)))
		row.Contexts = names[:min(len(names), table.CoverageContextNames)]
	}
	return d.tw.Row(row)
}

// checkTotals verifies that the report's totals are the sum of its files,
// as coverage.py computes them.
func (d *jsonRead) checkTotals() error {
	need := requiredInts
	if d.branch {
		need = intFields
	}
	for _, k := range need {
		if d.totals.ints[k] != d.sums[k] {
			return evidence.Failf(evidence.CodeDecodeFailure, "coverage report: totals.%s = %d but its files sum to %d", k, d.totals.ints[k], d.sums[k])
		}
	}
	return nil
}

func (d *jsonRead) summary() *evidence.Summary {
	s := &evidence.Summary{RowsObserved: d.files, Complete: true}
	s.Coverage = evidence.Object{"coverage_version": table.NonEmpty(d.ver).Value(), "report_format": d.format, "branch_coverage": d.branch}
	s.Metrics = map[string]evidence.Metric{"files": {Value: d.files, Unit: "files"}}
	if d.totals != nil {
		units := map[string]string{"covered_lines": "lines", "num_statements": "lines", "missing_lines": "lines", "excluded_lines": "lines",
			"num_branches": "branches", "num_partial_branches": "branches", "covered_branches": "branches", "missing_branches": "branches"}
		for k, v := range d.totals.ints {
			s.Metrics["total_"+k] = evidence.Metric{Value: v, Unit: units[k]}
		}
		for k, v := range d.totals.floats {
			s.Metrics["total_"+k] = evidence.Metric{Value: v, Unit: "percent"}
		}
		for k, v := range d.totals.displays {
			s.Metrics["total_"+k] = evidence.Metric{Value: v, Unit: "percent"}
		}
	}
	if !d.branch {
		s.Limit("the report was made without branch measurement: branch columns are null")
	}
	return s
}

// abort closes a begun table as incomplete before returning the failure.
func (d *jsonRead) abort(err error) error {
	s := d.summary()
	s.Complete = false
	s.Truncation = &evidence.Truncation{Reason: "document_incomplete"}
	s.Limit(fmt.Sprintf("decoding stopped at byte %d (%v): the rows above are not the whole report", d.w.S.Offset(), err))
	return d.tw.Abort(err, s)
}
