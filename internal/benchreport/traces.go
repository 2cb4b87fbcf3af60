package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/flameox/flameox/internal/formats/chrometrace"
	"github.com/flameox/flameox/internal/projection/trace"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
)

// traceSeed is the real Kineto trace the trace inputs are built from.
const traceSeed = "testdata/kineto/hta-simple_add-a100.trace.json.gz"

// traceCases are the execution-trace cases: a Kineto trace grown from a
// real one to 100 MB and 1 GB, decoded, and summarized by operation
// beside a Python json.load of the same file (what a script over a
// PyTorch trace does; HTA's loader starts with it).
func traceCases() []benchCase {
	gen := seeded(traceSeed, chrometrace.Generate)
	ops := traceOps()
	return []benchCase{
		{"kineto decode 100 MB", "kineto-100MB.pt.trace.json", 100e6, gen, decodeArgv, 0, true, nil},
		{"kineto decode 1 GB", "kineto-1GB.pt.trace.json", 1e9, gen, decodeArgv, 0, true, nil},
		{"kineto summarize operations 100 MB", "kineto-100MB.pt.trace.json", 100e6, gen, ops, 0, true, pythonTrace},
		{"kineto summarize operations 1 GB", "kineto-1GB.pt.trace.json", 1e9, gen, ops, 0, true, pythonTrace},
		{"kineto kernel breakdown 270 MB", "kineto-270MB.pt.trace.json", 270e6, gen, kernels(ops), 0, true, htaPeer()},
	}
}

// kernels is the trace-operations command line kept to the kernel
// category: what HTA's kernel breakdown covers.
func kernels(ops func(bin, in string) []string) func(bin, in string) []string {
	return func(bin, in string) []string { return append(ops(bin, in), "--category", "kernel") }
}

// htaPeer is Holistic Trace Analysis loading the same Kineto trace and
// computing its GPU kernel breakdown (internal/benchreport/peers/hta-kernels.py),
// run with the python of the venv FLAMEOX_HTA_VENV names (HTA pulls in
// torch and pandas, which CI does not install). Without it the peer is
// reported absent.
func htaPeer() *peer {
	venv := os.Getenv("FLAMEOX_HTA_VENV")
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); venv == "" || err != nil {
		return &peer{name: "HTA (absent)", argv: func(string) []string {
			return []string{"sh", "-c", "echo 'HTA absent: FLAMEOX_HTA_VENV names no venv' >&2; exit 1"}
		}}
	}
	v := version(py, "-c", "from importlib.metadata import version as v; print(v('HolisticTraceAnalysis'))")
	return &peer{name: "HTA " + v + " load+kernel breakdown", argv: func(in string) []string {
		return []string{py, "internal/benchreport/peers/hta-kernels.py", in}
	}}
}

// pythonTrace is CPython's json.load of the whole trace and a per-name
// sum of X durations (internal/benchreport/peers/trace-ops.py).
var pythonTrace = &peer{name: "python3 json " + version("python3", "--version"), argv: func(in string) []string {
	return []string{"python3", "internal/benchreport/peers/trace-ops.py", in}
}}

// seeded generates an input of size bytes from a real seed file with a
// format's own generator.
func seeded(seedPath string, generate func(io.Writer, []byte, int64) error) func(string, int64) error {
	return func(out string, size int64) error {
		seed, err := os.ReadFile(seedPath)
		if err != nil {
			return err
		}
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		if err := generate(f, seed, size); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// traceOps is the command line of the trace-operations projection (its
// operation found by its table).
func traceOps() func(bin, in string) []string {
	var op string
	for _, o := range registry.OperationsForTables([]string{table.TraceSlices.Name}) {
		if o.Projection == trace.Operations {
			op = o.Name
		}
	}
	return func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", "--operation", op, in}
	}
}
