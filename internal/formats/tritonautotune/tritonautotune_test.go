package tritonautotune

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

const testdata = "../../../testdata/triton"

func cacheFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdata, "cache", "*", "*"+Suffix))
	if err != nil || len(files) != 3 {
		t.Fatalf("%v %v", files, err)
	}
	return files
}

func decodeFile(t testing.TB, path string) *formatstest.Table {
	t.Helper()
	s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatal(err)
	}
	return s.Table("gpu.autotune_configs")
}

// TestBestEqualsPython: the best configuration is the one Python's
// builtins.min picks over the same file, as Triton does.
func TestBestEqualsPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	for _, f := range cacheFiles(t) {
		out, err := exec.Command(py, filepath.Join(testdata, "best.py"), f).Output()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		tb := decodeFile(t, f)
		var best []int64
		for _, r := range tb.Rows {
			if r["best"] == true {
				best = append(best, r["config_index"].(int64))
			}
		}
		if len(best) != 1 || best[0] != want {
			t.Errorf("%s: best %v, Python picks %d", f, best, want)
		}
	}
}

func TestRows(t *testing.T) {
	var mm *formatstest.Table
	for _, f := range cacheFiles(t) {
		if strings.HasSuffix(f, "matmul_kernel"+Suffix) {
			mm = decodeFile(t, f)
		}
	}
	if mm == nil || len(mm.Rows) != 4 || !mm.Summary.Complete {
		t.Fatal("matmul cache")
	}
	r := mm.Rows[1]
	if r["kernel"] != "matmul_kernel" || r["num_warps"] != int64(8) || r["num_stages"] != int64(4) || r["maxnreg"] != int64(128) ||
		r["best"] != true || r["first_ms"] != 0.498 || r["kwargs"].(evidence.Object)["BLOCK_N"] != int64(256) {
		t.Fatalf("%v", r)
	}
	if mm.Rows[2]["num_ctas"] != int64(2) {
		t.Fatalf("%v", mm.Rows[2])
	}
	failed := mm.Rows[3]
	inf := evidence.Object{"type": "double", "value": "Infinity"}
	ts := failed["timings"].([]any)
	if failed["failed"] != true || failed["first_ms"] != nil || len(ts) != 3 || formatstest.Canonical(t, ts[0]) != formatstest.Canonical(t, inf) {
		t.Fatalf("the +Infinity sentinel is kept: %v", failed)
	}
	if k := r["tuning_key"].([]any); len(k) != 6 || k[0] != int64(4096) || k[3] != "torch.float16" {
		t.Fatalf("key %v", k)
	}
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "k"+Suffix)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTiesAndDuplicates: equal medians are decided by the next quantile;
// a repeated config takes its later timing at its first place.
func TestTiesAndDuplicates(t *testing.T) {
	cfg := func(b int) string {
		return `{"kwargs": {"B": ` + strconv.Itoa(b) + `}, "num_warps": 4, "num_ctas": 1, "num_stages": 3, "maxnreg": null, "pre_hook": null, "ir_override": null}`
	}
	p := write(t, `{"key": [8], "configs_timings": [[`+cfg(1)+`, [1.0, 0.9, 1.1]], [`+cfg(2)+`, [1.0, 0.8, 1.2]], [`+cfg(1)+`, [0.5, 0.5, 0.5]]]}`)
	tb := decodeFile(t, p)
	if tb.Rows[0]["best"] != true || len(tb.Summary.Limitations) < 3 {
		t.Fatalf("%v %v", tb.Rows, tb.Summary.Limitations)
	}
	p = write(t, `{"key": [8], "configs_timings": [[`+cfg(1)+`, [1.0, 0.9, 1.1]], [`+cfg(2)+`, [1.0, 0.8, 1.2]]]}`)
	if tb := decodeFile(t, p); tb.Rows[1]["best"] != true {
		t.Fatalf("lexicographic: %v", tb.Rows)
	}
}

func TestNoRecords(t *testing.T) {
	for _, body := range []string{`{"key": [1], "configs_timings": []}`, `{"key": [1]}`, `[1]`, `{"key": [1], "configs_timings": [[{}, [1]]]}`,
		`{"key": [1], "configs_timings": [[{"kwargs": {}}, 1.0], [{"kwargs": {"a": 1}}, [1.0]]]}`} {
		s, err := formatstest.DecodeFile(t, Spec, write(t, body), nil, nil)
		formatstest.CheckInvariants(t, s, err)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestReaders(t *testing.T) {
	data, err := os.ReadFile(cacheFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, wrap := range []func(io.Reader) io.Reader{nil, iotest.OneByteReader, iotest.HalfReader} {
		s, err := formatstest.Decode(Spec, "x"+Suffix, data, nil, wrap)
		formatstest.CheckInvariants(t, s, err)
		if err != nil {
			t.Fatal(err)
		}
		got := formatstest.Canonical(t, s.Tables[0].Rows)
		if first == "" {
			first = got
		} else if got != first {
			t.Fatal("rows differ by reader")
		}
	}
	if sniff(data) != 2 {
		t.Fatal("not sniffed")
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range cacheFiles(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := formatstest.Decode(Spec, "f"+Suffix, data, nil, nil)
		formatstest.CheckInvariants(t, s, err)
	})
}

func BenchmarkDecode(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"key": [4096, 4096, 4096, "torch.float16"], "configs_timings": [`)
	for i := 0; i < 20000; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(`[{"kwargs": {"BLOCK_M": ` + strconv.Itoa(16<<(i%5)) + `, "I": ` + strconv.Itoa(i) + `}, "num_warps": 8, "num_ctas": 1, "num_stages": 3, "maxnreg": null, "pre_hook": null, "ir_override": null}, [0.52, 0.51, Infinity]]`)
	}
	sb.WriteString("]}")
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, Spec, &evidence.Artifact{Path: "/virtual/b" + Suffix, Size: int64(len(data))}, bytes.NewReader(data), nil)
		if err := Spec.Decoder.Decode(b.Context(), in, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
