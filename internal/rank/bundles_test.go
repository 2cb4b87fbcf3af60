package rank_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/store"
	"github.com/flameox/flameox/internal/wire"
)

// preserve decodes paths as flameox-decode does and preserves the stream
// as flameox-preserve --label does.
func preserve(t *testing.T, dir string, labels map[string]string, ps ...string) string {
	t.Helper()
	var sink strings.Builder
	w := wire.NewWriter(&sink)
	bl, _, err := bundle.PreserveThen(context.Background(), dir, strings.NewReader(decoded(t, ps...)), w,
		func(id bundle.ID, m *bundle.Manifest) error {
			return store.Record(dir, store.EntryOf(id, m, labels, time.Now(), "test-host"))
		})
	if err != nil {
		t.Fatal(err)
	}
	return bl.ID
}

func bundles(t *testing.T, req rank.Request, dir string, where ...string) *result {
	t.Helper()
	fl := rank.Fleet{Store: dir}
	for _, w := range where {
		c, err := store.ParseWhere(w)
		if err != nil {
			t.Fatal(err)
		}
		fl.Where = append(fl.Where, c)
	}
	return collect(t, func(out rank.Output) error { return rank.Bundles(context.Background(), req, fl, out) })
}

// resultOf is the result table's rows and summary metrics, canonical.
func resultOf(t *testing.T, r *result) (rows []string, summary evidence.Object) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("rank: %v\n%s", r.err, r.raw)
	}
	for _, b := range r.all(evidence.KindRow) {
		rows = append(rows, canon(t, b["values"]))
	}
	s := r.all(evidence.KindSummary)
	if len(s) != 1 {
		t.Fatalf("%d summaries", len(s))
	}
	return rows, s[0]
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := evidence.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func metric(s evidence.Object, name string) any {
	m, _ := s["metrics"].(evidence.Object)[name].(evidence.Object)
	return m["value"]
}

// Ranking the preserved tables of bundles gives the rows that ranking
// the same artifacts decoded afresh gives: selection, bounds, shares and
// totals alike, with the bundles counted.
func TestBundlesEqualDecode(t *testing.T) {
	dir := t.TempDir()
	files := []string{fixture("pstats", "cprofile-workload.pstats"), fixture("pstats", "cprofile-tiny.pstats"),
		fixture("pstats", "cprofile-dump-stats.pstats"), fixture("pstats", "profile-workload.pstats")}
	for i, f := range files {
		preserve(t, dir, map[string]string{"service": []string{"api", "web"}[i%2]}, f)
	}
	// The same first artifact preserved again beside another: its table
	// is read once.
	preserve(t, dir, map[string]string{"service": "api", "run": "again"}, files[0], files[1])
	for _, args := range []evidence.Object{
		{"top": 7},
		{"top": 5, "function_pattern": "^(hot|fib|walk)$"},
		{"top": 3, "metric": "cumulative"},
	} {
		req := request("summarize_cpu_hotspots", args)
		want, ws := resultOf(t, paths(t, req, files...))
		got, gs := resultOf(t, bundles(t, req, dir))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%v: bundles ranked\n%s\nwant\n%s", args, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, m := range []string{"profile_count", "total_weight"} {
			if canon(t, metric(gs, m)) != canon(t, metric(ws, m)) {
				t.Errorf("%v: %s %v, want %v", args, m, metric(gs, m), metric(ws, m))
			}
		}
		if gs["rows_observed"] != ws["rows_observed"] || canon(t, gs["truncation"]) != canon(t, ws["truncation"]) {
			t.Errorf("%v: summary %s, want %s", args, canon(t, gs), canon(t, ws))
		}
		// Bundles are read in id order, so whichever of the bundles holding
		// files 0 and 1 comes first is the one whose tables count.
		if canon(t, metric(gs, "bundles_admitted")) != "3" || canon(t, metric(gs, "duplicate_tables")) != "2" || canon(t, metric(gs, "bundles_published")) != "5" {
			t.Errorf("%v: bundle metrics %s", args, canon(t, gs["metrics"]))
		}
	}
	// --where selects before anything is read: the api bundles are
	// files 0 and 2, and the one holding files 0 and 1.
	req := request("summarize_cpu_hotspots", evidence.Object{"top": 10})
	want, _ := resultOf(t, paths(t, req, files[0], files[2], files[1]))
	r := bundles(t, req, dir, "service=api")
	got, gs := resultOf(t, r)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("service=api:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if canon(t, metric(gs, "bundles_selected")) != "3" {
		t.Fatalf("service=api: %s", canon(t, gs))
	}
	if n := len(r.all(evidence.KindBundle)); n != 2 {
		t.Errorf("%d bundle blocks passed on, want the 2 admitted", n)
	}
	r = bundles(t, req, dir, "service=api", "run=again")
	if _, gs := resultOf(t, r); canon(t, metric(gs, "bundles_admitted")) != "1" || canon(t, metric(gs, "profile_count")) != "2" {
		t.Errorf("run=again: %s", canon(t, gs))
	}
	r = bundles(t, req, dir, "service=none")
	if evidence.CodeOf(r.err) != evidence.CodeInvalidArgument || !strings.Contains(r.err.Error(), "--where service=none") {
		t.Errorf("no match: %v", r.err)
	}
}

// Profiles of different formats do not pool, across bundles as in one
// stream; --where format=… selects one.
func TestBundlesFormats(t *testing.T) {
	dir := t.TempDir()
	preserve(t, dir, nil, fixture("pstats", "cprofile-tiny.pstats"))
	preserve(t, dir, nil, fixture("v8", "fib.cpuprofile"))
	req := request("summarize_cpu_hotspots", evidence.Object{"top": 3})
	if r := bundles(t, req, dir); evidence.CodeOf(r.err) != evidence.CodeInvalidArgument {
		t.Fatalf("mixed formats: %v", r.err)
	}
	want, _ := resultOf(t, paths(t, req, fixture("v8", "fib.cpuprofile")))
	got, _ := resultOf(t, bundles(t, req, dir, "format=v8-cpuprofile"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("format=v8-cpuprofile:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A table file changed after publication is INTEGRITY_FAILURE at the
// file, whichever bundle it is in: rows of bytes that are not the
// manifest's are not evidence.
func TestBundlesTamperedTable(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for _, f := range []string{"cprofile-workload.pstats", "cprofile-tiny.pstats", "profile-workload.pstats"} {
		ids = append(ids, preserve(t, dir, nil, fixture("pstats", f)))
	}
	for _, id := range ids {
		id, _ := bundle.ParseID(id)
		p := filepath.Join(bundle.Dir(dir, id), "tables", "cpu.frames", "0.parquet")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 1
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := bundles(t, request("summarize_cpu_hotspots", evidence.Object{"top": 3}), dir)
		f := evidence.AsFailure(r.err, "")
		if f.Code != evidence.CodeIntegrity || f.Location.Path != p {
			t.Fatalf("tampered %s: %v", p, r.err)
		}
		data[len(data)/2] ^= 1
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := bundles(t, request("summarize_cpu_hotspots", evidence.Object{"top": 3}), dir); r.err != nil {
		t.Fatalf("restored: %v", r.err)
	}
}
