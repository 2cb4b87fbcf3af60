package kernelvalidation

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	r := Receipt{Producer: Producer{Name: "go-test", Version: "1"}, Case: "gemm/fp16/128", Status: Fail, Reason: "3 elements",
		Expected: DigestOf([]byte("abc")), Observed: 0.5, MaxAbsError: F(0.25), MaxRelError: F(1e-3),
		Tolerance: &Tolerance{Atol: 1e-5, Rtol: -1}, DType: "float16", Shape: []int64{128, 128}, Device: "cuda:0",
		Console: &Console{Path: "console.txt", SHA256: strings.Repeat("a", 64), Bytes: 12}, TS: 7, PID: 9}
	line, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(line), `{"schema":"flameox.kernel-validation","v":1,`) {
		t.Fatalf("%s", line)
	}
	got, err := ParseReceipt(line)
	if err != nil {
		t.Fatal(err)
	}
	if got.Case != r.Case || got.Status != Fail || got.Expected != r.Expected || got.Observed != json.Number("0.5") ||
		*got.MaxAbsError != 0.25 || got.Tolerance.Atol != 1e-5 || got.Tolerance.Rtol != -1 || len(got.Shape) != 2 ||
		*got.Console != *r.Console || got.TS != 7 || got.PID != 9 || got.Producer != r.Producer {
		t.Errorf("%+v", got)
	}
}

func TestRefused(t *testing.T) {
	ok := `{"schema":"flameox.kernel-validation","v":1,"producer":{"name":"p"},"case":"c","status":"pass","ts":1,"pid":2}`
	if _, err := ParseReceipt([]byte(ok)); err != nil {
		t.Fatalf("minimal receipt: %v", err)
	}
	for name, line := range map[string]string{
		"schema":       strings.Replace(ok, "kernel-validation", "kernel-validations", 1),
		"version":      strings.Replace(ok, `"v":1`, `"v":2`, 1),
		"status":       strings.Replace(ok, `"pass"`, `"ok"`, 1),
		"reason":       strings.Replace(ok, `"pass"`, `"inconclusive"`, 1),
		"unknown":      strings.Replace(ok, `"ts":1`, `"ts":1,"extra":1`, 1),
		"duplicate":    strings.Replace(ok, `"ts":1`, `"ts":1,"ts":1`, 1),
		"empty case":   strings.Replace(ok, `"case":"c"`, `"case":""`, 1),
		"long case":    strings.Replace(ok, `"case":"c"`, `"case":"`+strings.Repeat("x", MaxLabel+1)+`"`, 1),
		"bool ts":      strings.Replace(ok, `"ts":1`, `"ts":true`, 1),
		"negative":     strings.Replace(ok, `"ts":1`, `"ts":1,"max_abs_error":-1`, 1),
		"overflow":     strings.Replace(ok, `"ts":1`, `"ts":1,"max_abs_error":1e999`, 1),
		"bad digest":   strings.Replace(ok, `"ts":1`, `"ts":1,"expected":{"digest":"md5:00"}`, 1),
		"nested":       strings.Replace(ok, `"ts":1`, `"ts":1,"observed":[1,2]`, 1),
		"shape":        strings.Replace(ok, `"ts":1`, `"ts":1,"shape":[1.5]`, 1),
		"surrogate":    strings.Replace(ok, `"case":"c"`, `"case":"\ud800"`, 1),
		"trailing":     ok + "x",
		"no producer":  strings.Replace(ok, `"producer":{"name":"p"},`, "", 1),
		"console hash": strings.Replace(ok, `"ts":1`, `"ts":1,"console":{"path":"c","sha256":"AB","bytes":1}`, 1),
	} {
		if _, err := ParseReceipt([]byte(line)); err == nil {
			t.Errorf("%s: accepted %s", name, line)
		}
	}
}

func TestWriterRefusesAndWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Open(path, Producer{Name: "go-test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Receipt{Case: "c", Status: Pass, Observed: math.NaN()}); !errors.Is(err, ErrBounds) {
		t.Errorf("NaN: %v", err)
	}
	if err := w.Write(Receipt{Case: "c", Status: Unsupported}); !errors.Is(err, ErrBounds) {
		t.Errorf("no reason: %v", err)
	}
	if err := w.Write(Receipt{Case: "c\xff", Status: Pass}); !errors.Is(err, ErrBounds) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if err := w.Write(Receipt{Case: "c", Status: Pass, Observed: struct{}{}}); !errors.Is(err, ErrBounds) {
		t.Errorf("a struct: %v", err)
	}
	if err := w.Write(CompareFloat64("v", []float64{1, 2}, []float64{1, 2.1}, Tolerance{Atol: 0, Rtol: 0.01})); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Count(string(raw), "\n") != 1 {
		t.Fatalf("%s", raw)
	}
	r, err := ParseReceipt(raw)
	if err != nil || r.Status != Fail || r.Producer.Name != "go-test" || math.Abs(*r.MaxAbsError-0.1) > 1e-12 || r.PID == 0 || r.TS == 0 {
		t.Errorf("%+v %v", r, err)
	}
	var nilw *Writer
	if err := nilw.Write(Receipt{Case: "c", Status: Pass, Producer: Producer{Name: "p"}}); err != nil {
		t.Errorf("a nil writer validates and writes nothing: %v", err)
	}
}

func TestCompare(t *testing.T) {
	r := CompareFloat64("c", []float64{1, 0, 4}, []float64{1.0001, 0, 4}, Tolerance{Atol: 1e-8, Rtol: 1e-3})
	if r.Status != Pass || *r.MaxRelError != 0.00009999999999998899 && math.Abs(*r.MaxRelError-1e-4) > 1e-12 {
		t.Errorf("%+v", r)
	}
	if r := CompareFloat64("c", []float64{1}, []float64{math.NaN()}, Tolerance{Atol: 1, Rtol: 1}); r.Status != Fail || !strings.Contains(r.Reason, "NaN") {
		t.Errorf("%+v", r)
	}
	if r := CompareFloat64("c", []float64{1}, nil, Tolerance{}); r.Status != Fail {
		t.Errorf("%+v", r)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "")
	if w, err := FromEnv(Producer{Name: "p"}); w != nil || err != nil {
		t.Errorf("unset: %v %v", w, err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	t.Setenv(EnvVar, path)
	w, err := FromEnv(Producer{Name: "p"})
	if err != nil || w == nil {
		t.Fatal(err)
	}
	if err := w.Write(Receipt{Case: "c", Status: Pass}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Producer{}); !errors.Is(err, ErrBounds) {
		t.Errorf("a writer needs a producer: %v", err)
	}
}
