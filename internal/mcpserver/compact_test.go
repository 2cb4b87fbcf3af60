package mcpserver

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

func TestShortIDsUniqueWithinResult(t *testing.T) {
	a := "sha256:" + strings.Repeat("a", 20) + strings.Repeat("1", 44)
	b := "sha256:" + strings.Repeat("a", 20) + strings.Repeat("2", 44)
	c := "sha256:" + strings.Repeat("c", 64)
	got := shortIDs([]string{a, b, c})
	if got[a] != strings.Repeat("a", 20)+"1" || got[b] != strings.Repeat("a", 20)+"2" {
		t.Errorf("ids sharing 20 hex digits: %q %q", got[a], got[b])
	}
	if got[c] != strings.Repeat("c", minShortID) {
		t.Errorf("a lone id: %q", got[c])
	}
}

// A compact table is its rows once, as arrays in column order, the
// artifact column shortened; the full digest stays in the artifact list.
func TestCompactTable(t *testing.T) {
	id := "sha256:" + strings.Repeat("ab", 32)
	c := newCollector(DefaultResultBound)
	c.add(evidence.Object{"kind": "artifact", "artifact_id": id, "path": "/p/x.cpuprofile", "name": "x.cpuprofile", "format": "v8-cpuprofile"}, false)
	c.add(evidence.Object{"kind": "table", "table_id": "t", "name": "cpu.hotspots", "operation": "summarize_cpu_hotspots", "artifact_ids": []any{id},
		"columns": []any{evidence.Object{"name": "rank", "type": "int", "unit": nil}, evidence.Object{"name": "artifact_id", "type": "string", "unit": nil},
			evidence.Object{"name": "self_weight", "type": "double", "unit": "samples"}}}, false)
	c.add(evidence.Object{"kind": "row", "table_id": "t", "values": evidence.Object{"rank": 1, "artifact_id": id, "self_weight": 3}}, false)
	c.add(evidence.Object{"kind": "summary", "table_id": "t", "rows_emitted": 1, "rows_observed": 1, "complete": true,
		"limitations": []any{"decode with --option threads=true"}}, false)
	v := c.compactValue("analysis.")
	tab := v["tables"].([]any)[0].(evidence.Object)
	row := tab["rows"].([]any)[0].([]any)
	if len(row) != 3 || row[1] != strings.Repeat("ab", 6) || tab["units"].(evidence.Object)["self_weight"] != "samples" {
		t.Errorf("compact table = %v", tab)
	}
	if l := tab["summary"].(evidence.Object)["limitations"].([]any)[0]; l != "decode with analysis.options.threads=true" {
		t.Errorf("limitation = %v", l)
	}
	b, _ := evidence.Canonical(v)
	if strings.Count(string(b), strings.Repeat("ab", 32)) != 1 {
		t.Errorf("the full digest is not there exactly once: %s", b)
	}
	text := c.compactText("analysis.")
	if !strings.Contains(text, "1\t3") || !strings.Contains(text, "artifact: abababababab") {
		t.Errorf("compact text:\n%s", text)
	}
}

func TestBoundTextCutsWholeLines(t *testing.T) {
	s := strings.Repeat("0123456789\n", 100)
	got := boundText(s, 105)
	if !strings.HasPrefix(got, strings.Repeat("0123456789\n", 9)+"… 91 more lines") {
		t.Errorf("bounded = %q", got)
	}
	if boundText("short\n", 100) != "short\n" {
		t.Error("a text within the bound was changed")
	}
}
