package nsys

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/worker"
)

var report = filepath.Join(testdata, "nvfuser-report1.nsys-rep")

// noNsys hides every nsys of this host: PATH and the search globs.
func noNsys(t *testing.T) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	old := SearchGlobs
	SearchGlobs = []string{filepath.Join(t.TempDir(), "*", "nsys")}
	t.Cleanup(func() { SearchGlobs = old })
}

// TestRepWithoutNsys: the real report, with no nsys anywhere, is
// PROVIDER_UNAVAILABLE with the host guidance, and no rows.
func TestRepWithoutNsys(t *testing.T) {
	noNsys(t)
	s, err := formatstest.DecodeFile(t, RepSpec, report, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action != HostGuidance {
		t.Fatalf("want PROVIDER_UNAVAILABLE with guidance, got %v", err)
	}
	if len(s.Tables) != 0 {
		t.Fatalf("tables without a reader: %d", len(s.Tables))
	}
}

// fakeNsys puts on PATH a test-only stand-in for nsys: it answers
// --version like Nsight Systems 2024.6.2 and, for `export --type
// parquetdir`, checks that its input is an Nsight Systems report and
// copies the converted shape fixture of that same report into --output.
// It tests flameox's plumbing (locating, the worker, the descriptor link,
// the cache), not nsys. Each export appends a line to the returned log.
func fakeNsys(t *testing.T) string {
	t.Helper()
	noNsys(t)
	bin := t.TempDir()
	src, err := filepath.Abs(filepath.Dir(nvfuser))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "exports.log")
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in
--version) echo "NVIDIA Nsight Systems version 2024.6.2.225-246235244400v0"; exit 0;;
export) ;;
*) echo "unexpected $*" >&2; exit 2;;
esac
out=""; in=""
while [ $# -gt 0 ]; do
  case "$1" in --output) out="$2"; shift;; --type) [ "$2" = parquetdir ] || exit 3; shift;; --force-overwrite) shift;; *) in="$1";; esac
  shift
done
head -c 28 "$in" | grep -q "NVIDIA Tegra Profiler Report" || { echo "not a report: $in" >&2; exit 4; }
mkdir -p "$out" && cp %s/*.parquet "$out"/ && echo export >> %s
`, src, log)
	if err := os.WriteFile(filepath.Join(bin, "nsys"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	return log
}

func exports(t *testing.T, log string) int {
	b, _ := os.ReadFile(log)
	return strings.Count(string(b), "export")
}

// TestRepConversionAndCache: with the stand-in nsys, the report decodes
// into the same rows as its parquetdir; with a session scratch the
// conversion is cached by report digest and nsys identity, reused, and a
// tampered entry is converted again.
func TestRepConversionAndCache(t *testing.T) {
	log := fakeNsys(t)
	want := launches(t, nvfuser)
	wantSlices, _ := traceTables(t, nvfuser)
	decode := func(cache string) *formatstest.Sink {
		s, err := formatstest.DecodeFile(t, RepSpec, report, nil, nil)
		formatstest.CheckInvariants(t, s, err)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"gpu.launches", "trace.slices", "trace.tracks"} {
			tb := s.Table(n)
			if tb == nil || tb.Summary == nil {
				t.Fatalf("no %s", n)
			}
			c := tb.Summary.Coverage
			if c["conversion_cache"] != cache || c["converter_version"] != "NVIDIA Nsight Systems version 2024.6.2.225-246235244400v0" {
				t.Fatalf("%s coverage %v", n, c)
			}
		}
		return s
	}
	s := decode("off")
	if got := s.Table("gpu.launches"); len(got.Rows) != len(want.Rows) || got.Summary.RowsObserved != want.Summary.RowsObserved {
		t.Fatalf("%d launches, the parquetdir has %d", len(got.Rows), len(want.Rows))
	}
	if got := s.Table("trace.slices"); len(got.Rows) != len(wantSlices.Rows) {
		t.Fatalf("%d slices, the parquetdir has %d", len(got.Rows), len(wantSlices.Rows))
	}
	members, _ := s.Table("gpu.launches").Summary.Coverage["members"].([]any)
	if len(members) < 5 {
		t.Fatalf("members %v", members)
	}
	scratch := t.TempDir()
	t.Setenv(worker.ScratchEnv, scratch)
	decode("miss")
	decode("hit")
	if n := exports(t, log); n != 2 {
		t.Fatalf("%d exports for off, miss, hit", n)
	}
	// Tamper with the cached StringIds: the entry no longer verifies.
	m, _ := filepath.Glob(filepath.Join(scratch, "conversions", "nsys-parquetdir", "*", "pqtdir", "StringIds.parquet"))
	if len(m) != 1 {
		t.Fatalf("cache entries %v", m)
	}
	if err := os.WriteFile(m[0], []byte("PAR1"), 0o600); err != nil {
		t.Fatal(err)
	}
	decode("miss")
	if n := exports(t, log); n != 3 {
		t.Fatalf("%d exports after tampering", n)
	}
}

// TestRepFailedExport: a converter that fails is a typed failure with its
// stderr, and nothing is cached.
func TestRepFailedExport(t *testing.T) {
	fakeNsys(t)
	bad := filepath.Join(t.TempDir(), "bad.nsys-rep")
	if err := os.WriteFile(bad, append([]byte("NVIDIA Tegra Profiler Report"), make([]byte, 8)...), 0o644); err != nil {
		t.Fatal(err)
	}
	// The stand-in accepts any report: make it fail by removing cp's source.
	bin := strings.Split(os.Getenv("PATH"), ":")[0]
	b, _ := os.ReadFile(filepath.Join(bin, "nsys"))
	if err := os.WriteFile(filepath.Join(bin, "nsys"), []byte(strings.Replace(string(b), "export) ;;", "export) echo 'cannot read the report' >&2; exit 1;;", 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	t.Setenv(worker.ScratchEnv, scratch)
	s, err := formatstest.DecodeFile(t, RepSpec, bad, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || !strings.Contains(fmt.Sprint(f.Details), "cannot read the report") {
		t.Fatalf("%v %v", err, f)
	}
	if m, _ := filepath.Glob(filepath.Join(scratch, "conversions", "nsys-parquetdir", "*")); len(m) != 0 {
		t.Fatalf("a failed conversion left %v", m)
	}
}

func TestRepDetect(t *testing.T) {
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if sniffRep(b[:formats.SniffBytes]) != formats.Yes || sniffRep([]byte("NVIDIA")) != formats.NeedMore || sniffRep([]byte("PAR1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")) != formats.No {
		t.Fatal("sniff")
	}
}

// FuzzRep: any bytes given as a report, with no nsys on the host, are a
// typed failure (not a report, or no reader), never a panic or a row.
func FuzzRep(f *testing.F) {
	b, err := os.ReadFile(report)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:256])
	f.Add([]byte("NVIDIA Tegra Profiler Repor"))
	f.Fuzz(func(t *testing.T, data []byte) {
		noNsys(t)
		p := filepath.Join(t.TempDir(), "r.nsys-rep")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := formatstest.DecodeFile(t, RepSpec, p, nil, nil)
		formatstest.CheckInvariants(t, s, err)
		var fl *evidence.Failure
		if !errors.As(err, &fl) || len(s.Tables) != 0 {
			t.Fatalf("want a typed failure and no table: %v", err)
		}
	})
}
