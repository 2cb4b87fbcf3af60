package perfscript

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// decodeFile runs spec on a file through formats.Run, the public path.
var decodeFile = formatstest.DecodeFile

// parse runs Parse over r as decodeScript would, with limits and options
// validated over the spec's.
func parse(t testing.TB, r io.Reader, limits map[string]int64, opts evidence.Object, o Options) (*Result, error) {
	t.Helper()
	in, err := formatstest.Input(ScriptSpec, nil, r, limits, opts)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(context.Background(), in, r, o)
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
func selfByFunction(t testing.TB, s *formatstest.Sink) map[string]int64 {
	out := map[string]int64{}
	for _, tb := range s.Named("cpu.frames") {
		for _, r := range tb.Rows {
			out[r["function"].(string)] += intOf(t, r["self_weight"])
		}
	}
	return out
}

// selfByEvent is selfByFunction per event (each event has its own table).
func selfByEvent(t testing.TB, s *formatstest.Sink) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, tb := range s.Named("cpu.frames") {
		ev, _ := tb.Summary.Coverage["event"].(string)
		if out[ev] == nil {
			out[ev] = map[string]int64{}
		}
		for _, r := range tb.Rows {
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
