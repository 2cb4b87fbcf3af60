package perfscript

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/worker"
)

func needPerf(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf is not on PATH; install linux-perf to decode perf.data")
	}
}

func TestDataConversionCache(t *testing.T) {
	needPerf(t)
	scratch := t.TempDir()
	t.Setenv(worker.ScratchEnv, scratch)
	path := testdata("perf/hot.perf.data")
	first, err := decodeFile(t, DataSpec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := decodeFile(t, DataSpec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cov := func(s *formatstest.Sink) any { return s.Named("cpu.frames")[0].Summary.Coverage["conversion_cache"] }
	if cov(first) != "miss" || cov(second) != "hit" {
		t.Fatalf("cache use %v then %v, want miss then hit", cov(first), cov(second))
	}
	if !slices.Equal(frameRows(t, first), frameRows(t, second)) {
		t.Fatal("a cached conversion decoded differently")
	}
	entries, _ := os.ReadDir(filepath.Join(scratch, "conversions"))
	if len(entries) != 1 {
		t.Fatalf("cache holds %d entries", len(entries))
	}
}

// TestStatRecord: `perf stat record` data (HEADER_STAT in its feature
// bitmap) is refused as counters, not samples, before perf runs, so the
// message is about the file and not a line of perf script's output. It
// needs no perf; the sample fixtures, which lack the bit, pass the check.
func TestStatRecord(t *testing.T) {
	_, err := decodeFile(t, DataSpec, testdata("perf/stat.perf.data"), nil, nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeUnsupportedFormat || !strings.Contains(f.Message, "counter records from `perf stat record`, not samples") || !strings.Contains(f.Message, "perf stat report") {
		t.Fatalf("want UNSUPPORTED_FORMAT naming perf stat record, got %v", err)
	}
	if strings.Contains(f.Message, "line") || f.Location.Line != 0 {
		t.Fatalf("failure %q at %+v names a line", f.Message, f.Location)
	}
}

func TestDataFailures(t *testing.T) {
	needPerf(t)
	data, err := os.ReadFile(testdata("perf/hot.perf.data"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.data")
	os.WriteFile(truncated, data[:len(data)/2], 0o600)
	text := filepath.Join(dir, "text.data")
	os.WriteFile(text, []byte("hot 1 c: \n\t1 f (/b)\n\n"), 0o600)

	t.Run("truncated perf.data is a worker failure, never cached", func(t *testing.T) {
		scratch := t.TempDir()
		t.Setenv(worker.ScratchEnv, scratch)
		_, err := decodeFile(t, DataSpec, truncated, nil, nil)
		f := wantCode(t, err, evidence.CodeDecodeFailure)
		if _, ok := f.Details["exit_code"]; !ok {
			t.Fatalf("no exit code in %v", f.Details)
		}
		if _, ok := f.Details["stderr"].(string); !ok {
			t.Fatalf("no stderr in %v", f.Details)
		}
		entries, _ := os.ReadDir(filepath.Join(scratch, "conversions"))
		if len(entries) != 0 {
			t.Fatalf("a failed conversion left %v in the cache", entries)
		}
	})
	t.Run("not perf.data", func(t *testing.T) {
		_, err := decodeFile(t, DataSpec, text, nil, nil)
		wantCode(t, err, evidence.CodeDecodeFailure)
	})
	t.Run("memory budget", func(t *testing.T) {
		_, err := decodeFile(t, DataSpec, testdata("perf/hot.perf.data"), map[string]int64{LimitWorkerRSS: 1 << 20}, nil)
		f := wantCode(t, err, evidence.CodeLimitExceeded)
		if lim, _ := f.Details["limit"].(evidence.Object); lim["name"] != "max_memory_bytes" {
			t.Fatalf("receipt %v", f.Details["limit"])
		}
	})
	t.Run("perf missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := decodeFile(t, DataSpec, testdata("perf/hot.perf.data"), nil, nil)
		f := wantCode(t, err, evidence.CodeProviderUnavailable)
		if f.Retry == nil || f.Retry.Action == "" {
			t.Fatal("no host guidance")
		}
	})
}

// TestDataMatchesDefaultScript: the conversion's explicit field list must
// give the same frames as perf script's default output of the same file,
// symbolized on the same host now.
func TestDataMatchesDefaultScript(t *testing.T) {
	needPerf(t)
	for _, name := range nativeFixtures {
		t.Run(name, func(t *testing.T) {
			path := testdata("perf/" + name + ".perf.data")
			data, err := decodeFile(t, DataSpec, path, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			text := filepath.Join(t.TempDir(), name+".perf.txt")
			out, err := os.Create(text)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("perf", "script", "-i", path)
			cmd.Stdout = out
			cmd.Env = append(os.Environ(), "PERF_CONFIG=/dev/null")
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			out.Close()
			script, err := decodeFile(t, ScriptSpec, text, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := frameRows(t, data), frameRows(t, script); !slices.Equal(a, b) {
				t.Fatalf("perf-data rows differ from default perf script rows:\n%v\n%v", a, b)
			}
		})
	}
}
