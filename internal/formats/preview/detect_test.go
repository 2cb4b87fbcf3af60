package preview_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/preview/previewtest"
	"github.com/flameox/flameox/internal/registry"
)

// generic are the preview formats: support must be honest rather than
// substitutive, so they never take a file from a specific format.
var generic = []string{"json", "jsonl", "csv", "text", "parquet"}

// specific maps fixtures of the shared developer set to the specific
// format that owns them (names as decided for the registry).
var specific = map[string]string{
	"speedscope/simple.speedscope.json":                       "speedscope",
	"speedscope/simple-sampled.speedscope.json":               "speedscope",
	"speedscope/two-sampled.speedscope.json":                  "speedscope",
	"pyspy-speedscope/cs336-bpe-py-spy-0.4.2.speedscope.json": "speedscope",
	"v8/chrome-65-simple.cpuprofile":                          "v8-cpuprofile",
	"linux-perf/simple-with-header.linux-perf.txt":            "perf-script",
	"linux-perf/rust-mangled.linux-perf.txt":                  "perf-script",
	"collapsed-stacks/perf-vertx-stacks-01-collapsed-all.txt": "collapsed-stacks",
	"sarif/gitleaks-sarif_simple.sarif":                       "sarif",
	"sarif/sarif-sdk-clang-RealLog.xml.sarif":                 "sarif",
	"sarif/binskim-clang.execstack.sarif":                     "sarif",
	"coverage/pdf_toolbox-coverage-7.12.0.json":               "coverage-json",
	"coverage/textxtract-coverage-7.11.0.coverage.sqlite":     "coverage-sqlite",
}

// sharedFixtures finds the shared fixture set: FLAMEOX_SHARED_FIXTURES,
// shared/fixtures beside the repository (CI), or the developers' path.
func sharedFixtures() string {
	root := filepath.Join(previewtest.Dir(), "..", "..")
	for _, d := range []string{os.Getenv("FLAMEOX_SHARED_FIXTURES"), filepath.Join(root, "..", "shared", "fixtures"), "/work/shared/fixtures"} {
		if st, err := os.Stat(d); d != "" && err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

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
		if slices.Contains(generic, s.Name) {
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
// the shared fixture set and the preview fixtures: a generic sniffer never
// says Yes, and a file a specific format claims is never detected as a
// generic preview.
func TestGenericNeverSteals(t *testing.T) {
	dirs := []string{previewtest.Dir()}
	if d := sharedFixtures(); d != "" {
		dirs = append(dirs, d)
	} else {
		t.Log("shared fixture set not found (set FLAMEOX_SHARED_FIXTURES); checking the preview fixtures only")
	}
	checked := 0
	for _, dir := range dirs {
		walk(t, dir, func(rel, path string) {
			prefix, err := formats.ReadPrefix(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range registry.Formats() {
				if slices.Contains(generic, s.Name) && s.Sniff != nil && s.Sniff(prefix) == formats.Yes {
					t.Errorf("%s: the generic %s sniffer says Yes", rel, s.Name)
				}
			}
			got, _ := formats.Detect(registry.Formats(), path, prefix, "")
			if got == nil || !slices.Contains(generic, got.Name) {
				return
			}
			if c := claimants(path, prefix); len(c) > 0 {
				t.Errorf("%s: detected as generic %s although %v claim it", rel, got.Name, c)
			}
			if want, ok := specific[rel]; ok {
				if _, registered := registry.Format(want); registered {
					t.Errorf("%s: detected as generic %s, not %s", rel, got.Name, want)
				} else {
					t.Logf("%s: %s is not registered yet; detected as %s", rel, want, got.Name)
				}
			}
			checked++
		})
	}
	if checked == 0 {
		t.Fatal("no fixture was detected as a generic format: the preview fixtures should be")
	}
}

// TestExplicitFormat: asking for a generic preview by name is honoured
// even for a file a specific format owns.
func TestExplicitFormat(t *testing.T) {
	path := filepath.Join(previewtest.Dir(), "json", "pip-list.json")
	prefix, _ := formats.ReadPrefix(path)
	for _, name := range generic {
		if s, err := formats.Detect(registry.Formats(), path, prefix, name); err != nil || s.Name != name {
			t.Errorf("--format %s: %v %v", name, s, err)
		}
	}
}

// TestSuffixes: each preview fixture is detected as its directory's format.
func TestSuffixes(t *testing.T) {
	walk(t, previewtest.Dir(), func(rel, path string) {
		dir := strings.SplitN(rel, "/", 2)[0]
		if !slices.Contains(generic, dir) {
			return
		}
		prefix, _ := formats.ReadPrefix(path)
		got, err := formats.Detect(registry.Formats(), path, prefix, "")
		if err != nil || got.Name != dir {
			t.Errorf("%s: detected %v (%v), want %s", rel, got, err, dir)
		}
	})
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
	dir := sharedFixtures()
	if dir == "" {
		t.Skip("shared fixture set not found (set FLAMEOX_SHARED_FIXTURES)")
	}
	for rel, want := range specific {
		if want != "speedscope" {
			continue
		}
		path := filepath.Join(dir, rel)
		prefix, err := formats.ReadPrefix(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := formats.Detect(specs, path, prefix, ""); err != nil || got != standin {
			t.Errorf("%s: detected %v (%v)", rel, got, err)
		}
	}
	path := filepath.Join(previewtest.Dir(), "json", "pip-list.json")
	prefix, _ := formats.ReadPrefix(path)
	if got, _ := formats.Detect(specs, path, prefix, ""); got == nil || got.Name != "json" {
		t.Errorf("a plain JSON file stays generic: %v", got)
	}
}
