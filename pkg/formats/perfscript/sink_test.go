package perfscript

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/evidence"
	"github.com/flameox/flameox/pkg/formats"
)

// table is one decoded table as the sink saw it.
type table struct {
	hdr     *evidence.Table
	rows    []evidence.Object
	summary *evidence.Summary
}

// memSink keeps tables in memory and checks every row against its header.
type memSink struct{ tables []*table }

func (m *memSink) Begin(t *evidence.Table) (formats.TableWriter, error) {
	tb := &table{hdr: t}
	m.tables = append(m.tables, tb)
	return tb, nil
}

func (t *table) Row(v evidence.Object) error {
	if err := formats.CheckRow(t.hdr, v); err != nil {
		return err
	}
	t.rows = append(t.rows, v)
	return nil
}

func (t *table) End(s *evidence.Summary) error {
	if t.summary != nil {
		return fmt.Errorf("table %s ended twice", t.hdr.Name)
	}
	s.RowsEmitted = int64(len(t.rows))
	t.summary = s
	return nil
}

func (m *memSink) named(name string) []*table {
	var out []*table
	for _, t := range m.tables {
		if t.hdr.Name == name {
			out = append(out, t)
		}
	}
	return out
}

// decodeFile runs spec on a file through formats.Run, the public path.
func decodeFile(t testing.TB, spec *formats.Spec, path string, limits map[string]int64, opts evidence.Object) (*memSink, error) {
	t.Helper()
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	lims, err := formats.EffectiveLimits(spec, limits)
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	err = formats.Run(context.Background(), spec, art, lims, opts, sink)
	return sink, err
}

func intOf(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := evidence.AsInt(v)
	if !ok {
		t.Fatalf("not an integer: %#v", v)
	}
	return n
}

// selfByFunction sums cpu.frames self weights per function over every table.
func selfByFunction(t testing.TB, s *memSink) map[string]int64 {
	out := map[string]int64{}
	for _, tb := range s.named("cpu.frames") {
		for _, r := range tb.rows {
			out[r["function"].(string)] += intOf(t, r["self_weight"])
		}
	}
	return out
}

// selfByEvent is selfByFunction per event (each event has its own table).
func selfByEvent(t testing.TB, s *memSink) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, tb := range s.named("cpu.frames") {
		ev, _ := tb.summary.Coverage["event"].(string)
		if out[ev] == nil {
			out[ev] = map[string]int64{}
		}
		for _, r := range tb.rows {
			out[ev][r["function"].(string)] += intOf(t, r["self_weight"])
		}
	}
	return out
}

var (
	reportRow   = regexp.MustCompile(`^\s+[\d.]+%\s+(\d+)\s+\[.\]\s+(.*?)\s*$`)
	reportEvent = regexp.MustCompile(`^# Samples: \S+\s+of event '(.*)'$`)
)

// parseReport reads `perf report --stdio --no-children -F overhead,sample,sym`
// output into samples per symbol, per event section. perf names an
// unresolved symbol by its address; those sum into "[unknown]", as the
// decoder spells them.
func parseReport(t testing.TB, text string) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{}
	event := ""
	for _, ln := range strings.Split(text, "\n") {
		if m := reportEvent.FindStringSubmatch(ln); m != nil {
			event = m[1]
			continue
		}
		m := reportRow.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		sym := m[2]
		if strings.HasPrefix(sym, "0x") {
			sym = "[unknown]"
		}
		if out[event] == nil {
			out[event] = map[string]int64{}
		}
		out[event][sym] += n
	}
	if len(out) == 0 {
		t.Fatalf("no rows in perf report output:\n%s", text)
	}
	return out
}

func testdata(name string) string { return filepath.Join("..", "..", "..", "testdata", name) }
