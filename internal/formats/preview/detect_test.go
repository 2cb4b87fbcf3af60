package preview_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/csvpreview"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/jsonpreview"
	"github.com/flameox/flameox/internal/formats/parquetpreview"
	"github.com/flameox/flameox/internal/formats/text"
	"github.com/flameox/flameox/internal/registry"
)

// generic are the preview formats: support must be honest rather than
// substitutive, so they never take a file from a specific format.
var generic = []*formats.Spec{jsonpreview.JSON, jsonpreview.JSONL, csvpreview.Spec, text.Spec, parquetpreview.Spec}

func isGeneric(s *formats.Spec) bool { return slices.Contains(generic, s) }

// specific maps fixtures in the repository's testdata (copies of the
// shared developer set) to the specific format that owns them.
var specific = map[string]string{
	"speedscope/simple.speedscope.json":                 "speedscope",
	"speedscope/simple-sampled.speedscope.json":         "speedscope",
	"speedscope/two-sampled.speedscope.json":            "speedscope",
	"speedscope/cs336-bpe-py-spy-0.4.2.speedscope.json": "speedscope",
	"v8/chrome-65-simple.cpuprofile":                    "v8-cpuprofile",
	"perf/simple-with-header.linux-perf.txt":            "perf-script",
	"perf/rust-mangled.linux-perf.txt":                  "perf-script",
	"collapsed/perf-vertx-stacks-01-collapsed-all.txt":  "collapsed-stacks",
	"sarif/gitleaks-sarif_simple.sarif":                 "sarif",
	"sarif/sarif-sdk-clang-RealLog.xml.sarif":           "sarif",
	"sarif/binskim-clang.execstack.sarif":               "sarif",
	"coverage/pdf_toolbox.coverage.json":                "coverage-json",
	"coverage/textxtract.coverage":                      "coverage-sqlite",
}

// walk calls fn for every fixture file under dir (provenance notes
// excluded), with its slash-separated path relative to dir.
func walk(t *testing.T, dir string, fn func(rel, path string)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fn(filepath.ToSlash(rel), p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// claimants lists the specific formats that would take a file: their
// sniffer says Yes, or their suffix matches and their sniffer does not
// say No.
func claimants(path string, prefix []byte) []string {
	var out []string
	lower := strings.ToLower(filepath.Base(path))
	for _, s := range registry.Formats() {
		if isGeneric(s) {
			continue
		}
		v := formats.NeedMore
		if s.Sniff != nil {
			v = s.Sniff(prefix)
		}
		suffix := slices.ContainsFunc(s.Suffixes, func(x string) bool { return strings.HasSuffix(lower, x) })
		if v == formats.Yes || suffix && v != formats.No {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestGenericNeverSteals runs detection among all registered formats over
// every fixture in the repository: those of each format, the preview
// fixtures, and the other files of the shared developer set copied into
// testdata/preview/shared. A generic sniffer never says Yes, and a file a
// specific format claims is never detected as a generic preview.
func TestGenericNeverSteals(t *testing.T) {
	checked, owned := 0, 0
	walk(t, formatstest.Testdata(), func(rel, path string) {
		prefix, err := formats.ReadPrefix(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range generic {
			if s.Sniff != nil && s.Sniff(prefix) == formats.Yes {
				t.Errorf("%s: the generic %s sniffer says Yes", rel, s.Name)
			}
		}
		got, _ := formats.Detect(registry.Formats(), path, prefix, "")
		if want, ok := specific[rel]; ok {
			owned++
			if got == nil || got.Name != want {
				t.Errorf("%s: detected as %v, not %s", rel, got, want)
			}
		}
		if got == nil || !isGeneric(got) {
			return
		}
		checked++
		if c := claimants(path, prefix); len(c) > 0 {
			t.Errorf("%s: detected as generic %s although %v claim it", rel, got.Name, c)
		}
	})
	if owned != len(specific) {
		t.Errorf("%d of the %d fixtures owned by specific formats were found under testdata", owned, len(specific))
	}
	if checked == 0 {
		t.Fatal("no fixture was detected as a generic format: the preview fixtures should be")
	}
}

// TestExplicitFormat: asking for a generic preview by name is honoured
// even for a file a specific format owns.
func TestExplicitFormat(t *testing.T) {
	for _, rel := range []string{"preview/json/pip-list.json", "speedscope/simple.speedscope.json"} {
		path := filepath.Join(formatstest.Testdata(), rel)
		prefix, err := formats.ReadPrefix(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range generic {
			if s, err := formats.Detect(registry.Formats(), path, prefix, g.Name); err != nil || s != g {
				t.Errorf("%s --format %s: %v %v", rel, g.Name, s, err)
			}
		}
	}
}

// ownedByReaders are preview fixtures a specific reader now owns (the
// inference exports): detected as it, the specific format winning.
var ownedByReaders = map[string]string{
	"csv/aiperf-profile_export_aiperf.csv":   "aiperf-csv",
	"csv/rocprofv3-kernel_trace.csv":         "rocprofv3-csv",
	"json/aiperf-profile_export_aiperf.json": "aiperf-json",
	"jsonl/aiperf-profile_export.jsonl":      "aiperf-records",
	"jsonl/mooncake-synthetic_trace.jsonl":   "mooncake-trace",
}

// TestSuffixes: each preview fixture is detected as its directory's format.
func TestSuffixes(t *testing.T) {
	n := 0
	walk(t, filepath.Join(formatstest.Testdata(), "preview"), func(rel, path string) {
		if want, ok := ownedByReaders[rel]; ok {
			prefix, _ := formats.ReadPrefix(path)
			if got, err := formats.Detect(registry.Formats(), path, prefix, ""); err != nil || got.Name != want {
				t.Errorf("%s: detected %v (%v), want %s", rel, got, err, want)
			}
			return
		}
		dir := strings.SplitN(rel, "/", 2)[0]
		i := slices.IndexFunc(generic, func(s *formats.Spec) bool { return s.Name == dir })
		if i < 0 {
			return
		}
		n++
		prefix, _ := formats.ReadPrefix(path)
		got, err := formats.Detect(registry.Formats(), path, prefix, "")
		if err != nil || got != generic[i] {
			t.Errorf("%s: detected %v (%v), want %s", rel, got, err, dir)
		}
	})
	if n == 0 {
		t.Fatal("no preview fixture found")
	}
}

// TestSpecificWinsOverGenericSuffix: the registered speedscope format
// shares the .json suffix with the generic json preview and recognizes its
// content, so its Yes beats the preview's NeedMore.
func TestSpecificWinsOverGenericSuffix(t *testing.T) {
	standin, ok := registry.Format("speedscope")
	if !ok {
		t.Fatal("speedscope is not registered")
	}
	specs := registry.Formats()
	n := 0
	for rel, want := range specific {
		if want != standin.Name {
			continue
		}
		n++
		path := filepath.Join(formatstest.Testdata(), rel)
		prefix, err := formats.ReadPrefix(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := formats.Detect(specs, path, prefix, ""); err != nil || got != standin {
			t.Errorf("%s: detected %v (%v)", rel, got, err)
		}
	}
	if n == 0 {
		t.Fatal("no speedscope fixture to check")
	}
	path := filepath.Join(formatstest.Testdata(), "preview/json/pip-list.json")
	prefix, _ := formats.ReadPrefix(path)
	if got, _ := formats.Detect(specs, path, prefix, ""); got != jsonpreview.JSON {
		t.Errorf("a plain JSON file stays generic: %v", got)
	}
}

// A name that claims one specific format, on bytes no format accepts (a
// .cpuprofile cut after ten bytes), is that format, malformed: it fails
// as V8 with its location, not as "no known format matches".
func TestNameClaimsFormat(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]string{
		"cut.cpuprofile":      "v8-cpuprofile",
		"cut.speedscope.json": "speedscope",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`{"nodes":[`), 0o644); err != nil {
			t.Fatal(err)
		}
		prefix, _ := formats.ReadPrefix(path)
		got, err := formats.Detect(registry.Formats(), path, prefix, "")
		if err != nil || got.Name != want {
			t.Errorf("%s: detected %v (%v), want %s", name, got, err, want)
		}
	}
}
