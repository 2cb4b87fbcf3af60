package rank_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

type result struct {
	raw    string
	blocks []evidence.Object
	err    error
}

func (r *result) kinds() string {
	var k []string
	for _, b := range r.blocks {
		k = append(k, b["kind"].(string))
	}
	return strings.Join(k, " ")
}

func (r *result) all(kind string) []evidence.Object {
	var out []evidence.Object
	for _, b := range r.blocks {
		if b["kind"] == kind {
			out = append(out, b)
		}
	}
	return out
}

func collect(t *testing.T, run func(out rank.Output) error) *result {
	t.Helper()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	err := run(&rank.JSONL{W: w})
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	r := &result{raw: buf.String(), err: err}
	in := wire.NewReader(strings.NewReader(r.raw))
	for {
		raw, err := in.Next()
		if errors.Is(err, io.EOF) {
			return r
		}
		if err != nil {
			t.Fatal(err)
		}
		r.blocks = append(r.blocks, raw.Obj)
	}
}

func request(op string, args evidence.Object) rank.Request {
	return rank.Request{Operation: op, Args: args, Decode: decode.Options{Specs: registry.Formats()}}
}

func paths(t *testing.T, req rank.Request, ps ...string) *result {
	t.Helper()
	return collect(t, func(out rank.Output) error { return rank.Paths(context.Background(), req, ps, out) })
}

func streamOf(t *testing.T, req rank.Request, input string) *result {
	t.Helper()
	return collect(t, func(out rank.Output) error {
		return rank.Stream(context.Background(), req, wire.NewReader(strings.NewReader(input)), out)
	})
}

// decoded is what flameox-decode writes for the paths.
func decoded(t *testing.T, ps ...string) string {
	t.Helper()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	r := &decode.Run{Opts: decode.Options{Specs: registry.Formats()}}
	for _, p := range ps {
		if err := r.Path(context.Background(), p, decode.StreamTarget{W: w}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
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

func failureOf(t *testing.T, err error, code evidence.Code) *evidence.Failure {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	return f
}

// Ranking explicit paths in process gives what ranking their decoded
// stream gives, block for block: the typed rows, the tables' ids and the
// artifacts' ids completed in one read.
func TestPathsMatchStream(t *testing.T) {
	for _, c := range []struct {
		name  string
		req   rank.Request
		paths []string
	}{
		{"v8 hotspots", request("", evidence.Object{"top": int64(5)}), []string{fixture("v8", "hotspot.cpuprofile")}},
		{"two profiles", request("", nil), []string{fixture("v8", "recursive-main.cpuprofile"), fixture("v8", "recursive-worker.cpuprofile")}},
		{"perf edges", request("summarize_cpu_caller_edges", evidence.Object{"top": int64(5)}), []string{fixture("perf", "hot.perf.txt")}},
		{"py-spy thread", request("", evidence.Object{"thread": `Thread 32482 "MainThread"`}), []string{fixture("speedscope", "pyspy-0.4.1-two-threads.speedscope.json")}},
		{"v8 recursion edges", request("summarize_cpu_caller_edges", nil), []string{fixture("v8", "fib.cpuprofile")}},
		{"pytest failures", request("", nil), []string{fixture("pytest-events", "suite.pytest-events.jsonl")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := paths(t, c.req, c.paths...)
			if got.err != nil {
				t.Fatal(got.err)
			}
			want := streamOf(t, c.req, decoded(t, c.paths...))
			if want.err != nil {
				t.Fatal(want.err)
			}
			if got.raw != want.raw {
				t.Fatalf("in process:\n%s\nfrom the stream:\n%s", got.raw, want.raw)
			}
			arts := got.all(evidence.KindArtifact)
			if len(arts) != len(c.paths) {
				t.Fatalf("%d artifacts passed for %d paths", len(arts), len(c.paths))
			}
			tb := got.all(evidence.KindTable)
			if len(tb) == 0 {
				t.Fatalf("no result: %s", got.kinds())
			}
			ids := tb[0]["artifact_ids"].([]any)
			for i, p := range c.paths {
				if arts[i]["artifact_id"] != sha(t, p) {
					t.Fatalf("artifact %d: %v", i, arts[i]["artifact_id"])
				}
				found := false
				for _, id := range ids {
					found = found || id == sha(t, p)
				}
				if !found {
					t.Fatalf("result header artifact_ids %v lack %s", ids, p)
				}
			}
		})
	}
}

func bigCopy(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "big."+filepath.Base(src))
	if err := os.WriteFile(p, bytes.Repeat(b, (2<<20)/len(b)+1), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An artifact whose decoder emits while reading is held until its digest
// is known, then ranked with its final ids, exactly as its decoded stream
// ranks.
func TestPathsHeldArtifact(t *testing.T) {
	big := bigCopy(t, fixture("observations", "go.observations.jsonl"))
	req := request("summarize_observations", nil)
	got := paths(t, req, big)
	want := streamOf(t, req, decoded(t, big))
	if got.err != nil || want.err != nil {
		t.Fatal(got.err, want.err)
	}
	if got.raw != want.raw {
		gl, wl := strings.Split(got.raw, "\n"), strings.Split(want.raw, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d differs:\nin process:  %.3000s\nfrom stream: %.3000s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines in process, %d from the stream", len(gl), len(wl))
	}
	if !strings.Contains(got.raw, `"values":{"artifact_id":"`+sha(t, big)+`"`) {
		t.Fatalf("result rows do not name the artifact: %.500s", got.raw)
	}
}

// Held rows mean in process what typed rows mean: an integer beyond the
// exact double range stays a number (the block stream carries it as a
// string, which the observations projection does not count as numeric).
func TestHeldRowsKeepNumbers(t *testing.T) {
	big := bigCopy(t, fixture("observations", "python.observations.jsonl"))
	r := paths(t, request("summarize_observations", evidence.Object{"name_glob": "dataset_rows"}), big)
	if r.err != nil {
		t.Fatal(r.err)
	}
	rows := r.all(evidence.KindRow)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	v := rows[0]["values"].(evidence.Object)
	if v["count"] == json.Number("0") || fmt.Sprint(v["numeric_count"]) != fmt.Sprint(v["count"]) {
		t.Fatalf("dataset_rows: count %v, numeric_count %v", v["count"], v["numeric_count"])
	}
}

// The operation, its arguments and their fit with every format are checked
// before anything is decoded or passed on.
func TestChecksBeforeDecoding(t *testing.T) {
	hotspot := fixture("v8", "hotspot.cpuprofile")
	for _, c := range []struct {
		name  string
		req   rank.Request
		paths []string
		code  evidence.Code
	}{
		{"metric the format lacks", request("", evidence.Object{"metric": "cumulative"}), []string{hotspot}, evidence.CodeInvalidArgument},
		{"unknown operation", request("nope", nil), []string{hotspot}, evidence.CodeInvalidArgument},
		{"unknown argument", request("", evidence.Object{"nope": int64(1)}), []string{hotspot}, evidence.CodeInvalidArgument},
		{"format the operation does not take", request("summarize_failures", nil), []string{hotspot}, evidence.CodeUnsupportedFormat},
		{"no paths", request("", nil), nil, evidence.CodeInvalidArgument},
		{"missing path", request("", nil), []string{hotspot, filepath.Join(t.TempDir(), "missing.cpuprofile")}, evidence.CodeIOFailure},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := paths(t, c.req, c.paths...)
			failureOf(t, r.err, c.code)
			if len(r.blocks) != 0 {
				t.Fatalf("wrote %s before the check", r.kinds())
			}
		})
	}
	// No format matches: the failure names the artifact by its digest.
	blob := filepath.Join(t.TempDir(), "blob.bin")
	if err := os.WriteFile(blob, []byte{0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	f := failureOf(t, paths(t, request("", nil), blob).err, evidence.CodeUnsupportedFormat)
	if f.Location.ArtifactID != sha(t, blob) {
		t.Fatalf("location %+v", f.Location)
	}
}

// An upstream failure is passed through in order, the result is still
// written from what arrived, and the command exits with that failure.
func TestUpstreamFailure(t *testing.T) {
	upstream := evidence.Failf(evidence.CodeCaptureFailed, "the workload exited 1")
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	if err := w.Write(upstream); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	input := buf.String() + decoded(t, fixture("v8", "hotspot.cpuprofile"))
	r := streamOf(t, request("", nil), input)
	if f := rank.Upstream(r.err); f == nil || f.Code != evidence.CodeCaptureFailed {
		t.Fatalf("got %v", r.err)
	}
	if !strings.HasPrefix(r.kinds(), "failure artifact table row") {
		t.Fatalf("blocks %s", r.kinds())
	}
	// Only a failure: nothing to rank, and still the upstream failure.
	r = streamOf(t, request("", nil), buf.String())
	if f := rank.Upstream(r.err); f == nil || r.kinds() != "failure" {
		t.Fatalf("got %v with %s", r.err, r.kinds())
	}
	// Nothing at all is an argument error of this stage, not upstream.
	r = streamOf(t, request("", nil), "")
	if rank.Upstream(r.err) != nil {
		t.Fatal("empty input reported as upstream")
	}
	failureOf(t, r.err, evidence.CodeInvalidArgument)

	// In process, a failed artifact is passed on with its failure and
	// the others are ranked.
	bad := filepath.Join(t.TempDir(), "bad.cpuprofile")
	if err := os.WriteFile(bad, []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},{"id":2,"callFrame":{"functionName":"f"`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = paths(t, request("", nil), bad, fixture("v8", "hotspot.cpuprofile"))
	f := rank.Upstream(r.err)
	if f == nil || f.Code != evidence.CodeDecodeFailure || f.Location.ArtifactID != sha(t, bad) {
		t.Fatalf("got %v", r.err)
	}
	if !strings.HasPrefix(r.kinds(), "artifact failure artifact table row") {
		t.Fatalf("blocks %s", r.kinds())
	}
}

func TestStreamErrors(t *testing.T) {
	input := decoded(t, fixture("v8", "hotspot.cpuprofile"))
	lines := strings.SplitAfter(input, "\n")
	// Rows without their header (drop the table line).
	var noHeader []string
	for _, l := range lines {
		if !strings.Contains(l, `"kind":"table"`) {
			noHeader = append(noHeader, l)
		}
	}
	r := streamOf(t, request("", nil), strings.Join(noHeader, ""))
	if r.err == nil {
		t.Fatal("rows without a header were accepted")
	}
	// The same table twice.
	f := failureOf(t, streamOf(t, request("", nil), input+input).err, evidence.CodeInvalidArgument)
	if f.Location.Path != "<stdin>" || f.Location.Line == 0 {
		t.Fatalf("location %+v", f.Location)
	}
	// The same file twice in process: the same table ids, refused alike.
	p := fixture("v8", "hotspot.cpuprofile")
	if f := rank.Upstream(paths(t, request("", nil), p, p).err); f == nil || f.Code != evidence.CodeInvalidArgument {
		t.Fatalf("the same artifact twice: %v", f)
	}
}

// Unrecorded formats for a recorded artifact are refused before reading.
func TestArtifactFromBlockIntegrity(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.cpuprofile")
	b, _ := os.ReadFile(fixture("v8", "hotspot.cpuprofile"))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := formats.ArtifactFromPath(p, "cpu-profile")
	if err != nil {
		t.Fatal(err)
	}
	a.Format = "v8-cpuprofile"
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.Write(a)
	w.Flush()
	// The file changes after its artifact was recorded.
	if err := os.WriteFile(p, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ow := wire.NewWriter(&out)
	run := &decode.Run{Opts: decode.Options{Specs: registry.Formats()}}
	if err := run.Stream(context.Background(), wire.NewReader(&buf), decode.StreamTarget{W: ow}, func(raw *evidence.Raw) error { return ow.Write(raw) }); err != nil {
		t.Fatal(err)
	}
	ow.Flush()
	if f := run.First(); f == nil || f.Code != evidence.CodeIntegrity {
		t.Fatalf("first failure %v", f)
	}
	r := streamOf(t, request("", nil), out.String())
	if f := rank.Upstream(r.err); f == nil || f.Code != evidence.CodeIntegrity {
		t.Fatalf("got %v", r.err)
	}
}

// JSONL writes only what reads back as the declared schema's rows: a
// header off its schema, or a row off it, is an INTERNAL failure, and
// nothing of the refused block is written.
func TestJSONLHoldsTheSchema(t *testing.T) {
	frames := func() *evidence.Table {
		h := table.CPUHotspots.Header("samples")
		h.ID = "r"
		return h
	}
	row := func() evidence.Object {
		o, _ := table.CPUHotspots.Values(&table.Hotspot{Rank: 1, FrameSite: table.FrameSite{FrameID: "f", Symbolization: table.Symbolized}}, "")
		return o
	}
	for name, c := range map[string]struct {
		header func() *evidence.Table
		row    func(evidence.Object)
	}{
		"undeclared table": {func() *evidence.Table { h := frames(); h.Name = "no.such_tables"; return h }, nil},
		"extra column": {func() *evidence.Table {
			h := frames()
			h.Columns = append(h.Columns, evidence.Column{Name: "extra", Type: evidence.TypeString})
			return h
		}, nil},
		"unit left to the table, unstated": {func() *evidence.Table { return table.CPUHotspots.Header("") }, nil},
		"row lacking a column":             {frames, func(o evidence.Object) { delete(o, "rank") }},
		"row with another column":          {frames, func(o evidence.Object) { o["extra"] = "x" }},
		"row of a wrong type":              {frames, func(o evidence.Object) { o["rank"] = "one" }},
	} {
		var buf bytes.Buffer
		j := &rank.JSONL{W: wire.NewWriter(&buf)}
		err := j.Begin(c.header())
		if c.row != nil {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := j.Row(row()); err != nil {
				t.Fatalf("%s: a good row: %v", name, err)
			}
			j.W.Flush()
			buf.Reset()
			o := row()
			c.row(o)
			err = j.Row(o)
		}
		j.W.Flush()
		if f := evidence.AsFailure(err, ""); err == nil || f.Code != evidence.CodeInternal || buf.Len() != 0 {
			t.Errorf("%s: %v, wrote %q", name, err, buf.String())
		}
	}
}

// A V8 function name longer than a block line (30 MB) used to make
// decode | rank fail where rank FILE succeeded: the decoder bounds row
// values (max_value_bytes), marks the cut, and both paths agree.
func TestLongValuesPassTheStream(t *testing.T) {
	name := strings.Repeat("f", 30<<20)
	doc := `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},` +
		`{"id":2,"callFrame":{"functionName":"` + name + `","scriptId":"1","url":"a.js","lineNumber":0,"columnNumber":0}}],` +
		`"startTime":0,"endTime":3,"samples":[2,2,2],"timeDeltas":[1,1,1]}`
	path := filepath.Join(t.TempDir(), "long.cpuprofile")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"", "summarize_cpu_caller_edges"} {
		req := request(op, nil)
		got := paths(t, req, path)
		if got.err != nil {
			t.Fatal(got.err)
		}
		want := streamOf(t, req, decoded(t, path))
		if want.err != nil {
			t.Fatalf("decode | rank: %v", want.err)
		}
		if got.raw != want.raw {
			t.Fatalf("%s: in process and from the stream differ", op)
		}
		sum := got.all(evidence.KindSummary)
		res := sum[len(sum)-1]
		if res["complete"] != false || !strings.Contains(fmt.Sprint(res["limitations"]), "max_value_bytes") {
			t.Fatalf("%s: summary %v", op, res)
		}
		for _, r := range got.all(evidence.KindRow) {
			for _, col := range []string{"function", "callee_function"} {
				if v, _ := r["values"].(evidence.Object)[col].(string); len(v) > formats.MaxValueBytes+64 {
					t.Fatalf("%s: %s holds %d bytes", op, col, len(v))
				}
			}
		}
	}
}

// decodedBlocks is what flameox-decode writes for artifact blocks.
func decodedBlocks(t *testing.T, arts ...*evidence.Artifact) (string, *decode.Run) {
	t.Helper()
	var in bytes.Buffer
	iw := wire.NewWriter(&in)
	for _, a := range arts {
		if err := iw.Write(a); err != nil {
			t.Fatal(err)
		}
	}
	iw.Flush()
	var out bytes.Buffer
	ow := wire.NewWriter(&out)
	run := &decode.Run{Opts: decode.Options{Specs: registry.Formats()}}
	if err := run.Stream(context.Background(), wire.NewReader(&in), decode.StreamTarget{W: ow}, func(raw *evidence.Raw) error { return ow.Write(raw) }); err != nil {
		t.Fatal(err)
	}
	ow.Flush()
	return out.String(), run
}

// TestEqualBytesTwoRoles: a process capture whose stdout and stderr hold
// the same bytes (both empty, typically) gives two tables that must not
// collide ("appears twice", exit 2) and must say which is which.
func TestEqualBytesTwoRoles(t *testing.T) {
	dir := t.TempDir()
	var arts []*evidence.Artifact
	for _, role := range []string{"console-stdout", "console-stderr"} {
		p := filepath.Join(dir, role)
		if err := os.WriteFile(p, []byte("same\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := formats.ArtifactFromPath(p, role)
		if err != nil {
			t.Fatal(err)
		}
		a.Format = "text"
		arts = append(arts, a)
	}
	input, run := decodedBlocks(t, arts...)
	if f := run.First(); f != nil {
		t.Fatal(f)
	}
	r := streamOf(t, request("", nil), input)
	if r.err != nil {
		t.Fatalf("ranking stdout and stderr of equal bytes: %v", r.err)
	}
	tables := r.all(evidence.KindTable)
	if len(tables) != 2 {
		t.Fatalf("%d result tables: %s", len(tables), r.kinds())
	}
	for i, role := range []string{"console-stdout", "console-stderr"} {
		if id, _ := tables[i]["table_id"].(string); !strings.Contains(id, "."+role+".") {
			t.Errorf("result table %q does not say it is %s", id, role)
		}
	}
}

// TestSummaryContradictsStream: a summary that claims rows the stream did
// not carry, or completeness its counts deny, is refused by rank as
// preserve refuses it (one validator, wire.Tables), not ranked as complete.
func TestSummaryContradictsStream(t *testing.T) {
	input := decoded(t, fixture("v8", "hotspot.cpuprofile"))
	lines := strings.SplitAfter(input, "\n")
	// Keep the first frames table with only its first row.
	var kept []string
	var tableID string
	rows := 0
	for _, l := range lines {
		switch {
		case strings.Contains(l, `"kind":"table"`) && tableID == "":
			v, _ := evidence.ParseValue([]byte(l), 0)
			tableID = v.(evidence.Object)["table_id"].(string)
			kept = append(kept, l)
		case strings.Contains(l, `"kind":"row"`) && strings.Contains(l, `"table_id":"`+tableID+`"`):
			if rows++; rows == 1 {
				kept = append(kept, l)
			}
		case strings.Contains(l, `"kind":"artifact"`):
			kept = append(kept, l)
		}
	}
	forged := func(observed, emitted int64) string {
		var buf bytes.Buffer
		w := wire.NewWriter(&buf)
		w.Write(&evidence.Summary{TableID: tableID, RowsObserved: observed, RowsEmitted: emitted, Complete: true})
		w.Flush()
		return strings.Join(kept, "") + buf.String()
	}
	for _, c := range []struct {
		name              string
		observed, emitted int64
	}{
		{"rows claimed but absent", 5, 5},
		{"complete with rows unobserved", 5, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := streamOf(t, request("", nil), forged(c.observed, c.emitted))
			f := failureOf(t, r.err, evidence.CodeInvalidArgument)
			if f.Location.Path != "<stdin>" || f.Location.Line != len(kept)+1 {
				t.Errorf("location %+v, want the summary's line %d", f.Location, len(kept)+1)
			}
			if len(r.all(evidence.KindTable)) != 0 {
				t.Errorf("a result was ranked from a contradicted summary: %s", r.kinds())
			}
		})
	}
	// The honest summary passes.
	if r := streamOf(t, request("", nil), forged(1, 1)); r.err != nil {
		t.Fatalf("honest summary: %v", r.err)
	}
}

// TestFirstFailureDecides: ranking a path whose only artifact fails to
// decode exits with that DECODE_FAILURE, as the piped form does, not with
// an INVALID_ARGUMENT "no decoded table" added behind it.
func TestFirstFailureDecides(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.cpuprofile")
	if err := os.WriteFile(bad, []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},{"id":2,"callFrame":{"functionName":"f"`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := paths(t, request("", nil), bad)
	if f := rank.Upstream(r.err); f == nil || f.Code != evidence.CodeDecodeFailure {
		t.Fatalf("in process: %v", r.err)
	}
	if fs := r.all(evidence.KindFailure); len(fs) != 1 {
		t.Fatalf("%d failure blocks, want the decode failure alone: %s", len(fs), r.raw)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	run := &decode.Run{Opts: decode.Options{Specs: registry.Formats()}}
	if err := run.Path(context.Background(), bad, decode.StreamTarget{W: w}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if f := rank.Upstream(streamOf(t, request("", nil), buf.String()).err); f == nil || f.Code != evidence.CodeDecodeFailure {
		t.Fatalf("piped: %v", f)
	}
}

// TestUnverifiedRowsNotRanked (9.4): an artifact block that names another
// file of the recorded size decodes, fails verification at the end (exit
// 9), and rank presents none of its rows as a result.
func TestUnverifiedRowsNotRanked(t *testing.T) {
	dir := t.TempDir()
	recorded := filepath.Join(dir, "recorded.txt")
	other := filepath.Join(dir, "passwd")
	if err := os.WriteFile(recorded, []byte("public:x:1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("secret:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := formats.ArtifactFromPath(recorded, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	a.Path, a.Format = other, "text"
	input, run := decodedBlocks(t, a)
	if f := run.First(); f == nil || f.Code != evidence.CodeIntegrity {
		t.Fatalf("decode: %v", f)
	}
	r := streamOf(t, request("", nil), input)
	if f := rank.Upstream(r.err); f == nil || f.Code != evidence.CodeIntegrity {
		t.Fatalf("rank: %v", r.err)
	}
	for _, tb := range r.all(evidence.KindTable) {
		if tb["operation"] != "decode" {
			t.Fatalf("a result was ranked from unverified bytes: %s", r.raw)
		}
	}
	if strings.Contains(r.raw, `"table_id":"rank.`) {
		t.Fatalf("result rows of unverified bytes: %s", r.raw)
	}
}

// TestEarlierFailureSetsStatus (8.4): when rank fails itself after an
// upstream failure came in, the upstream failure (the first) sets the
// status; rank's own failure is still written as its block and reported.
func TestEarlierFailureSetsStatus(t *testing.T) {
	upstream := evidence.Failf(evidence.CodeCaptureFailed, "the workload exited 1")
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	w.Write(upstream)
	w.Flush()
	input := buf.String() + `{"kind":"row","schema":"flameox/1","table_id":"nope","values":{}}` + "\n"
	r := streamOf(t, request("", nil), input)
	if f := rank.Upstream(r.err); f == nil || f.Code != evidence.CodeCaptureFailed || !rank.Passed(r.err) {
		t.Fatalf("status from %v, want the upstream CAPTURE_FAILED", r.err)
	}
	own := rank.Own(r.err)
	if own == nil || own.Code != evidence.CodeInvalidArgument {
		t.Fatalf("own failure %v", own)
	}
	if fs := r.all(evidence.KindFailure); len(fs) != 2 || fs[1]["code"] != string(evidence.CodeInvalidArgument) {
		t.Fatalf("failure blocks %v", fs)
	}
}
