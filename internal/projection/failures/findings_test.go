package failures

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	kvformat "github.com/flameox/flameox/internal/formats/kernelvalidation"
	"github.com/flameox/flameox/internal/formats/pytestevents"
	"github.com/flameox/flameox/internal/formats/sanitizer"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

const sanitizerFixtures = "../../../testdata/sanitizer"

func projectSanitizer(t *testing.T, args evidence.Object, spec *formats.Spec, files ...string) *projectiontest.Result {
	t.Helper()
	var inputs []*projectiontest.Input
	for _, name := range files {
		inputs = append(inputs, projectiontest.Decode(t, spec, filepath.Join(sanitizerFixtures, name), nil)...)
	}
	r, err := projectiontest.Run(Spec, args, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The text and XML reports of the same run give the same failure
// identities.
func TestSanitizerTextAndXML(t *testing.T) {
	txt := projectSanitizer(t, nil, sanitizer.Spec, "memcheck-demo.txt")
	xml := projectSanitizer(t, nil, sanitizer.XMLSpec, "memcheck-demo.sanitizer.xml")
	want := []string{
		"failed memcheck::invalid_access::unaligned_kernel() at memcheck_demo.cu:34",
		"failed memcheck::invalid_access::out_of_bounds_function() at memcheck_demo.cu:39",
	}
	for _, r := range []*projectiontest.Result{txt, xml} {
		if got := ids(r.Rows); !slices.Equal(got, want) {
			t.Fatalf("rows\n got %q\nwant %q", got, want)
		}
		row := r.Rows[1]
		if row["kind"] != KindSanitizer || row["file"] != "memcheck_demo.cu" || row["line"] != int64(38) ||
			!strings.Contains(row["longrepr"].(string), "Host Frame: ") || row["message"] != "Invalid __global__ write of size 4 bytes" {
			t.Errorf("%v", row)
		}
		if r.Summary.Metrics["sanitizer_errors"].Value != int64(2) || r.Summary.Metrics["sanitizer_identities"].Value != int64(2) {
			t.Errorf("%v", r.Summary.Metrics)
		}
	}
	if !txt.Summary.Complete {
		t.Errorf("%+v", txt.Summary)
	}
}

// Repeats of one defect are one identity with their count; warnings are
// counted, never listed; filters select by identity and outcome.
func TestSanitizerIdentities(t *testing.T) {
	r := projectSanitizer(t, nil, sanitizer.Spec, "guide-snippets.txt")
	if len(r.Rows) == 0 {
		t.Fatal("no rows")
	}
	for _, row := range r.Rows {
		if row["kind"] != KindSanitizer || (row["outcome"] != "failed" && row["outcome"] != "error") {
			t.Errorf("%v", row)
		}
	}
	w, _ := evidence.AsInt(r.Summary.Metrics["sanitizer_warnings"].Value)
	e, _ := evidence.AsInt(r.Summary.Metrics["sanitizer_errors"].Value)
	all, _ := evidence.AsInt(r.Summary.Metrics["sanitizer_findings"].Value)
	if w == 0 || e+w != all {
		t.Errorf("%v", r.Summary.Metrics)
	}
	race := projectSanitizer(t, evidence.Object{"nodeid_glob": "racecheck::*"}, sanitizer.XMLSpec, "racecheck-hazard.sanitizer.xml", "memcheck-demo.sanitizer.xml")
	if got := ids(race.Rows); len(got) != 1 || !strings.HasPrefix(got[0], "failed racecheck::race::sumKernel(int *, int *) at ") {
		t.Errorf("%q", got)
	}
	twice := projectSanitizer(t, evidence.Object{"top": int64(1)}, sanitizer.Spec, "memcheck-demo.txt")
	if len(twice.Rows) != 1 || twice.Summary.Complete || twice.Summary.Truncation == nil {
		t.Errorf("%+v", twice.Summary)
	}
	tool := projectSanitizer(t, nil, sanitizer.Spec, "real-2026.3-no-gpu.sanitizer.log")
	if len(tool.Rows) == 0 || tool.Rows[0]["outcome"] != "error" || tool.Summary.Complete {
		t.Errorf("the tool's own failure is an error, the report incomplete: %v %+v", tool.Rows, tool.Summary)
	}
}

func TestSanitizerRepeats(t *testing.T) {
	in := projectiontest.Decode(t, sanitizer.Spec, filepath.Join(sanitizerFixtures, "memcheck-demo.txt"), nil)[0]
	in.Rows = append(in.Rows, in.Rows[1], in.Rows[1])
	r, err := projectiontest.Run(Spec, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 2 || !strings.Contains(r.Rows[1]["message"].(string), "(3 findings with this identity)") {
		t.Errorf("%v", r.Rows)
	}
}

// pytest and sanitizer inputs rank together: pytest's session facts stay
// pytest's.
func TestMixedInputs(t *testing.T) {
	var inputs []*projectiontest.Input
	inputs = append(inputs, projectiontest.Decode(t, pytestevents.Spec, filepath.Join(fixtures, "suite.pytest-events.jsonl"), nil)...)
	inputs = append(inputs, projectiontest.Decode(t, sanitizer.Spec, filepath.Join(sanitizerFixtures, "memcheck-demo.txt"), nil)...)
	r, err := projectiontest.Run(Spec, nil, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 14 || r.Summary.Metrics["exit_status"].Value != int64(1) || r.Summary.Metrics["session_finished"].Value != true {
		t.Errorf("%d rows %v", len(r.Rows), r.Summary.Metrics)
	}
}

// Kernel validation fails are failures, inconclusive cases errors; passes
// and unsupported cases are counted only.
func TestKernelValidation(t *testing.T) {
	in := projectiontest.Decode(t, kvformat.Spec, "../../../testdata/kernel-validation/demo.kernel-validation.jsonl", nil)
	r, err := projectiontest.Run(Spec, nil, in...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"error softmax/64/timeout on cpu", "failed softmax/64/buggy on cpu"}
	if got := ids(r.Rows); !slices.Equal(got, want) {
		t.Fatalf("rows\n got %q\nwant %q", got, want)
	}
	if r.Rows[1]["kind"] != KindKernelValidation || r.Rows[1]["message"] != "1 of 64 elements outside the tolerance" ||
		!strings.Contains(r.Rows[1]["longrepr"].(string), "max_abs_error") {
		t.Errorf("%v", r.Rows[1])
	}
	for m, n := range map[string]int64{"kernel_validation_cases": 5, "kernel_validation_pass": 2, "kernel_validation_fail": 1,
		"kernel_validation_inconclusive": 1, "kernel_validation_unsupported": 1} {
		if r.Summary.Metrics[m].Value != n {
			t.Errorf("%s = %v, want %d", m, r.Summary.Metrics[m].Value, n)
		}
	}
	if !r.Summary.Complete {
		t.Errorf("%+v", r.Summary)
	}
	only := projectiontest.Decode(t, kvformat.Spec, "../../../testdata/kernel-validation/demo.kernel-validation.jsonl", nil)
	r, err = projectiontest.Run(Spec, evidence.Object{"outcomes": []any{"failed"}}, only...)
	if err != nil || len(r.Rows) != 1 {
		t.Fatalf("%v %v", err, r.Rows)
	}
}
