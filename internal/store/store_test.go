package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
)

// publish makes a bundle holding one failure (no native bytes needed).
func publish(t *testing.T, dir, msg string) (bundle.ID, *bundle.Reader) {
	t.Helper()
	b, err := bundle.NewBuilder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddFailure(&evidence.Failure{Code: evidence.CodeDecodeFailure, Message: msg}); err != nil {
		t.Fatal(err)
	}
	bl, err := b.Publish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, err := bundle.Open(bl.Path)
	if err != nil {
		t.Fatal(err)
	}
	return r.ID, r
}

func code(t *testing.T, err error, want evidence.Code) {
	t.Helper()
	if evidence.CodeOf(err) != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

func TestRecordSelect(t *testing.T) {
	dir := t.TempDir()
	a, ra := publish(t, dir, "a")
	b, _ := publish(t, dir, "b")
	c, _ := publish(t, dir, "c") // never indexed
	at := time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC)
	ea := EntryOf(a, ra.Manifest, map[string]string{"service": "api", "run": "1"}, at, "h1")
	for range 2 { // recording the same entry twice adds nothing
		if err := Record(dir, ea); err != nil {
			t.Fatal(err)
		}
	}
	if err := Record(dir, &Entry{BundleID: b.String(), Created: at.Add(time.Second), Host: "h2", Labels: map[string]string{"service": "web"}}); err != nil {
		t.Fatal(err)
	}
	entries, err := Entries(dir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	if e := entries[0]; e.BundleID != a.String() || !e.Created.Equal(at) || e.Failures != 1 || e.Labels["run"] != "1" || e.Host != "h1" {
		t.Fatalf("entry read back as %+v", e)
	}
	for _, tc := range []struct {
		where []string
		want  []bundle.ID
	}{
		{nil, []bundle.ID{a, b, c}},
		{[]string{"service=api"}, []bundle.ID{a}},
		{[]string{"service=api", "host=h2"}, nil},
		{[]string{"host=h2"}, []bundle.ID{b}},
		{[]string{"bundle_id=" + b.Hex()}, []bundle.ID{b}},
		{[]string{"service=none"}, nil},
		{[]string{"created>=2026-12-01T10:00:00.5Z"}, []bundle.ID{b}},
		{[]string{"created<2026-12-01T10:00:00.5Z"}, []bundle.ID{a}},
		{[]string{"created>=2026-12-01", "created<2026-12-02"}, []bundle.ID{a, b}},
		{[]string{"created<2026-12-01"}, nil},
	} {
		var conds []Cond
		for _, w := range tc.where {
			c, err := ParseWhere(w)
			if err != nil {
				t.Fatal(err)
			}
			conds = append(conds, c)
		}
		sel, err := Select(dir, conds)
		if err != nil {
			t.Fatal(err)
		}
		got := map[bundle.ID]bool{}
		for _, id := range sel.IDs {
			got[id] = true
		}
		if len(got) != len(tc.want) || sel.Published != 3 || sel.Unindexed != 1 {
			t.Fatalf("%v: %v (published %d, unindexed %d), want %v", tc.where, sel.IDs, sel.Published, sel.Unindexed, tc.want)
		}
		for _, id := range tc.want {
			if !got[id] {
				t.Fatalf("%v: %v lacks %s", tc.where, sel.IDs, id)
			}
		}
	}
	for _, bad := range []string{"novalue", "=x", "Bad=x", "created>=yesterday", "created=2026-12-01"} {
		_, err := ParseWhere(bad)
		code(t, err, evidence.CodeInvalidArgument)
	}
}

func TestIndexIntegrity(t *testing.T) {
	dir := t.TempDir()
	a, ra := publish(t, dir, "a")
	good, err := evidence.Canonical(EntryOf(a, ra.Manifest, nil, time.Unix(0, 0), "h"))
	if err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, IndexDir)
	if err := os.MkdirAll(idx, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"truncated":      string(good[:len(good)/2]),
		"no newline":     string(good),
		"not canonical":  strings.Replace(string(good), `"host":"h"`, `"host": "h"`, 1) + "\n",
		"unknown field":  strings.Replace(string(good), `{`, `{"extra":1,`, 1) + "\n",
		"missing bundle": strings.Replace(string(good), a.Hex(), strings.Repeat("0", 64), 1) + "\n",
		"bad label":      strings.Replace(string(good), `"labels":{}`, `"labels":{"Host":"x"}`, 1) + "\n",
	} {
		p := filepath.Join(idx, "x.json")
		os.Remove(p)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Select(dir, nil)
		if evidence.CodeOf(err) != evidence.CodeIntegrity {
			t.Errorf("%s: %v, want INTEGRITY_FAILURE", name, err)
		}
		var f *evidence.Failure
		if f = evidence.AsFailure(err, ""); f.Location.Path != p {
			t.Errorf("%s: located at %q", name, f.Location.Path)
		}
	}
	os.Remove(filepath.Join(idx, "x.json"))
	if err := os.WriteFile(filepath.Join(idx, "x.json"), append(good, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Select(dir, nil); err != nil {
		t.Fatalf("a good entry: %v", err)
	}
	code(t, Record(dir, &Entry{BundleID: a.String(), Labels: map[string]string{"format": "x"}}), evidence.CodeInvalidArgument)
	code(t, CheckLabels(map[string]string{"k": "line\nbreak"}), evidence.CodeInvalidArgument)
}
