package sanitizer

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

const testdata = "../../../testdata/sanitizer"

func decodeBytes(t testing.TB, name string, data []byte, opts evidence.Object, wrap func(io.Reader) io.Reader) *formatstest.Table {
	t.Helper()
	s, err := formatstest.Decode(Spec, name, data, opts, wrap)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatal(err)
	}
	return s.Table("gpu.sanitizer_findings")
}

// ownCount is an independent count of a report: records are the
// prefixed lines indented by at most two spaces that are not the banner
// or a summary.
func ownCount(t *testing.T, data []byte) int {
	re := regexp.MustCompile(`^\s*========= {1,2}(\S.*)$`)
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil || m[1] == "COMPUTE-SANITIZER" || strings.Contains(m[1], "SUMMARY:") {
			continue
		}
		n++
	}
	return n
}

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "*.txt"))
	logs, _ := filepath.Glob(filepath.Join(testdata, "*.log"))
	files = append(files, logs...)
	if err != nil || len(files) < 9 {
		t.Fatalf("%v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tb := decodeBytes(t, filepath.Base(f), data, nil, nil)
			if want := ownCount(t, data); len(tb.Rows) != want {
				t.Errorf("%d rows, the independent count finds %d records", len(tb.Rows), want)
			}
			for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader} {
				again := decodeBytes(t, filepath.Base(f), data, nil, wrap)
				if formatstest.Canonical(t, again.Rows) != formatstest.Canonical(t, tb.Rows) {
					t.Errorf("rows differ through %T", wrap)
				}
			}
		})
	}
}

func TestMemcheck(t *testing.T) {
	tb := decodeBytes(t, "memcheck-demo.txt", formatstest.Read(t, "sanitizer/memcheck-demo.txt"), nil, nil)
	if !tb.Summary.Complete || len(tb.Rows) != 2 {
		t.Fatalf("%+v", tb.Summary)
	}
	r := tb.Rows[1]
	want := evidence.Object{"kind": "invalid_access", "tool": "memcheck", "access": "write", "memory_space": "__global__",
		"size_bytes": int64(4), "kernel": "out_of_bounds_function()", "pc": "0xb0", "file": "memcheck_demo.cu",
		"source_line": int64(39), "address": "0x87654320", "thread_x": int64(0), "block_x": int64(0), "host_backtrace": "kernel launch time"}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s = %v, want %v", k, r[k], v)
		}
	}
	dev := r["device_frames"].([]any)[0].(evidence.Object)
	host := r["host_frames"].([]any)
	if dev["function"] != "out_of_bounds_kernel()" || dev["line"] != int64(44) || len(host) != 2 ||
		host[0].(evidence.Object)["function"] != "run_out_of_bounds()" || host[0].(evidence.Object)["offset"] != "0xadb6" {
		t.Errorf("frames %v %v", dev, host)
	}
	if v, _ := evidence.AsInt(tb.Summary.Metrics["errors_reported"].Value); v != 2 {
		t.Errorf("summary %v", tb.Summary.Metrics)
	}
}

// TestRealNoGPU: the real tool's report of a run that never reached CUDA
// is two tool messages and no summary: incomplete, not clean.
func TestRealNoGPU(t *testing.T) {
	tb := decodeBytes(t, "r.log", formatstest.Read(t, "sanitizer/real-2026.3-no-gpu.sanitizer.log"), nil, nil)
	if tb.Summary.Complete || len(tb.Rows) != 2 || tb.Rows[0]["kind"] != "tool_message" || metric(tb, "errors_displayed") != 0 {
		t.Fatalf("%v %+v", tb.Rows, tb.Summary)
	}
}

func TestToolOption(t *testing.T) {
	data := formatstest.Read(t, "sanitizer/guide-snippets.txt")
	tb := decodeBytes(t, "x.txt", data, evidence.Object{"tool": "racecheck"}, nil)
	for _, r := range tb.Rows {
		if r["tool"] != "racecheck" {
			t.Fatalf("%v", r)
		}
	}
	tb = decodeBytes(t, "x.txt", data, nil, nil)
	if tb.Rows[3]["kind"] != "api_error" || tb.Rows[3]["tool"] != nil || tb.Rows[3]["api"] != "cudaMemcpy" || tb.Rows[3]["api_result"] != int64(21) {
		t.Fatalf("an API error names no tool: %v", tb.Rows[3])
	}
}

// TestCoverage: omitted host stacks and records beyond the print limit are
// stated separately; a log cut inside a record is incomplete.
func TestCoverage(t *testing.T) {
	full := string(formatstest.Read(t, "sanitizer/memcheck-demo.txt"))
	noHost := regexp.MustCompile(`(?m)^=========     Saved host backtrace.*\n(=========         Host Frame:.*\n)*`).ReplaceAllString(full, "")
	tb := decodeBytes(t, "nohost.txt", []byte(noHost), nil, nil)
	if tb.Summary.Complete || metric(tb, "host_backtraces_omitted") != 2 || metric(tb, "errors_not_displayed") != 0 {
		t.Errorf("no host stacks: %+v", tb.Summary)
	}
	limited := strings.Replace(full, "ERROR SUMMARY: 2 errors", "ERROR SUMMARY: 250 errors", 1)
	tb = decodeBytes(t, "limited.txt", []byte(limited), nil, nil)
	if tb.Summary.Complete || metric(tb, "errors_not_displayed") != 248 || metric(tb, "host_backtraces_omitted") != 0 {
		t.Errorf("print limit: %+v", tb.Summary)
	}
	cut := full[:strings.Index(full, "Address 0x87654320")]
	tb = decodeBytes(t, "cut.txt", []byte(cut), nil, nil)
	if tb.Summary.Complete || len(tb.Rows) != 2 || len(tb.Summary.Limitations) < 2 {
		t.Errorf("cut mid-record: %+v", tb.Summary)
	}
}

func metric(tb *formatstest.Table, name string) int64 {
	n, _ := evidence.AsInt(tb.Summary.Metrics[name].Value)
	return n
}

func TestSniff(t *testing.T) {
	if sniff(formatstest.Read(t, "sanitizer/memcheck-demo.txt")) != formats.Yes {
		t.Error("memcheck report not recognized")
	}
	if sniff([]byte("hello\n========== not the prefix\n")) == formats.Yes {
		t.Error("claimed ordinary text")
	}
}

func TestValueBound(t *testing.T) {
	data := formatstest.Read(t, "sanitizer/racecheck-block-error.txt")
	full := decodeBytes(t, "r.txt", data, nil, nil)
	cut := decodeBytes(t, "r.txt", data, evidence.Object{formats.OptionValueBytes: int64(16)}, nil)
	if cut.Summary.Complete || metric(cut, "cut_values") == 0 || len(cut.Rows) != len(full.Rows) {
		t.Fatalf("%+v", cut.Summary)
	}
}

func FuzzDecode(f *testing.F) {
	for _, b := range formatstest.Seeds(f, "sanitizer", 0) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := formatstest.Decode(Spec, "f.txt", data, nil, nil)
		formatstest.CheckInvariants(t, s, err)
	})
}

func BenchmarkDecode(b *testing.B) {
	one := formatstest.Read(b, "sanitizer/memcheck-demo.txt")
	body := one[:bytes.Index(one, []byte("========= ERROR SUMMARY"))]
	var buf bytes.Buffer
	for buf.Len() < 8<<20 {
		buf.Write(body)
	}
	buf.WriteString("========= ERROR SUMMARY: 1 errors\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, Spec, &evidence.Artifact{Path: "/virtual/s.txt", Size: int64(len(data))}, bytes.NewReader(data), nil)
		if err := Spec.Decoder.Decode(b.Context(), in, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
