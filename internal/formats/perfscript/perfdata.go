package perfscript

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/worker"
)

// Worker limits of the perf-data conversion, declared beside the parser's.
const (
	LimitWorkerTimeout = "worker_timeout_seconds"
	LimitWorkerRSS     = "worker_max_rss_bytes"
)

// ScriptArgs are the `perf script` arguments of a perf-data conversion
// (after -i <input>). The explicit field list keeps the text stable across
// perf configurations and leaves out fields that some recordings lack
// (time, period, cpu), which would make perf script refuse the file.
// No --header: perf prints the recorded command line raw there, so a
// workload argument holding a newline would break the block's comment
// lines. Symbols stay demangled.
var ScriptArgs = []string{"-F", "comm,pid,tid,event,ip,sym,dso"}

// OptionSrcline is the perf-data option that adds srcline to the fields,
// for cpu.lines: perf then resolves every distinct address to its source
// line (addr2line), which costs time, so it is asked for.
const OptionSrcline = "srcline"

// scriptArgs are ScriptArgs with the input's options.
func scriptArgs(in *formats.Input) []string {
	if in.Bool(OptionSrcline) {
		return []string{"-F", ScriptArgs[1] + ",srcline"}
	}
	return ScriptArgs
}

// HostGuidance is what to do when perf is missing.
const HostGuidance = "install perf and put it on PATH: Debian `apt-get install linux-perf`, Ubuntu `apt-get install linux-tools-common linux-tools-$(uname -r)`, Fedora `dnf install perf`"

// DataSpec is the perf-data format: native perf.data, converted by
// `perf script` in an isolated worker.
var DataSpec = formats.WithLines(formats.CPUStackProfile(formats.Spec{
	Name:     "perf-data",
	Title:    "Linux perf.data",
	Suffixes: []string{".data"},
	Sniff:    SniffData,
	Limits: append([]formats.Limit{
		{Name: LimitWorkerTimeout, Default: 600, Unit: "s", Doc: "wall time of the perf script conversion"},
		{Name: LimitWorkerRSS, Default: 4 << 30, Unit: "bytes", Doc: "resident memory of the perf script process group"},
	}, parserLimits...),
	Producer: "perf record",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeData),
	Options: append(slices.Clone(options), param.Param{Name: OptionSrcline, Type: param.Bool, Default: false,
		Doc: "true has perf script print each frame's source line (srcline), for group_by line; slower: perf resolves every address"}),
}))

// SniffData recognizes perf.data by its magic, in either byte order.
func SniffData(prefix []byte) formats.Verdict {
	if len(prefix) < 8 {
		return formats.NeedMore
	}
	if m := string(prefix[:8]); m == "PERFILE2" || m == "2ELIFREP" {
		return formats.Yes
	}
	return formats.No
}

// converter is a resolved perf executable.
type converter struct {
	path    string
	version string // `perf --version` output, e.g. "perf version 6.1.187"
	digest  string // sha256 of the executable
}

// resolvePerf finds perf on PATH and identifies it by digest and version.
func resolvePerf(ctx context.Context) (*converter, error) {
	path, err := exec.LookPath("perf")
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: "perf-data needs the perf executable to convert perf.data, and none is on PATH",
			Retry:   &evidence.Retry{Action: HostGuidance}, Err: err}
	}
	digest, err := worker.FileSHA256(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "read %s", path)
	}
	c := &converter{path: path, digest: digest}
	var out bytes.Buffer
	_, err = worker.Run(ctx, &worker.Spec{
		Name: "perf --version", Path: path, Args: []string{"--version"},
		Env: minimalEnv(), Timeout: 30 * time.Second, MaxRSS: 256 << 20,
	}, func(r io.Reader) error {
		_, err := io.Copy(&out, io.LimitReader(r, 4096))
		return err
	})
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "%s --version", path)
	}
	c.version = strings.TrimSpace(out.String())
	if !strings.HasPrefix(c.version, "perf version ") {
		return nil, evidence.Failf(evidence.CodeProviderUnavailable, "%s --version printed %q, not a perf version", path, c.version)
	}
	return c, nil
}

// minimalEnv is the whole environment of a perf worker. HOME is declared
// because perf resolves symbols through its build-id cache in ~/.debug;
// PERF_CONFIG=/dev/null keeps a user's ~/.perfconfig from changing the
// output format.
func minimalEnv() []string {
	env := []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "PERF_CONFIG=/dev/null", "PERF_PAGER=cat"}
	if h := os.Getenv("HOME"); h != "" {
		env = append(env, "HOME="+h)
	}
	return env
}

func decodeData(ctx context.Context, in *formats.Input, out formats.Sink) error {
	// The converted text's size is not known before it is read.
	o := Options{BoundBytes: true, Stacks: out.Wants(table.CPUStacks.Schema)}
	if err := in.VerifyFile(); err != nil {
		return err
	}
	magic := make([]byte, 8)
	if _, err := in.File.ReadAt(magic, 0); err != nil || SniffData(magic) != formats.Yes {
		return evidence.Failf(evidence.CodeDecodeFailure, "not a perf.data file: the first bytes are %q, not the PERFILE2 magic", magic)
	}
	if err := checkSamples(in.File, string(magic)); err != nil {
		return err
	}
	conv, err := resolvePerf(ctx)
	if err != nil {
		return err
	}
	key := worker.Key{
		Input:     in.Artifact.ID,
		Converter: "perf script",
		Identity:  "sha256:" + conv.digest + " " + conv.version,
		Args:      scriptArgs(in),
		Consumer:  "flameox perf-script parser " + Version,
	}
	cov := evidence.Object{"converter": conv.path, "converter_version": conv.version}
	cache := worker.SessionCache()
	if cache == nil {
		cov["conversion_cache"] = "off"
	} else if e, ok := cache.Lookup(key); ok {
		cov["conversion_cache"] = "hit"
		vr, err := e.Open()
		if err != nil {
			return err
		}
		res, err := Parse(ctx, in, vr, o)
		if err != nil {
			vr.Close()
			return err
		}
		if err := vr.Verify(); err != nil {
			return err
		}
		return emit(in, out, res, withStderr(cov, e.Meta.Stderr), stderrMissing(e.Meta.Stderr))
	} else {
		cov["conversion_cache"] = "miss"
	}

	var pending *worker.Pending
	if cache != nil {
		if pending, err = cache.Begin(key); err != nil {
			return err
		}
	}
	var res *Result
	args := append([]string{"script", "-i", worker.InputPath(0)}, scriptArgs(in)...)
	wres, err := worker.Run(ctx, &worker.Spec{
		Name:    "perf script",
		Path:    conv.path,
		Args:    args,
		Inputs:  []*os.File{in.File},
		Env:     minimalEnv(),
		Timeout: time.Duration(in.Limit(LimitWorkerTimeout)) * time.Second,
		MaxRSS:  in.Limit(LimitWorkerRSS),
	}, func(r io.Reader) error {
		if pending != nil {
			r = io.TeeReader(r, pending)
		}
		var perr error
		res, perr = Parse(ctx, in, r, o)
		return perr
	})
	if err != nil {
		if pending != nil {
			pending.Abort()
		}
		return err
	}
	if pending != nil {
		if err := pending.Commit(wres.Stderr); err != nil {
			return err
		}
	}
	return emit(in, out, res, withStderr(cov, wres.Stderr), stderrMissing(wres.Stderr))
}

// perf.data header: the feature bitmap follows the magic, the header and
// attribute sizes and three {offset, size} sections (tools/perf's
// perf_file_header); feature 19, HEADER_STAT, marks `perf stat record`.
const (
	featuresOffset = 8 + 8 + 8 + 3*16
	featureStat    = 19
)

// checkSamples refuses a perf.data that holds counter records, written by
// `perf stat record`, before perf script is run on it: perf script would
// print counter lines the sample parser cannot read, and the failure
// would name a line of a text the user never saw.
func checkSamples(f io.ReaderAt, magic string) error {
	var word [8]byte
	if _, err := f.ReadAt(word[:], featuresOffset); err != nil {
		return evidence.Failf(evidence.CodeDecodeFailure, "perf.data header ends before its feature bitmap (byte %d)", featuresOffset)
	}
	bits := binary.LittleEndian.Uint64(word[:])
	if magic == "2ELIFREP" { // written on a big-endian host
		bits = binary.BigEndian.Uint64(word[:])
	}
	if bits&(1<<featureStat) != 0 {
		f := evidence.Failf(evidence.CodeUnsupportedFormat,
			"this perf.data holds counter records from `perf stat record`, not samples: there are no stacks to decode; read the counters with `perf stat report -i FILE`")
		f.Location.Offset = featuresOffset
		return f
	}
	return nil
}

func withStderr(cov evidence.Object, s worker.Stderr) evidence.Object {
	if s.Retained > 0 {
		cov["converter_stderr"] = s.Text
		cov["converter_stderr_omitted_bytes"] = s.Omitted
	}
	return cov
}

// stderrMissing turns perf's warnings about lost events into limitations:
// samples the kernel dropped are absent from the evidence, so it is
// incomplete. Other warnings stay in the coverage as perf wrote them.
func stderrMissing(s worker.Stderr) []string {
	low := strings.ToLower(s.Text)
	if strings.Contains(low, "lost") || s.Omitted > 0 && strings.Contains(low, "warning") {
		return []string{"perf script reported lost events or more warnings than were retained (see coverage.converter_stderr): samples may be missing"}
	}
	return nil
}
