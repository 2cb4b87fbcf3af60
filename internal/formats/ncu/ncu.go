// Package ncu decodes Nsight Compute reports (.ncu-rep) with NVIDIA's own
// reader, the ncu_report Python module, run in an isolated worker: the
// report is its only declared input, its environment is fixed, and wall
// time and memory are bounded at the worker boundary. The worker writes
// one JSON line per kernel launch (reader.py); the decoder turns them into
// gpu.kernels and gpu.kernel_metrics. Without ncu_report the decode is
// PROVIDER_UNAVAILABLE with the setup to do, never an empty report.
//
// It imports evidence, formats, jsonscan, lines, table and worker.
package ncu

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/worker"
)

// Version is the decoder's version.
const Version = "1"

//go:embed reader.py
var readerScript string

// Environment that selects the reader: the Python interpreter that has
// ncu_report (default: python3 on PATH), and a directory to put on its
// PYTHONPATH, such as an Nsight Compute installation's extras/python.
const (
	EnvPython    = "FLAMEOX_NCU_PYTHON"
	EnvReaderDir = "FLAMEOX_NCU_REPORT_DIR"
)

// ReaderPin is the ncu_report release the project tests with.
const ReaderPin = "ncu-report==2026.3.1"

// HostGuidance is what to do when no reader is found.
const HostGuidance = "install NVIDIA's reader into a Python 3: `python3 -m pip install " + ReaderPin + "`; or point " +
	EnvPython + " at a Python that has ncu_report, or " + EnvReaderDir + " at an Nsight Compute installation's extras/python"

const (
	limitTimeout = "worker_timeout_seconds"
	limitRSS     = "worker_max_rss_bytes"
	limitLine    = "max_action_bytes"
)

// Spec is the Nsight Compute report format.
var Spec = &formats.Spec{
	Name:     "ncu-rep",
	Title:    "Nsight Compute report",
	Family:   formats.FamilyGPU,
	Suffixes: []string{".ncu-rep"},
	Sniff:    sniff,
	Tables:   []*table.Schema{table.GPUKernels.Schema, table.GPUKernelMetrics.Schema},
	Limits: []formats.Limit{
		{Name: limitTimeout, Default: 600, Unit: "s", Doc: "wall time of the ncu_report worker"},
		{Name: limitRSS, Default: 8 << 30, Unit: "bytes", Doc: "resident memory of the ncu_report worker's process group"},
		{Name: limitLine, Default: 64 << 20, Unit: "bytes", Doc: "bytes of one kernel launch's record as the worker writes it (all its metrics and rules)"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "NVIDIA Nsight Compute (ncu -o), read with NVIDIA's ncu_report",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}

// magic is the start of every .ncu-rep the shared fixtures hold (2020.3
// to 2022.4) and of newer reports.
var magic = []byte("NVR\x00")

func sniff(prefix []byte) formats.Verdict {
	if len(prefix) < len(magic) {
		return formats.NeedMore
	}
	if bytes.HasPrefix(prefix, magic) {
		return formats.Yes
	}
	return formats.No
}

// reader is a resolved ncu_report interpreter.
type reader struct {
	python string
	dir    string // PYTHONPATH entry, "" for none
}

func resolveReader() (*reader, error) {
	r := &reader{python: os.Getenv(EnvPython), dir: os.Getenv(EnvReaderDir)}
	if r.python == "" {
		p, err := exec.LookPath("python3")
		if err != nil {
			return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
				Message: "an Nsight Compute report is read with NVIDIA's ncu_report module, and no python3 is on PATH to run it",
				Retry:   &evidence.Retry{Action: HostGuidance}, Err: err}
		}
		r.python = p
	}
	if !filepath.IsAbs(r.python) {
		p, err := exec.LookPath(r.python)
		if err != nil {
			return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
				Message: fmt.Sprintf("%s=%s is not an executable", EnvPython, r.python), Retry: &evidence.Retry{Action: HostGuidance}, Err: err}
		}
		r.python = p
	}
	return r, nil
}

func (r *reader) env() []string {
	env := []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8", "PYTHONNOUSERSITE=1"}
	if r.dir != "" {
		env = append(env, "PYTHONPATH="+r.dir)
	}
	return env
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if in.File == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "the ncu-rep decoder needs the artifact's file to hand to its worker")
	}
	if err := in.VerifyFile(); err != nil {
		return err
	}
	head := make([]byte, len(magic))
	if _, err := in.File.ReadAt(head, 0); err != nil || !bytes.Equal(head, magic) {
		return evidence.Failf(evidence.CodeDecodeFailure, "not an Nsight Compute report: the first bytes are %q, not the NVR magic", head)
	}
	rd, err := resolveReader()
	if err != nil {
		return err
	}
	d := &decoder{in: in, values: in.Values(),
		kernels: formats.NewLazyTable(out, table.GPUKernels.Header("")),
		metrics: formats.NewLazyTable(out, table.GPUKernelMetrics.Header("")),
		wantMet: out.Wants(table.GPUKernelMetrics.Schema), units: map[string]int64{}}
	wres, err := worker.Run(ctx, &worker.Spec{
		Name:    "ncu_report reader",
		Path:    rd.python,
		Args:    []string{"-c", readerScript, worker.InputPath(0)},
		Inputs:  []*os.File{in.File},
		Env:     rd.env(),
		Timeout: time.Duration(in.Limit(limitTimeout)) * time.Second,
		MaxRSS:  in.Limit(limitRSS),
	}, d.consume)
	if err != nil {
		if d.unavailable != "" {
			return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
				Message: fmt.Sprintf("%s cannot import NVIDIA's ncu_report (%s), which reads Nsight Compute reports", rd.python, d.unavailable),
				Retry:   &evidence.Retry{Action: HostGuidance}, Details: evidence.Object{"python": rd.python}}
		}
		return d.abort(err)
	}
	if !d.ended {
		return d.abort(evidence.Failf(evidence.CodeDecodeFailure, "the ncu_report worker exited before its end record"))
	}
	s := d.summary(rd, wres)
	ms := *s
	ms.RowsObserved = d.metricRows
	ms.Metrics = map[string]evidence.Metric{"metric_rows": {Value: d.metricRows, Unit: "count"}}
	if err := d.kernels.End(s); err != nil {
		return err
	}
	return d.metrics.End(&ms)
}

type decoder struct {
	in      *formats.Input
	values  *formats.Values
	kernels *formats.LazyTable
	metrics *formats.LazyTable
	wantMet bool

	unavailable string
	version     string
	ranges      int64
	ended       bool
	actions     int64
	metricRows  int64
	noDuration  int64
	units       map[string]int64 // native units kept as they are → metric rows
}

func (d *decoder) abort(err error) error {
	s := &evidence.Summary{RowsObserved: d.actions, Complete: false,
		Limitations: []string{"the ncu_report worker failed part way; the rows before the failure are a prefix"}}
	err = d.kernels.Abort(err, s)
	ms := *s
	ms.RowsObserved = d.metricRows
	return d.metrics.Abort(err, &ms)
}

func (d *decoder) summary(rd *reader, wres *worker.Result) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: d.actions, Complete: true, Metrics: map[string]evidence.Metric{}}
	s.Coverage = evidence.Object{"reader": "ncu_report", "reader_version": nullable(d.version), "python": rd.python,
		"ranges": d.ranges, "worker_peak_rss_bytes": wres.PeakRSS}
	if wres.Stderr.Retained > 0 {
		s.Coverage["reader_stderr"] = wres.Stderr.Text
		s.Coverage["reader_stderr_omitted_bytes"] = wres.Stderr.Omitted
	}
	s.Metrics["kernel_launches"] = evidence.Metric{Value: d.actions, Unit: "count"}
	s.Metrics["metric_rows"] = evidence.Metric{Value: d.metricRows, Unit: "count"}
	if d.noDuration > 0 {
		s.Limit(fmt.Sprintf("%d launches hold no gpu__time_duration.sum: the sections collected did not include it", d.noDuration))
	}
	if len(d.units) > 0 {
		s.Limit("metrics in units other than time, bytes, bytes per second and percent keep their native unit only (normalized_value is null)")
	}
	s.Limit("instanced metrics are given by their aggregate value and an instance count; the instance values are not rows")
	d.values.Summarize(s)
	return s
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// consume reads the worker's lines as they arrive.
func (d *decoder) consume(r io.Reader) error {
	lr := lines.NewStrict(r, int(d.in.Limit(limitLine)), limitLine)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.ended {
			return evidence.Failf(evidence.CodeDecodeFailure, "the ncu_report worker wrote past its end record (line %d)", l.Number)
		}
		rec, err := parseLine(l.Bytes)
		if err != nil {
			return evidence.Wrap(evidence.CodeDecodeFailure, err, "ncu_report worker line %d", l.Number)
		}
		switch rec["type"] {
		case "unavailable":
			d.unavailable, _ = rec["error"].(string)
		case "reader":
			d.version, _ = rec["version"].(string)
			d.ranges, _ = evidence.AsInt(rec["ranges"])
		case "action":
			if err := d.action(rec); err != nil {
				return fmt.Errorf("ncu_report worker line %d: %w", l.Number, err)
			}
		case "end":
			d.ended = true
		default:
			return evidence.Failf(evidence.CodeDecodeFailure, "ncu_report worker line %d: unknown record type %v", l.Number, rec["type"])
		}
	}
}

// parseLine reads one worker line; numbers stay json.Number, so integers
// keep every digit.
func parseLine(b []byte) (evidence.Object, error) {
	s := jsonscan.NewBytes(b)
	s.MaxDepth = 64
	tok, err := s.Next()
	if err != nil {
		return nil, err
	}
	v, err := s.Value(tok, jsonscan.ValueLimits{})
	if err != nil {
		return nil, err
	}
	if err := s.CheckEnd(); err != nil {
		return nil, err
	}
	o, ok := v.(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("a worker record is %T, not an object", v)
	}
	return o, nil
}

// metric is one [name, kind, has_value, value, unit, instances] entry.
type metric struct {
	name, kind, unit string
	has              bool
	value            any
	instances        int64
}

func readMetric(v any) (metric, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 6 {
		return metric{}, fmt.Errorf("a metric entry is not [name, kind, has_value, value, unit, instances]")
	}
	var m metric
	var ok1, ok2, ok3 bool
	m.name, ok1 = a[0].(string)
	m.kind, ok2 = a[1].(string)
	m.has, ok3 = a[2].(bool)
	if !ok1 || !ok2 || !ok3 {
		return metric{}, fmt.Errorf("a metric entry has a malformed name, kind or has_value")
	}
	m.value = a[3]
	m.unit, _ = a[4].(string)
	m.instances, _ = evidence.AsInt(a[5])
	return m, nil
}

// number is a metric's numeric value: a double, and the exact integer
// when it is one.
func number(v any) (f float64, n int64, isInt, ok bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return float64(i), i, true, true
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f, 0, false, true
		}
	case evidence.Object:
		switch x["nonfinite"] {
		case "NaN":
			return math.NaN(), 0, false, true
		case "Infinity":
			return math.Inf(1), 0, false, true
		case "-Infinity":
			return math.Inf(-1), 0, false, true
		}
	}
	return 0, 0, false, false
}

// normalize converts the units ncu_report states that have an exact
// factor to ns, bytes, bytes/s or %.
func normalize(unit string, v float64) (float64, string, bool) {
	switch unit {
	case "ns", "nsecond":
		return v, "ns", true
	case "us", "usecond":
		return v * 1e3, "ns", true
	case "ms", "msecond":
		return v * 1e6, "ns", true
	case "s", "second":
		return v * 1e9, "ns", true
	case "byte":
		return v, "bytes", true
	case "byte/s", "byte/second":
		return v, "bytes/s", true
	case "%":
		return v, "%", true
	}
	return 0, "", false
}

func (d *decoder) action(rec evidence.Object) error {
	ri, ok1 := evidence.AsInt(rec["range"])
	ai, ok2 := evidence.AsInt(rec["action"])
	name, ok3 := rec["name"].(string)
	list, ok4 := rec["metrics"].([]any)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return evidence.Failf(evidence.CodeDecodeFailure, "an action record without range, action, name or metrics")
	}
	k := &table.GPUKernel{RangeIndex: ri, ActionIndex: ai, Name: d.values.Bound(name), Metrics: int64(len(list))}
	if s, _ := rec["function"].(string); s != "" {
		k.FunctionName = table.Some(d.values.Bound(s))
	}
	if s, _ := rec["mangled"].(string); s != "" {
		k.MangledName = table.Some(d.values.Bound(s))
	}
	ms := make([]metric, len(list))
	byName := make(map[string]int, len(list))
	for i, v := range list {
		m, err := readMetric(v)
		if err != nil {
			return evidence.Wrap(evidence.CodeDecodeFailure, err, "kernel %s", name)
		}
		ms[i] = m
		byName[m.name] = i
	}
	intOf := func(n string) table.Null[int64] {
		if i, ok := byName[n]; ok && ms[i].has {
			if f, iv, isInt, ok := number(ms[i].value); ok {
				if isInt {
					return table.Some(iv)
				}
				if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
					return table.Some(int64(f))
				}
			}
		}
		return table.Null[int64]{}
	}
	floatOf := func(n string, want string) table.Null[float64] {
		if i, ok := byName[n]; ok && ms[i].has {
			if f, _, _, ok := number(ms[i].value); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
				if nv, nu, ok := normalize(ms[i].unit, f); ok && nu == want {
					return table.Some(nv)
				}
			}
		}
		return table.Null[float64]{}
	}
	k.DeviceID, k.ContextID, k.StreamID = intOf("launch__device_id"), intOf("launch__context_id"), intOf("launch__stream_id")
	k.GridX, k.GridY, k.GridZ = intOf("launch__grid_dim_x"), intOf("launch__grid_dim_y"), intOf("launch__grid_dim_z")
	k.BlockX, k.BlockY, k.BlockZ = intOf("launch__block_dim_x"), intOf("launch__block_dim_y"), intOf("launch__block_dim_z")
	k.Registers = intOf("launch__registers_per_thread")
	k.StaticShared, k.DynamicShared = intOf("launch__shared_mem_per_block_static"), intOf("launch__shared_mem_per_block_dynamic")
	if i, ok := byName["device__attribute_display_name"]; ok {
		if s, ok := ms[i].value.(string); ok {
			k.DeviceName = table.Some(d.values.Bound(s))
		}
	}
	k.DurationNS = floatOf("gpu__time_duration.sum", "ns")
	if !k.DurationNS.Valid {
		d.noDuration++
	}
	k.SMThroughput = floatOf("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%")
	k.MemThroughput = floatOf("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%")
	k.Occupancy = floatOf("sm__warps_active.avg.pct_of_peak_sustained_active", "%")
	rules, _ := rec["rules"].([]any)
	k.Rules = d.boundAll(rules).([]any)
	if k.Rules == nil {
		k.Rules = []any{}
	}
	if err := d.kernels.Row(k); err != nil {
		return err
	}
	d.actions++
	if !d.wantMet {
		d.metricRows += int64(len(ms))
		return nil
	}
	row := &table.GPUKernelMetric{}
	for _, m := range ms {
		*row = table.GPUKernelMetric{RangeIndex: ri, ActionIndex: ai, Kernel: k.Name, DeviceID: k.DeviceID,
			Metric: d.values.Bound(m.name), Kind: m.kind, Unit: table.NonEmpty(d.values.Bound(m.unit)), Instances: m.instances}
		if m.has {
			switch v := m.value.(type) {
			case string:
				row.Text = table.Some(d.values.Bound(v))
			default:
				f, iv, isInt, ok := number(v)
				if !ok {
					break
				}
				if x, isNum := v.(json.Number); isNum && !isInt && (m.kind == "uint64" || m.kind == "uint32") {
					row.Text = table.Some(string(x)) // an integer beyond int64 stays exact
				}
				if !math.IsNaN(f) && !math.IsInf(f, 0) {
					row.Value = table.Some(f)
					if nv, nu, ok := normalize(m.unit, f); ok {
						row.NormalizedVal, row.NormalizedUnit = table.Some(nv), table.Some(nu)
					} else if m.unit != "" {
						d.units[m.unit]++
					}
				} else {
					row.Text = table.Some(strconv.FormatFloat(f, 'g', -1, 64))
				}
				if isInt {
					row.Integer = table.Some(iv)
				}
			}
		}
		if err := d.metrics.Row(row); err != nil {
			return err
		}
		d.metricRows++
	}
	return nil
}

// boundAll bounds every string inside a rule result and turns numbers
// into their values.
func (d *decoder) boundAll(v any) any {
	switch x := v.(type) {
	case string:
		return d.values.Bound(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.boundAll(e)
		}
		return out
	case evidence.Object:
		if len(x) == 1 && x["nonfinite"] != nil {
			return evidence.Object{"type": "double", "value": x["nonfinite"]}
		}
		out := make(evidence.Object, len(x))
		for k, e := range x {
			out[k] = d.boundAll(e)
		}
		return out
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	}
	return v
}
