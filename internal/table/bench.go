package table

import "github.com/flameox/flameox/internal/evidence"

// Benchmark units: every benchmark decoder normalizes its values to one of
// these before they reach a row, so series of one unit pool and series of
// two never do.
const (
	BenchNs    = "ns"    // elapsed time
	BenchBytes = "bytes" // memory
	BenchCount = "count" // a dimensionless integer quantity (pyperf's "integer")
	BenchRatio = "ratio" // a dimensionless ratio (1 = 100%)
)

// Kinds of a benchmark value (BenchSample.Kind).
const (
	BenchSampleKind = "sample"      // a measured value, the population the statistics describe
	BenchWarmup     = "warmup"      // a warmup value of a run that also measured
	BenchCalibrate  = "calibration" // a value of a calibration run (loop or warmup calibration)
)

// BenchIdentity is what tells one benchmark series from another: the
// projection identity is all of it, so series that differ in device,
// dtype, variant, scope or worker never blend.
type BenchIdentity struct {
	Benchmark       string          `col:"benchmark" doc:"benchmark name as the producer wrote it"`
	Dimensions      evidence.Object `col:"dimensions" doc:"identity dimensions, name to text (axes, dtype, task spec, device name, NVBench state label when kept); {} when none"`
	Scope           Null[string]    `col:"scope" doc:"what one value covers (NVBench cold or batch, a kernel, an iteration); null when not stated"`
	Clock           Null[string]    `col:"clock" doc:"measurement clock (wall, cpu, cuda_event, host); null when not stated"`
	DeviceType      Null[string]    `col:"device_type" doc:"device the series ran on (cpu, cuda, ...); null when not stated"`
	DeviceIndex     Null[int64]     `col:"device_index" doc:"device index; null when not stated"`
	DeviceStream    Null[int64]     `col:"device_stream" doc:"device stream; null when not stated"`
	Variant         Null[string]    `col:"variant" doc:"variant of the benchmark; null when none"`
	Phase           Null[string]    `col:"phase" doc:"workload phase the series measures; null when none"`
	Synchronization Null[string]    `col:"synchronization" doc:"how device work was synchronized around the timing; null when not stated"`
	Unit            string          `col:"unit" doc:"unit of the series' values after normalization: ns, bytes, count or ratio"`
}

// BenchSeriesRow is a row of bench.series: one benchmark series with its
// identity, counts, and the producer's own statistics where it exports
// them (NVBench).
type BenchSeriesRow struct {
	SeriesID string `col:"series_id,identity" doc:"series identity within the artifact; bench.samples rows name it"`
	BenchIdentity
	LoopCount    Null[int64]     `col:"loop_count" doc:"loop iterations each value is averaged over, when the same for every value; null otherwise"`
	Samples      int64           `col:"samples" doc:"bench.samples rows of kind sample"`
	Warmups      int64           `col:"warmups" doc:"bench.samples rows of kind warmup or calibration"`
	NativeCount  Null[int64]     `col:"native_count" doc:"sample count the producer reports; null when it reports none"`
	NativeMean   Null[float64]   `col:"native_mean" doc:"mean the producer reports, in unit; null when none"`
	NativeStdev  Null[float64]   `col:"native_stdev" doc:"standard deviation the producer reports, in unit; null when none"`
	NativeMin    Null[float64]   `col:"native_min" doc:"minimum the producer reports, in unit; null when none"`
	NativeMax    Null[float64]   `col:"native_max" doc:"maximum the producer reports, in unit; null when none"`
	NativeMedian Null[float64]   `col:"native_median" doc:"median the producer reports, in unit; null when none"`
	Metadata     evidence.Object `col:"metadata,detail" doc:"the producer's metadata common to the series' runs, name to text (pyperf: python_version, cpu_model_name, hostname, ...); null when the format has none"`
}

// BenchSeries is the bench.series schema.
var BenchSeries = Define[BenchSeriesRow]("bench.series", "one row per benchmark series with its identity", FromArtifact)

// BenchSample is a row of bench.samples: one value of one series, in
// native order.
type BenchSample struct {
	SeriesID string       `col:"series_id,identity" doc:"the bench.series row of the value"`
	Kind     string       `col:"kind" doc:"sample, warmup or calibration"`
	Run      int64        `col:"run" doc:"run (pyperf: worker process) of the value, numbered from 1 in native order; 0 when the format has no runs"`
	Worker   Null[string] `col:"worker" doc:"worker, trial or process identity the producer states; null when none"`
	Index    int64        `col:"index" doc:"position of the value among its run's values of its kind, from 1"`
	Loops    Null[int64]  `col:"loops" doc:"loop iterations the value is averaged over; null when not stated"`
	Value    float64      `col:"value" doc:"the value in its series' unit (seconds become ns)"`
}

// BenchSamples is the bench.samples schema.
var BenchSamples = Define[BenchSample]("bench.samples", "one row per measured, warmup or calibration value of a benchmark series", FromArtifact)

// BenchSummary is a row of bench.summaries: the statistics of one series.
type BenchSummary struct {
	ArtifactID string `col:"artifact_id,identity" doc:"artifact the series was read from"`
	SeriesID   string `col:"series_id,identity" doc:"series identity within the artifact"`
	BenchIdentity
	N         int64         `col:"n" doc:"values the statistics describe"`
	Mean      Null[float64] `col:"mean" doc:"arithmetic mean, in unit"`
	Median    Null[float64] `col:"median" doc:"median, in unit; null when only a native summary without it exists"`
	Stdev     Null[float64] `col:"stdev" doc:"sample standard deviation (n-1), in unit; null for n < 2"`
	Min       Null[float64] `col:"min" doc:"least value, in unit"`
	Max       Null[float64] `col:"max" doc:"greatest value, in unit"`
	P5        Null[float64] `col:"p5" doc:"5th percentile (linear interpolation between closest ranks, as pyperf), in unit"`
	P95       Null[float64] `col:"p95" doc:"95th percentile, in unit"`
	Source    string        `col:"source" doc:"samples: computed from the samples; native: the producer's own summary (NVBench), no samples"`
	LoopCount Null[int64]   `col:"loop_count" doc:"loop iterations each value is averaged over, when the same for every value"`
	Warmups   int64         `col:"warmups" doc:"warmup and calibration values left out of the statistics"`
}

// BenchSummaries is the bench.summaries schema.
var BenchSummaries = Define[BenchSummary]("bench.summaries", "per benchmark series: n, mean, median, stdev, min, max, p5, p95 in normalized units")

// BenchComparison is a row of bench.comparisons: one series matched in a
// baseline and a new artifact, with the ratio of their medians.
type BenchComparison struct {
	Rank           int64           `col:"rank" doc:"1 = the largest slowdown"`
	Benchmark      string          `col:"benchmark" doc:"benchmark name"`
	Verdict        string          `col:"verdict" doc:"slower, faster, no_difference, inconclusive, or baseline_only / new_only / insufficient_samples"`
	Ratio          Null[float64]   `col:"ratio,unit=ratio" doc:"new median / baseline median: above 1 is slower (larger)"`
	CILow          Null[float64]   `col:"ci_low,unit=ratio" doc:"lower bound of the bootstrap confidence interval of the ratio"`
	CIHigh         Null[float64]   `col:"ci_high,unit=ratio" doc:"upper bound of the bootstrap confidence interval of the ratio"`
	BaselineMedian Null[float64]   `col:"baseline_median" doc:"median of the baseline samples, in unit"`
	NewMedian      Null[float64]   `col:"new_median" doc:"median of the new samples, in unit"`
	Unit           string          `col:"unit" doc:"unit of the medians"`
	BaselineN      int64           `col:"baseline_n" doc:"baseline samples"`
	NewN           int64           `col:"new_n" doc:"new samples"`
	Significant    bool            `col:"significant" doc:"the interval lies wholly beyond the threshold (verdict slower or faster)"`
	Dimensions     evidence.Object `col:"dimensions" doc:"identity dimensions shared by both sides"`
	Identity       string          `col:"identity" doc:"the series' full identity as matched (benchmark, dimensions, variant, phase, scope, clock, synchronization, device, unit)"`
	BaselineID     Null[string]    `col:"baseline_artifact_id,identity" doc:"artifact of the baseline series; null when only the new side has it"`
	NewID          Null[string]    `col:"new_artifact_id,identity" doc:"artifact of the new series; null when only the baseline has it"`
}

// BenchComparisons is the bench.comparisons schema.
var BenchComparisons = Define[BenchComparison]("bench.comparisons", "benchmark series of a baseline and a new run: ratio of medians with a bootstrap interval and a verdict")
