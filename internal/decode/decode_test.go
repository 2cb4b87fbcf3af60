package decode_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

const repo = "../.."

func fixture(parts ...string) string {
	return filepath.Join(append([]string{repo, "testdata"}, parts...)...)
}

// result is what a run wrote, block by block.
type result struct {
	blocks []evidence.Object
	raw    string
	err    error
	run    *decode.Run
}

func (r *result) kinds() string {
	var k []string
	for _, b := range r.blocks {
		k = append(k, b["kind"].(string))
	}
	return strings.Join(k, " ")
}

func (r *result) first(kind string) evidence.Object {
	for _, b := range r.blocks {
		if b["kind"] == kind {
			return b
		}
	}
	return nil
}

func (r *result) count(kind string) int {
	n := 0
	for _, b := range r.blocks {
		if b["kind"] == kind {
			n++
		}
	}
	return n
}

func parse(t *testing.T, s string) []evidence.Object {
	t.Helper()
	in := wire.NewReader(strings.NewReader(s))
	var out []evidence.Object
	for {
		raw, err := in.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("output block: %v", err)
		}
		out = append(out, raw.Obj)
	}
}

// paths decodes explicit paths the way flameox-decode does.
func paths(t *testing.T, opts decode.Options, ps ...string) *result {
	t.Helper()
	if opts.Specs == nil {
		opts.Specs = registry.Formats()
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	r := &decode.Run{Opts: opts}
	var err error
	for _, p := range ps {
		if err = r.Path(context.Background(), p, decode.StreamTarget{W: w}); err != nil {
			break
		}
	}
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	return &result{blocks: parse(t, buf.String()), raw: buf.String(), err: err, run: r}
}

// stream decodes a block stream the way flameox-decode does on stdin.
func stream(t *testing.T, opts decode.Options, input string) *result {
	t.Helper()
	if opts.Specs == nil {
		opts.Specs = registry.Formats()
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	r := &decode.Run{Opts: opts}
	err := r.Stream(context.Background(), wire.NewReader(strings.NewReader(input)), decode.StreamTarget{W: w},
		func(raw *evidence.Raw) error { return w.Write(raw) })
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	return &result{blocks: parse(t, buf.String()), raw: buf.String(), err: err, run: r}
}

func sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func copyTo(t *testing.T, src, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func encode(t *testing.T, blocks ...evidence.Block) string {
	t.Helper()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	for _, b := range blocks {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func failureCode(b evidence.Object) string {
	if b == nil {
		return ""
	}
	c, _ := b["code"].(string)
	return c
}

func TestDetection(t *testing.T) {
	hotspot := fixture("v8", "hotspot.cpuprofile")
	cases := []struct {
		name   string
		path   string
		format string // Options.Format
		want   string // detected format, or the failure code
	}{
		{"suffix and content", hotspot, "", "v8-cpuprofile"},
		{"content under another name", copyTo(t, hotspot, "profile.bin"), "", "v8-cpuprofile"},
		{"named format wins", hotspot, "text", "text"},
		{"unknown named format", hotspot, "nope", string(evidence.CodeUnsupportedFormat)},
		{"nothing matches", copyTo(t, fixture("v8", "VERSION"), "blob.bin"), "", string(evidence.CodeUnsupportedFormat)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := paths(t, decode.Options{Format: c.format}, c.path)
			if r.err != nil {
				t.Fatal(r.err)
			}
			a := r.first(evidence.KindArtifact)
			if a == nil || a["artifact_id"] != sha(t, c.path) || r.blocks[0]["kind"] != evidence.KindArtifact {
				t.Fatalf("the stream does not open with the artifact: %s", r.kinds())
			}
			if f := r.first(evidence.KindFailure); f != nil {
				loc := f["location"].(evidence.Object)
				if failureCode(f) != c.want || loc["artifact_id"] != a["artifact_id"] {
					t.Fatalf("failure %v, want %s naming the artifact", f, c.want)
				}
				if a["format"] != nil {
					t.Errorf("undetected artifact records format %v", a["format"])
				}
				return
			}
			if a["format"] != c.want || r.count(evidence.KindTable) == 0 {
				t.Fatalf("format %v with %d tables, want %s", a["format"], r.count(evidence.KindTable), c.want)
			}
		})
	}
}

// Options are checked before anything is read; an option a format does
// not accept fails that artifact only, after naming it.
func TestOptions(t *testing.T) {
	specs := registry.Formats()
	for _, c := range []struct {
		name  string
		opts  decode.Options
		field string
	}{
		{"unknown limit", decode.Options{Limits: map[string]int64{"max_widgets": 3}}, "limits.max_widgets"},
		{"non-positive limit", decode.Options{Limits: map[string]int64{"max_nodes": 0}}, ""},
		{"unknown format", decode.Options{Format: "nope"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Specs = specs
			var f *evidence.Failure
			if err := c.opts.Check(); !errors.As(err, &f) || f.Code == "" || f.Location.Field != c.field {
				t.Fatalf("got %v", err)
			}
		})
	}
	ok := decode.Options{Specs: specs, Limits: map[string]int64{"max_nodes": 5}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	// A parser limit crossed, and an option of the wrong type: each
	// artifact is announced and fails on its own.
	r := paths(t, ok, fixture("v8", "hotspot.cpuprofile"))
	if f := r.first(evidence.KindFailure); failureCode(f) != string(evidence.CodeLimitExceeded) || r.first(evidence.KindArtifact) == nil {
		t.Fatalf("got %s: %v", r.kinds(), f)
	}
	if loc := r.first(evidence.KindFailure)["location"].(evidence.Object); loc["artifact_id"] != sha(t, fixture("v8", "hotspot.cpuprofile")) {
		t.Fatalf("limit failure does not name the artifact: %v", loc)
	}
	r = paths(t, decode.Options{Options: evidence.Object{"threads": "maybe"}}, fixture("perf", "hot.perf.txt"))
	f := r.first(evidence.KindFailure)
	if failureCode(f) != string(evidence.CodeInvalidArgument) || r.kinds() != "artifact failure" {
		t.Fatalf("got %s: %v", r.kinds(), f)
	}
	if loc := f["location"].(evidence.Object); loc["artifact_id"] != sha(t, fixture("perf", "hot.perf.txt")) {
		t.Fatalf("failure does not name the artifact: %v", loc)
	}
}

// A failed artifact is reported with its artifact and the run goes on:
// the other artifacts' evidence survives, and the first failure is kept.
func TestFailureThenContinue(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "truncated.cpuprofile")
	if err := os.WriteFile(bad, []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.cpuprofile")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	good := fixture("v8", "hotspot.cpuprofile")
	r := paths(t, decode.Options{}, bad, fifo, filepath.Join(dir, "missing.cpuprofile"), good)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := "artifact failure failure failure artifact table row"
	if got := r.kinds(); !strings.HasPrefix(got, want) {
		t.Fatalf("blocks %s, want %s…", got, want)
	}
	var codes []string
	for _, b := range r.blocks {
		if b["kind"] == evidence.KindFailure {
			codes = append(codes, failureCode(b))
		}
	}
	if strings.Join(codes, " ") != "DECODE_FAILURE INVALID_ARGUMENT IO_FAILURE" {
		t.Fatalf("failures %v", codes)
	}
	if f := r.run.First(); f == nil || f.Code != evidence.CodeDecodeFailure || f.Location.ArtifactID != sha(t, bad) {
		t.Fatalf("first failure %v", f)
	}
	if r.count(evidence.KindSummary) != 4 { // cpu.frames, cpu.edges, cpu.lines, cpu.stacks
		t.Fatalf("%d summaries for the good artifact", r.count(evidence.KindSummary))
	}
}

// bigObservations repeats a real observations file until it spans several
// read chunks, so the decoder emits rows before the digest is known.
func bigObservations(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fixture("observations", "python.observations.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "big.observations.jsonl")
	if err := os.WriteFile(p, bytes.Repeat(b, (2<<20)/len(b)+1), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An explicit path's tables are held until its digest is known, in memory
// or spilled to disk, and come out exactly as for the same bytes with a
// recorded digest; a decoder that emits after EOF holds nothing.
func TestHold(t *testing.T) {
	big := bigObservations(t)
	a, err := formats.ArtifactFromPath(big, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	a.Format = "observations"
	want := stream(t, decode.Options{}, encode(t, a))
	if want.err != nil || want.run.First() != nil {
		t.Fatal(want.err, want.run.First())
	}
	for _, c := range []struct {
		name    string
		memory  int
		spilled bool
	}{
		{"memory", 0, false},
		{"spilled", 64 << 10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := paths(t, decode.Options{HoldMemory: c.memory}, big)
			if got.err != nil || got.run.First() != nil {
				t.Fatal(got.err, got.run.First())
			}
			if got.raw != want.raw {
				t.Fatalf("held output differs from the recorded artifact's (%d vs %d bytes)", len(got.raw), len(want.raw))
			}
			held, spilled := got.run.Held()
			if held == 0 || (spilled > 0) != c.spilled {
				t.Fatalf("held %d bytes, %d spilled", held, spilled)
			}
		})
	}
	r := paths(t, decode.Options{}, fixture("v8", "hotspot.cpuprofile"), fixture("perf", "hot.perf.txt"))
	if held, _ := r.run.Held(); held != 0 || r.run.First() != nil {
		t.Fatalf("CPU decoders held %d bytes (%v)", held, r.run.First())
	}
}

// changing appends to its file after the first line it reads.
func changing() *formats.Spec {
	return &formats.Spec{Name: "changing", Title: "changing", Tables: []*table.Schema{table.ObservationRecords.Schema}, Version: "1",
		Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
			tw, err := out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
			if err != nil {
				return err
			}
			br := bufio.NewReader(in.R)
			for n := int64(1); ; n++ {
				line, err := br.ReadString('\n')
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if n == 1 {
					f, err := os.OpenFile(in.Artifact.Path, os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						return err
					}
					f.WriteString("appended\n")
					f.Close()
				}
				if err := tw.Row(&table.ObservationRecord{Line: n, Kind: "observation", Value: line}); err != nil {
					return err
				}
			}
			return tw.End(&evidence.Summary{Complete: true})
		})}
}

// A file that changes while it is read is INTEGRITY_FAILURE, with nothing
// of it released; the run goes on.
func TestIntegrityOnChange(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(p, bytes.Repeat([]byte("some line\n"), 1<<17), 0o644); err != nil {
		t.Fatal(err)
	}
	good := fixture("v8", "hotspot.cpuprofile")
	specs := append([]*formats.Spec{changing()}, registry.Formats()...)
	r := paths(t, decode.Options{Specs: specs, Format: "changing"}, p)
	if r.kinds() != "failure" || failureCode(r.blocks[0]) != string(evidence.CodeIntegrity) {
		t.Fatalf("got %s", r.kinds())
	}
	r = paths(t, decode.Options{Specs: specs}, good)
	if r.run.First() != nil {
		t.Fatal(r.run.First())
	}
	// A recorded artifact whose file changed since: its size no longer
	// matches, which fails before anything is read.
	a, err := formats.ArtifactFromPath(copyTo(t, good, "x.cpuprofile"), "cpu-profile")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.Path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = stream(t, decode.Options{}, encode(t, a))
	if r.kinds() != "artifact failure" || failureCode(r.blocks[1]) != string(evidence.CodeIntegrity) {
		t.Fatalf("got %s", r.kinds())
	}
	if loc := r.blocks[1]["location"].(evidence.Object); loc["artifact_id"] != a.ID {
		t.Fatalf("location %v", loc)
	}
}

// Input blocks pass through in order, artifacts before their tables; an
// upstream failure passes too and is the run's first failure.
func TestStream(t *testing.T) {
	good := fixture("v8", "hotspot.cpuprofile")
	a, err := formats.ArtifactFromPath(good, "cpu-profile")
	if err != nil {
		t.Fatal(err)
	}
	a.Format = "v8-cpuprofile"
	upstream := evidence.Failf(evidence.CodeCaptureFailed, "the workload exited 1")
	r := stream(t, decode.Options{}, encode(t, upstream, a))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.kinds(); !strings.HasPrefix(got, "failure artifact table") || r.count(evidence.KindSummary) != 4 {
		t.Fatalf("blocks %s", got)
	}
	if f := r.run.First(); f == nil || f.Code != evidence.CodeCaptureFailed {
		t.Fatalf("first failure %v", f)
	}
	tb := r.first(evidence.KindTable)
	if ids := tb["artifact_ids"].([]any); len(ids) != 1 || ids[0] != a.ID || tb["table_id"] != a.Digest()[:12]+".cpu-profile.cpu.frames" {
		t.Fatalf("table header %v", tb)
	}
	// A malformed block is located at its input line.
	r = stream(t, decode.Options{}, encode(t, a)+`{"schema":"flameox/1","kind":"artifact"}`+"\n")
	var f *evidence.Failure
	if !errors.As(r.err, &f) || f.Location.Line != 2 || f.Location.Path != "<stdin>" {
		t.Fatalf("got %v", r.err)
	}
}

// TestForgedArtifactBlocks: decode refuses in artifact blocks what preserve
// refuses (one validator, evidence.Artifact.Check, and one path check,
// formats.OpenRegular), each as INVALID_ARGUMENT, never decoding a row.
func TestForgedArtifactBlocks(t *testing.T) {
	good := fixture("v8", "hotspot.cpuprofile")
	a, err := formats.ArtifactFromPath(good, "cpu-profile")
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "pipe.cpuprofile")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rel := good // fixture paths are relative to the package directory
	cases := []struct {
		name string
		edit func(*evidence.Artifact)
	}{
		{"relative path", func(b *evidence.Artifact) { b.Path = rel }},
		{"negative size", func(b *evidence.Artifact) { b.Size = -1 }},
		{"directory", func(b *evidence.Artifact) { b.Path = t.TempDir() }},
		{"fifo", func(b *evidence.Artifact) { b.Path = fifo }},
		{"dev zero", func(b *evidence.Artifact) { b.Path, b.Size = "/dev/zero", 0 }},
		{"upper-case digest", func(b *evidence.Artifact) { b.ID = strings.ToUpper(b.ID[:7]) + b.ID[7:] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := *a
			c.edit(&b)
			r := stream(t, decode.Options{}, encode(t, &b))
			code := evidence.CodeOf(r.err)
			if f := r.run.First(); r.err == nil && f != nil {
				code = f.Code
			}
			if code != evidence.CodeInvalidArgument || r.count(evidence.KindRow) != 0 {
				t.Fatalf("got %v / %v, blocks %s; want INVALID_ARGUMENT and no rows", r.err, r.run.First(), r.kinds())
			}
		})
	}
	// An unknown kind is refused where it is read, as preserve refuses it.
	r := stream(t, decode.Options{}, encode(t, a)+`{"kind":"artefact","schema":"flameox/1"}`+"\n")
	if evidence.CodeOf(r.err) != evidence.CodeInvalidArgument {
		t.Fatalf("unknown kind: %v", r.err)
	}
}

// TestTokenBoundIsALimit: a string longer than the token bound is one
// rule in every JSON decoder: LIMIT_EXCEEDED (exit 5) with the limit's
// receipt, located at the token, never DECODE_FAILURE.
func TestTokenBoundIsALimit(t *testing.T) {
	long := strings.Repeat("x", 100)
	cases := []struct {
		format, name, doc, limit string
	}{
		{"v8-cpuprofile", "p.cpuprofile", `{"nodes":[{"id":1,"callFrame":{"functionName":"` + long + `","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}}],"samples":[1],"timeDeltas":[1]}`, formats.LimitToken},
		{"speedscope", "p.speedscope.json", `{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"` + long + `"}]},"profiles":[]}`, "max_string_bytes"},
		{"sarif", "p.sarif", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"` + long + `"}},"results":[]}]}`, formats.LimitToken},
		{"coverage-json", "coverage.json", `{"meta":{"version":"7.3.2","format":2,"show_contexts":false,"branch_coverage":false,"timestamp":"` + long + `"},"files":{},"totals":{}}`, formats.LimitToken},
		{"json", "p.json", `{"a":"` + long + `"}`, formats.LimitToken},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), c.name)
			if err := os.WriteFile(p, []byte(c.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			r := paths(t, decode.Options{Format: c.format, Limits: map[string]int64{c.limit: 10}}, p)
			f := r.run.First()
			if f == nil || f.Code != evidence.CodeLimitExceeded || evidence.ExitCode(f.Code) != 5 {
				t.Fatalf("got %v, want LIMIT_EXCEEDED", f)
			}
			lim, _ := f.Details["limit"].(evidence.Object)
			if lim["name"] != c.limit || lim["value"] != int64(10) || f.Location.Offset == 0 {
				t.Fatalf("receipt %v at %+v", f.Details, f.Location)
			}
		})
	}
}

// firstLine ends its table after one line, claiming completeness, and
// leaves the rest of the file unread: its summary is written before the
// digest is known.
func firstLine() *formats.Spec {
	return &formats.Spec{Name: "first-line", Title: "first line", Tables: []*table.Schema{table.ObservationRecords.Schema}, Version: "1",
		Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
			tw, err := out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
			if err != nil {
				return err
			}
			line, err := bufio.NewReader(in.R).ReadString('\n')
			if err != nil {
				return err
			}
			if err := tw.Row(&table.ObservationRecord{Line: 1, Kind: "observation", Value: line}); err != nil {
				return err
			}
			return tw.End(&evidence.Summary{RowsObserved: 1, Complete: true})
		})}
}

// TestForgedDigest (9.4): an artifact block naming another file of the
// same size. The size matches, so the bytes are read; the digest is known
// only at the end, so rows are already written: their summary must say
// complete:false with the integrity failure, and rank must not rank them.
func TestForgedDigest(t *testing.T) {
	dir := t.TempDir()
	recorded := filepath.Join(dir, "recorded.txt")
	other := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(recorded, []byte("public line\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("secret line\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := formats.ArtifactFromPath(recorded, "result")
	if err != nil {
		t.Fatal(err)
	}
	a.Path, a.Format = other, "first-line"
	specs := append([]*formats.Spec{firstLine()}, registry.Formats()...)
	r := stream(t, decode.Options{Specs: specs}, encode(t, a))
	if f := r.run.First(); f == nil || f.Code != evidence.CodeIntegrity {
		t.Fatalf("first failure %v", f)
	}
	if got := r.kinds(); got != "artifact table row summary failure" {
		t.Fatalf("blocks %s", got)
	}
	sum := r.first(evidence.KindSummary)
	lims, _ := sum["limitations"].([]any)
	if sum["complete"] != false || len(lims) == 0 || !strings.Contains(lims[len(lims)-1].(string), "failed verification") {
		t.Fatalf("rows of unverified bytes closed as %v", sum)
	}
}

// verifying reads its artifact through the descriptor (as the isolated
// workers do), after VerifyFile; then act changes the file, and the
// decoder either fails (it found the file malformed) or ends its table.
func verifying(act func(path string) error, fail bool) *formats.Spec {
	return &formats.Spec{Name: "verifying", Title: "verifying", Tables: []*table.Schema{table.ObservationRecords.Schema}, Version: "1",
		Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
			if err := in.VerifyFile(); err != nil {
				return err
			}
			tw, err := out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
			if err != nil {
				return err
			}
			if err := tw.Row(&table.ObservationRecord{Line: 1, Kind: "observation", Value: "x"}); err != nil {
				return err
			}
			if err := act(in.Artifact.Path); err != nil {
				return err
			}
			if fail {
				return errors.New("record 2 is cut short")
			}
			return tw.End(&evidence.Summary{RowsObserved: 1, Complete: true})
		})}
}

// TestChangedDuringDecode (9.17): a file truncated while a decoder reads
// it is INTEGRITY_FAILURE (exit 9), not a DECODE_FAILURE that blames the
// file; one appended to is exit 9 with its table closed incomplete, never
// written as complete first.
func TestChangedDuringDecode(t *testing.T) {
	truncate := func(p string) error { return os.Truncate(p, 3) }
	appendTo := func(p string) error {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("appended\n")
		return err
	}
	cases := []struct {
		name     string
		act      func(string) error
		fail     bool
		recorded bool
	}{
		{"truncated, recorded", truncate, true, true},
		{"truncated, explicit", truncate, true, false},
		{"appended, recorded", appendTo, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "data.txt")
			if err := os.WriteFile(p, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			specs := append([]*formats.Spec{verifying(c.act, c.fail)}, registry.Formats()...)
			var r *result
			if c.recorded {
				a, err := formats.ArtifactFromPath(p, "result")
				if err != nil {
					t.Fatal(err)
				}
				a.Format = "verifying"
				r = stream(t, decode.Options{Specs: specs}, encode(t, a))
			} else {
				r = paths(t, decode.Options{Specs: specs, Format: "verifying"}, p)
			}
			if f := r.run.First(); f == nil || f.Code != evidence.CodeIntegrity {
				t.Fatalf("first failure %v, want INTEGRITY_FAILURE", f)
			}
			for _, s := range r.blocks {
				if s["kind"] == evidence.KindSummary && s["complete"] != false {
					t.Fatalf("a table of a changed file closed complete: %v", s)
				}
			}
		})
	}
}
