package mcpserver

import (
	"fmt"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/render"
	"github.com/flameox/flameox/internal/table"
)

// Detail levels of a tool result. Compact is sized for a model's context:
// the rows once, as one text line each (the terminal view's columns,
// unpadded, nothing cut) and as value arrays in structuredContent, with
// short artifact ids. Full is every block whole: the canonical JSONL text
// and the blocks as objects.
const (
	DetailCompact = "compact"
	DetailFull    = "full"
)

// fullHint is how a compact view names where the rest is.
const fullHint = `detail "full"`

// minShortID is the shortest artifact id prefix a compact result uses:
// the terminal view's, so the text and the structured ids agree.
const minShortID = 12

// shortIDs maps each artifact id to the shortest hex prefix of its digest,
// at least minShortID long, that no other id of the result shares.
func shortIDs(ids []string) map[string]string {
	hexOf := func(id string) string { return strings.TrimPrefix(id, "sha256:") }
	out := map[string]string{}
	for _, id := range ids {
		h := hexOf(id)
		n := min(minShortID, len(h))
		for ; n < len(h); n++ {
			unique := true
			for _, other := range ids {
				if other != id && strings.HasPrefix(hexOf(other), h[:n]) {
					unique = false
					break
				}
			}
			if unique {
				break
			}
		}
		out[id] = h[:n]
	}
	return out
}

// consoleTail is how much of each console stream a compact capture keeps:
// the end, where a failing program says why.
const consoleTail = 512

// compactCapture is the capture block's outcome and provenance, less the
// command line, paths, environment and most console text (detail "full"
// has them).
func compactCapture(o evidence.Object) any {
	if o == nil {
		return nil
	}
	out := evidence.Object{}
	for _, k := range []string{"capture_id", "outcome", "provider", "exit", "limit", "duration_seconds", "notes", "bundle_id"} {
		if v, ok := o[k]; ok {
			out[k] = v
		}
	}
	if cons, ok := o["console"].(evidence.Object); ok {
		c := evidence.Object{}
		for name, v := range cons {
			s, ok := v.(evidence.Object)
			if !ok {
				continue
			}
			e := evidence.Object{}
			for _, k := range []string{"mode", "observed_bytes", "omitted_bytes", "artifact_id"} {
				e[k] = s[k]
			}
			if text, ok := s["text"].(string); ok && text != "" {
				e["tail"] = cutStart(text, consoleTail)
			}
			c[name] = e
		}
		out["console"] = c
	}
	return out
}

// cutStart keeps the last n bytes of s, at a character boundary.
func cutStart(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return "…" + s[i:]
}

// compactArtifact is an artifact block with its short id beside the full
// one; the full digest appears here once, not in every row.
func compactArtifact(o evidence.Object, short map[string]string) evidence.Object {
	out := evidence.Object{}
	for _, k := range []string{"artifact_id", "name", "path", "format", "role", "size", "capture_id"} {
		if v, ok := o[k]; ok {
			out[k] = v
		}
	}
	if id, ok := o["artifact_id"].(string); ok {
		out["id"] = short[id]
	}
	return out
}

// compactTable is a result table as column names and row arrays, artifact
// ids shortened; the summary without its block fields.
func compactTable(t *resultTable, short map[string]string, nested string) evidence.Object {
	h := t.header
	var names []any
	units := evidence.Object{}
	if cols, ok := h["columns"].([]any); ok {
		for _, c := range cols {
			co, _ := c.(evidence.Object)
			name, _ := co["name"].(string)
			names = append(names, name)
			if u, ok := co["unit"].(string); ok && u != "" {
				units[name] = u
			}
		}
	}
	shorten := func(v any) any {
		if s, ok := v.(string); ok {
			if id, ok := short[s]; ok {
				return id
			}
		}
		return v
	}
	rows := make([]any, len(t.rows))
	for i, r := range t.rows {
		cells := make([]any, len(names))
		for j, n := range names {
			cells[j] = r[n.(string)]
			if n == table.ArtifactColumn {
				cells[j] = shorten(cells[j])
			}
		}
		rows[i] = cells
	}
	var ids []any
	if xs, ok := h["artifact_ids"].([]any); ok {
		for _, x := range xs {
			ids = append(ids, shorten(x))
		}
	}
	out := evidence.Object{
		"table_id": h["table_id"], "name": h["name"], "operation": h["operation"], "format": h["format"],
		"arguments": h["arguments"], "artifact_ids": orEmpty(ids), "columns": orEmpty(names), "units": units,
		"rows": rows, "summary": nil,
	}
	if t.summary != nil {
		s := evidence.Object{}
		for k, v := range t.summary {
			if k != "schema" && k != "kind" && k != "table_id" {
				s[k] = v
			}
		}
		spellLimitations(s, nested)
		out["summary"] = s
	}
	return out
}

func orEmpty(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

// artifactIDs lists the artifact ids the result mentions, in order.
func (c *collector) artifactIDs() []string {
	var ids []string
	seen := map[string]bool{}
	add := func(v any) {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "sha256:") && !seen[s] {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	for _, a := range c.artifacts {
		add(a["artifact_id"])
	}
	for _, t := range c.tables {
		if xs, ok := t.header["artifact_ids"].([]any); ok {
			for _, x := range xs {
				add(x)
			}
		}
		for _, r := range t.rows {
			add(r[table.ArtifactColumn])
		}
	}
	return ids
}

// compactValue is the evidence that arrived, compact.
func (c *collector) compactValue(nested string) evidence.Object {
	short := shortIDs(c.artifactIDs())
	arts := make([]any, len(c.artifacts))
	for i, a := range c.artifacts {
		arts[i] = compactArtifact(a, short)
	}
	tables := make([]any, len(c.tables))
	for i, t := range c.tables {
		tables[i] = compactTable(t, short, nested)
	}
	bundles := make([]any, len(c.bundles))
	for i, b := range c.bundles {
		bundles[i] = evidence.Object{"bundle_id": b["bundle_id"], "uri": bundleURI(fmt.Sprint(b["bundle_id"]))}
	}
	return evidence.Object{"capture": compactCapture(c.capture), "artifacts": arts, "tables": tables, "bundles": bundles}
}

// compactText is the terminal view of every result table, laid out plain:
// header lines, one tab-separated line per row, what was hidden, the
// limitations. Without a table, the capture and artifacts that arrived.
func (c *collector) compactText(nested string) string {
	var b strings.Builder
	v := &render.Text{W: &b, Plain: true, Full: fullHint}
	for _, a := range c.artifacts {
		if art, err := evidence.ArtifactFrom(a); err == nil {
			_ = v.Pass(art)
		}
	}
	if c.capture != nil {
		_ = v.Pass(&evidence.Raw{Obj: c.capture})
	}
	tables := 0
	for _, t := range c.tables {
		h, err := evidence.TableFrom(t.header)
		if err != nil {
			continue
		}
		s := &evidence.Summary{TableID: h.ID}
		if t.summary != nil {
			if s, err = evidence.SummaryFrom(t.summary); err != nil {
				continue
			}
		} else {
			s.Limitations = []string{"the table ended without a summary: its rows are what arrived"}
		}
		for i, l := range s.Limitations {
			s.Limitations[i] = spell(l, nested)
		}
		_ = v.Begin(h)
		for _, r := range t.rows {
			_ = v.Row(r)
		}
		_ = v.End(s)
		tables++
	}
	if tables == 0 {
		if c.capture != nil {
			fmt.Fprintf(&b, "capture %v: %v, outcome %v\n", c.capture["capture_id"], providerName(c.capture), c.capture["outcome"])
		}
		short := shortIDs(c.artifactIDs())
		for _, a := range c.artifacts {
			id, _ := a["artifact_id"].(string)
			fmt.Fprintf(&b, "artifact %s: %s (%v, %v, %v bytes)\n", short[id], render.Safe(fmt.Sprint(a["name"])), a["role"], a["format"], a["size"])
		}
	}
	return b.String()
}

func providerName(capture evidence.Object) string {
	p, _ := capture["provider"].(evidence.Object)
	name := fmt.Sprint(p["name"])
	if v, ok := p["version"].(string); ok {
		name += " " + v
	}
	return name
}

// bundleURI is the evidence resource of a preserved bundle.
func bundleURI(id string) string { return bundleScheme + strings.TrimPrefix(id, "sha256:") }

const bundleScheme = "flameox://bundle/"
