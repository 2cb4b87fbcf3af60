package kernelvalidation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	kv "github.com/flameox/flameox/pkg/kernelvalidation"
)

func decode(t testing.TB, data []byte, opts evidence.Object) (*formatstest.Table, error) {
	t.Helper()
	s, err := formatstest.Decode(Spec, "r.kernel-validation.jsonl", data, opts, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		return nil, err
	}
	return s.Table("validation.receipts"), nil
}

// ownCount reads each line with encoding/json, independently of the
// decoder, and counts statuses.
func ownCount(t *testing.T, data []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r struct{ Status string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out[r.Status]++
	}
	return out
}

func python(t *testing.T) string {
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = "../../../.venv"
	}
	if p, err := filepath.Abs(filepath.Join(venv, "bin", "python")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 (or the project venv) to run the Python SDK")
	}
	return p
}

// TestPythonSDK runs a validation script through the Python SDK and
// decodes what it wrote.
func TestPythonSDK(t *testing.T) {
	runDemo(t, python(t))
}

// TestPythonSDKNumpy runs it with an interpreter that has numpy (opt-in:
// FLAMEOX_NUMPY_PYTHON names it; CI installs no numpy), so compare takes
// its numpy path.
func TestPythonSDKNumpy(t *testing.T) {
	py := os.Getenv("FLAMEOX_NUMPY_PYTHON")
	if py == "" {
		t.Skip("set FLAMEOX_NUMPY_PYTHON to a python with numpy to test the SDK's numpy path")
	}
	console := runDemo(t, py)
	if !strings.HasPrefix(console, "numpy yes") {
		t.Errorf("%s did not import numpy: %s", py, console)
	}
}

func runDemo(t *testing.T, py string) string {
	dir := t.TempDir()
	receipts, console := filepath.Join(dir, "r.kernel-validation.jsonl"), filepath.Join(dir, "console.txt")
	sdk, _ := filepath.Abs("../../../sdk/python")
	cmd := exec.Command(py, "../../../testdata/kernel-validation/validate_demo.py", receipts, console)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+sdk, "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, _ := os.ReadFile(receipts)
	tb, err := decode(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkDemo(t, tb, data)
	row := tb.Rows[3]
	cons, _ := os.ReadFile(console)
	if row["console_path"] != console || row["console_bytes"] != int64(len(cons)) || row["expected"] != json.Number("1.0") {
		t.Errorf("%v (console %d bytes)", row, len(cons))
	}
	return string(cons)
}

func checkDemo(t *testing.T, tb *formatstest.Table, data []byte) {
	t.Helper()
	want := ownCount(t, data)
	if len(tb.Rows) != 5 || !tb.Summary.Complete {
		t.Fatalf("%d rows %+v", len(tb.Rows), tb.Summary)
	}
	for _, s := range kv.Statuses {
		if got, _ := evidence.AsInt(tb.Summary.Metrics[s].Value); got != want[s] {
			t.Errorf("%s: %d, the independent count %d", s, got, want[s])
		}
	}
	pass, fail := tb.Rows[0], tb.Rows[1]
	if pass["status"] != "pass" || pass["case_id"] != "softmax/64" || pass["atol"] != 1e-6 || pass["rtol"] != 1e-4 ||
		pass["device"] != "cpu" || pass["producer"] != "validate_demo" {
		t.Errorf("%v", pass)
	}
	if d, ok := pass["expected"].(evidence.Object); !ok || !strings.HasPrefix(d["digest"].(string), "sha256:") {
		t.Errorf("expected is a digest: %v", pass["expected"])
	}
	if fail["status"] != "fail" || fail["reason"] != "1 of 64 elements outside the tolerance" || fail["max_abs_error"].(float64) < 1e-4 {
		t.Errorf("%v", fail)
	}
	if tb.Rows[2]["status"] != "unsupported" || tb.Rows[4]["status"] != "inconclusive" {
		t.Errorf("%v %v", tb.Rows[2], tb.Rows[4])
	}
}

func TestFixture(t *testing.T) {
	data := formatstest.Read(t, "kernel-validation/demo.kernel-validation.jsonl")
	if Spec.Sniff(data) != formats.Yes {
		t.Error("not recognized by content")
	}
	tb, err := decode(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkDemo(t, tb, data)
}

// TestGoWriter decodes what the Go writer writes.
func TestGoWriter(t *testing.T) {
	dir := t.TempDir()
	cpath := filepath.Join(dir, "console.txt")
	if err := os.WriteFile(cpath, []byte("max err 0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "r.jsonl")
	w, err := kv.Open(path, kv.Producer{Name: "go-check", Version: "2"})
	if err != nil {
		t.Fatal(err)
	}
	r := kv.CompareFloat64("axpy/3", []float64{1, 2, 3}, []float64{1, 2, 3.1}, kv.Tolerance{Atol: 1e-6, Rtol: 1e-3})
	r.Device = "cuda:0"
	if r.Console, err = kv.ConsoleFile(cpath); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []kv.Receipt{r, {Case: "axpy/0", Status: kv.Pass, Expected: int64(0), Observed: 0}} {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, _ := os.ReadFile(path)
	tb, err := decode(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 2 || tb.Rows[0]["status"] != "fail" || tb.Rows[0]["console_bytes"] != int64(12) ||
		tb.Rows[0]["producer_version"] != "2" || tb.Rows[0]["dtype"] != "float64" || tb.Rows[1]["observed"] != json.Number("0") {
		t.Errorf("%v", tb.Rows)
	}
}

func TestIncompleteAndMalformed(t *testing.T) {
	data := formatstest.Read(t, "kernel-validation/demo.kernel-validation.jsonl")
	cut := data[:len(data)-40]
	tb, err := decode(t, cut, nil)
	if err != nil || tb.Summary.Complete || len(tb.Rows) != 4 {
		t.Fatalf("cut: %v %+v", err, tb)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = strings.Replace(lines[2], `"status":"unsupported"`, `"status":"skipped"`, 1)
	_, err = decode(t, []byte(strings.Join(lines, "")), nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || f.Location.Line != 3 {
		t.Errorf("bad status: %v", err)
	}
	long := strings.Replace(lines[0], `"reason":null`, `"reason":"`+strings.Repeat("é", 9000)+`"`, 1)
	if _, err := decode(t, []byte(long), nil); !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
		t.Errorf("a line over the bound: %v", err)
	}
	empty, err := decode(t, nil, nil)
	if err != nil || len(empty.Summary.Limitations) < 2 {
		t.Errorf("empty: %v %+v", err, empty)
	}
	bounded, err := decode(t, data, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil || bounded.Summary.Complete {
		t.Errorf("value bound: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, b := range formatstest.Seeds(f, "kernel-validation", 0) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := formatstest.Decode(Spec, "f.kernel-validation.jsonl", data, nil, nil)
		formatstest.CheckInvariants(t, s, err)
	})
}

func BenchmarkDecode(b *testing.B) {
	one := formatstest.Read(b, "kernel-validation/demo.kernel-validation.jsonl")
	var buf bytes.Buffer
	for buf.Len() < 8<<20 {
		buf.Write(one)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, Spec, &evidence.Artifact{Path: "/virtual/r.kernel-validation.jsonl", Size: int64(len(data))}, bytes.NewReader(data), nil)
		if err := Spec.Decoder.Decode(b.Context(), in, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
