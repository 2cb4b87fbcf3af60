package registry

import (
	"fmt"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection/bench"
)

var summarizeBenchmarks = &Operation{
	Name:       nameSummarizeBenchmarks,
	Title:      "Benchmark statistics per series",
	Family:     formats.FamilyBenchmarks,
	Projection: bench.Summarize,
	Guidance: "Use on benchmark results (pyperf JSON, flameox benchmark samples, NVBench JSON) for per-series n, mean, " +
		"median, stdev, min, max, p5 and p95 in normalized units (seconds become ns). A series keeps every identity " +
		"dimension (axes, device, dtype, variant, worker): series never blend. Warmups and calibration values are not counted.",
	Examples: []Example{
		{Title: "every series", Args: evidence.Object{}},
		{Title: "one benchmark family", Args: evidence.Object{"benchmark_glob": "json_*"}},
	},
	Overhead: "the decoder reads the result file once; the projection holds the samples of the selected series",
	Limitations: []string{
		"statistics are computed as pyperf computes them (exact mean, sample stdev, linear-interpolation percentiles); for formats that export only a summary (NVBench) the producer's own numbers are shown with source=native",
	},
}

var compareBenchmarks = &Operation{
	Name:       nameCompareBenchmarks,
	Title:      "Compare a baseline and a new benchmark run",
	Family:     formats.FamilyBenchmarks,
	Projection: bench.Compare,
	Guidance: "Use to decide whether a change made benchmarks slower: the baseline result as baseline (--baseline BASE), the new one as the path. " +
		"Per series matched by identity: the ratio of medians (new/baseline), a bootstrap confidence interval, and a verdict " +
		"(slower, faster, no_difference, inconclusive) at a threshold. flameox-rank exits with status 10 when any series is " +
		"significantly slower, so a Makefile can gate on it.",
	Examples: []Example{
		{Title: "gate on a 5% slowdown", Args: evidence.Object{"threshold": 0.05}},
		{Title: "a tighter interval", Args: evidence.Object{"confidence": 0.99, "resamples": int64(10000)}},
	},
	Overhead: "bootstrap cost is resamples × (baseline + new samples) per series",
	Limitations: []string{
		"lower is better for every unit: a ratio above 1 is a slowdown (or growth in bytes or counts)",
		"a side of several artifacts pools each series' samples across them",
		"series with fewer than 3 samples on a side, or only a producer's summary, get no interval and no verdict",
	},
	Exit: regressionStatus,
}

// ExitRegression is flameox-rank's exit status when compare_benchmarks
// finds a series significantly slower. It is no failure code (those are
// 1-9 and 130): the result is complete evidence, written in full.
const ExitRegression = 10

func regressionStatus(s *evidence.Summary) (int, string) {
	n, _ := evidence.AsInt(s.Metrics[bench.MetricRegressions].Value)
	if n == 0 {
		return 0, ""
	}
	return ExitRegression, fmt.Sprintf("REGRESSION: %d benchmark series significantly slower than the baseline (exit status %d)", n, ExitRegression)
}
