// Package bench holds the benchmark projections: summarize (per series n,
// mean, median, stdev, min, max, p5, p95, bench.summaries) and compare (a
// baseline against a new run: the ratio of medians with a bootstrap
// confidence interval and a verdict, bench.comparisons). Both read
// bench.series and bench.samples, whichever decoder wrote them.
//
// It imports projection, table, param and evidence.
package bench

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Tables are the tables both projections read.
var Tables = []*table.Schema{table.BenchSeries.Schema, table.BenchSamples.Schema}

var globParam = param.Param{Name: "benchmark_glob", Type: param.String,
	Doc: "keep series whose benchmark name matches: * any text, ? one character, everything else literal"}

// seriesKey is a series within its artifact (and, in a comparison, its
// side: the same file may be given on both sides).
type seriesKey struct {
	side         int
	artifact, id string
}

type series struct {
	key      seriesKey
	row      *table.BenchSeriesRow // nil until its bench.series row is read
	values   []float64             // kind sample, in the series' unit
	order    int
	identity string
}

// collector reads the two tables of every admitted artifact and joins
// samples to their series; rows arrive in any table order.
type collector struct {
	projection.Inputs[struct{}]
	// side gives a table's side in a comparison; nil: one side.
	side    func(t *evidence.Table) int
	glob    *regexp.Regexp
	series  map[seriesKey]*series
	samples int64
	skipped int64 // samples of series the glob leaves out
}

func newCollector(args evidence.Object) (collector, error) {
	c := collector{Inputs: projection.NewInputs[struct{}](Tables...), series: map[seriesKey]*series{}}
	if g, ok := args["benchmark_glob"].(string); ok {
		re, err := projection.NameGlob(g)
		if err != nil {
			return c, evidence.Wrap(evidence.CodeInvalidArgument, err, "argument benchmark_glob")
		}
		c.glob = re
	}
	return c, nil
}

func (c *collector) get(k seriesKey) *series {
	s := c.series[k]
	if s == nil {
		s = &series{key: k, order: len(c.series)}
		c.series[k] = s
	}
	return s
}

// Table admits a table of either schema.
func (c *collector) Table(t *evidence.Table, caps formats.Caps) error { return c.Inputs.Table(t, caps) }

func (c *collector) Row(t *evidence.Table, row any) error {
	side := 0
	if c.side != nil {
		side = c.side(t)
	}
	switch t.Name {
	case table.BenchSeries.Name:
		r, _, art, err := projection.Read(&c.Inputs, table.BenchSeries, t, row)
		if err != nil {
			return err
		}
		s := c.get(seriesKey{side, art, r.SeriesID})
		if s.row != nil {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s: series %s appears twice", t.ID, r.SeriesID)
		}
		cp := *r
		s.row = &cp
		s.identity = Identity(&cp)
		return nil
	}
	r, _, art, err := projection.Read(&c.Inputs, table.BenchSamples, t, row)
	if err != nil {
		return err
	}
	if r.Kind != table.BenchSampleKind {
		return nil
	}
	c.samples++
	s := c.get(seriesKey{side, art, r.SeriesID})
	s.values = append(s.values, r.Value)
	return nil
}

// selected returns the series the glob keeps, in input order; a sample
// naming a series no bench.series row declares is a failure.
func (c *collector) selected() ([]*series, error) {
	var out []*series
	for _, s := range c.series {
		if s.row == nil {
			return nil, evidence.Failf(evidence.CodeInvalidArgument,
				"bench.samples of artifact %s name series %s, which its bench.series table does not declare", s.key.artifact, s.key.id)
		}
		if c.glob != nil && !c.glob.MatchString(s.row.Benchmark) {
			c.skipped += int64(len(s.values))
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *series) int { return cmp.Compare(a.order, b.order) })
	return out, nil
}

// Identity is a series' identity across artifacts: every attribute that
// can tell two series apart (benchmark, unit, dimensions, variant, phase,
// scope, clock, synchronization, device), in one canonical text.
func Identity(r *table.BenchSeriesRow) string {
	var b strings.Builder
	b.WriteString(r.Benchmark)
	keys := make([]string, 0, len(r.Dimensions))
	for k := range r.Dimensions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		b.WriteString(" [")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%v", k, r.Dimensions[k])
		}
		b.WriteByte(']')
	}
	attr := func(name string, v table.Null[string]) {
		if v.Valid {
			fmt.Fprintf(&b, " %s=%s", name, v.V)
		}
	}
	attr("variant", r.Variant)
	attr("phase", r.Phase)
	attr("scope", r.Scope)
	attr("clock", r.Clock)
	attr("sync", r.Synchronization)
	attr("device", r.DeviceType)
	if r.DeviceIndex.Valid {
		fmt.Fprintf(&b, " device_index=%d", r.DeviceIndex.V)
	}
	if r.DeviceStream.Valid {
		fmt.Fprintf(&b, " stream=%d", r.DeviceStream.V)
	}
	fmt.Fprintf(&b, " (%s)", r.Unit)
	return b.String()
}
