package render

import (
	"context"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/registry"
)

// The plain layout (MCP's compact text) keeps every chosen column whole:
// one tab-separated line per row, no padding, no rule, nothing cut, and
// names where the rest is in the caller's words.
func TestPlainLayout(t *testing.T) {
	var b strings.Builder
	req := rank.Request{Operation: "summarize_cpu_hotspots", Args: evidence.Object{"top": int64(20)},
		Decode: decode.Options{Specs: registry.Formats()}}
	v := &Text{W: &b, Plain: true, Full: `detail "full"`}
	if err := rank.Paths(context.Background(), req, []string{fixture("v8", "recursive-main.cpuprofile")}, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "----") || strings.Contains(l, "…") || strings.Contains(l, "  ") {
			t.Errorf("a padded, ruled or cut line: %q", l)
		}
		if f := strings.Split(l, "\t"); len(f) > 4 && f[0] != "rank" {
			rows++
		}
	}
	if rows != 20 {
		t.Errorf("%d row lines, want 20:\n%s", rows, out)
	}
	if !strings.Contains(out, "node:internal/modules/cjs/loader:1003:24") || !strings.Contains(out, `detail "full" shows every column`) ||
		strings.Contains(out, "--format jsonl") {
		t.Errorf("plain view:\n%s", out)
	}
}
