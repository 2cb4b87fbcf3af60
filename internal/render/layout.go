package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// How a column may be shortened to fit.
const (
	fixed    = iota // numbers, flags, short words: never cut
	cutMid          // names and paths: keep both ends
	cutTail         // prose: keep the start
	cutPlace        // file:line: keep more of the end, where the file name and line are
)

// column is one column of the view: a native column, or file, line and
// column joined into one location.
type column struct {
	label     string
	right     bool // numbers are right-aligned
	cells     []string
	essential bool // dropped only when nothing else is left to drop
	value     int  // of the others, lower values go first
	shrink    int
	comfort   int // a flexible column is cut to this before low-value columns go
	natural   int
	width     int
	cut       int    // cells cut to fit
	names     string // the native coordinates a location shows
	key       string // the native column's name, or the location's
}

type layout struct {
	lines  []string // header, rule, rows
	footer []string
}

// layout chooses, shortens and aligns the columns to fit w cells.
func (t *Text) layout(w int) layout {
	h := t.header
	schema := table.Lookup(h.Name)
	cols := visible(h)
	byName := map[string]evidence.Column{}
	for _, c := range cols {
		byName[c.Name] = c
	}
	baseOf := func(name string) (int, bool) {
		c, ok := byName[name]
		if !ok || schema == nil {
			return 0, false
		}
		return schema.Base(c)
	}
	var (
		out           []*column
		detail, empty []string
		constant      []string
		zeroBased     []string
		used          = map[string]bool{}
		hasFunction   bool
	)
	for _, c := range cols {
		hasFunction = hasFunction || c.Name == "function" || strings.HasSuffix(c.Name, "_function")
	}
	for i, c := range cols {
		if used[c.Name] {
			continue
		}
		if schema != nil {
			if d, ok := schema.Column(c.Name); ok && d.Detail {
				detail = append(detail, c.Name)
				continue
			}
		}
		col := &column{label: label(schema, c), key: c.Name}
		if prefix, ok := strings.CutSuffix(c.Name, "file"); ok && (prefix == "" || strings.HasSuffix(prefix, "_")) {
			if lb, ok := baseOf(prefix + "line"); ok {
				cb, hasCol := baseOf(prefix + "column")
				used[prefix+"line"], used[prefix+"column"] = true, hasCol
				col.label, col.key, col.names = prefix+"location", prefix+"location", prefix+"line"
				if hasCol {
					col.names += ", " + prefix + "column"
				}
				if lb == 0 || (hasCol && cb == 0) {
					zeroBased = append(zeroBased, col.label)
				}
				for _, r := range t.rows {
					col.cells = append(col.cells, location(r[c.Name], r[prefix+"line"], lb, r[prefix+"column"], cb, hasCol))
				}
				// A location ranks with the function it places; beside a
				// test id, which names its file already, it may go.
				col.shrink, col.comfort, col.essential = cutPlace, 30, hasFunction
				if len(t.rows) > 0 && allSame(col.cells) && col.cells[0] == "-" {
					empty = append(empty, c.Name+", "+col.names)
					continue
				}
				out = append(out, col)
				continue
			}
		}
		base, based := baseOf(c.Name)
		for _, r := range t.rows {
			col.cells = append(col.cells, t.cell(c, r, base, based))
		}
		col.right = numeric(c)
		col.essential = i == 0 || essential(schema, c)
		if c.Name == table.ArtifactColumn {
			col.label = "artifact"
		}
		switch {
		case lowValue(c.Name):
			col.value = 0
		case col.right:
			col.value = 2 // counts and sizes say more than labels
		default:
			col.value = 1
		}
		if !col.right && c.Type != evidence.TypeBool {
			col.shrink, col.comfort = cutTail, 16
			switch {
			case c.Name == "text":
				col.comfort = 1 << 30 // whole lines before any other column
			case strings.HasSuffix(c.Name, "message") || c.Name == "error":
				col.comfort = 30
			case c.Name == "nodeid":
				col.shrink, col.comfort = cutMid, 40
			case c.Name == table.ArtifactColumn:
				col.shrink, col.comfort = cutMid, 16
			case midCut(c.Name):
				col.shrink, col.comfort = cutMid, 28
			}
		}
		// A column with nothing in any row says nothing; one with the same
		// value in every row says it once, under the table.
		if len(t.rows) > 0 && allSame(col.cells) {
			switch {
			case col.cells[0] == "-":
				empty = append(empty, c.Name)
				continue
			case len(t.rows) > 1 && !col.essential:
				constant = append(constant, c.Name+"="+col.cells[0])
				continue
			}
		}
		out = append(out, col)
	}
	seriesTellApart(out)
	kept, noRoom := out, []string(nil)
	if w > 0 {
		kept, noRoom = fit(out, w)
	}

	var l layout
	for _, c := range kept {
		for i, s := range c.cells {
			if w > 0 && Width(s) > c.width {
				c.cut++
				switch c.shrink {
				case cutMid:
					c.cells[i] = cutMiddle(s, c.width, 2)
				case cutPlace:
					c.cells[i] = cutMiddle(s, c.width, 3)
				default:
					c.cells[i] = cutEnd(s, c.width)
				}
			}
		}
	}
	row := func(get func(*column) string) string {
		var b strings.Builder
		for i, c := range kept {
			s := get(c)
			if w <= 0 {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(s)
				continue
			}
			pad := strings.Repeat(" ", max(0, c.width-Width(s)))
			if c.right {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s + pad)
			}
			if i < len(kept)-1 {
				b.WriteString(strings.Repeat(" ", gap))
			}
		}
		return b.String()
	}
	if w <= 0 {
		l.lines = append(l.lines, row(func(c *column) string { return c.label }))
	} else {
		l.lines = append(l.lines, row(func(c *column) string { return cutEnd(c.label, c.width) }))
		l.lines = append(l.lines, row(func(c *column) string { return strings.Repeat("-", c.width) }))
	}
	for i := range t.rows {
		l.lines = append(l.lines, row(func(c *column) string { return c.cells[i] }))
	}

	var hidden []string
	if len(detail) > 0 {
		hidden = append(hidden, strings.Join(detail, ", ")+" (full text)")
	}
	if len(empty) > 0 {
		hidden = append(hidden, strings.Join(empty, ", ")+" (empty)")
	}
	if len(constant) > 0 {
		hidden = append(hidden, strings.Join(constant, ", ")+" (every row)")
	}
	if len(noRoom) > 0 {
		hidden = append(hidden, strings.Join(noRoom, ", ")+fmt.Sprintf(" (no room in %d columns)", w))
	}
	if len(hidden) > 0 {
		l.footer = append(l.footer, "hidden: "+strings.Join(hidden, "; ")+"; "+t.full()+" shows every column")
	}
	var cut []string
	for _, c := range kept {
		if c.cut > 0 {
			cut = append(cut, fmt.Sprintf("%s in %d %s", c.label, c.cut, plural(c.cut, "row", "rows")))
		}
	}
	if len(cut) > 0 {
		l.footer = append(l.footer, fmt.Sprintf("cut to fit %d columns (…): %s; %s has the whole text", w, strings.Join(cut, ", "), t.full()))
	}
	var shown, native []string
	for _, name := range zeroBased {
		for _, c := range kept {
			if c.label == name {
				shown, native = append(shown, name), append(native, c.names)
			}
		}
	}
	if len(shown) > 0 && len(t.rows) > 0 {
		l.footer = append(l.footer, fmt.Sprintf("%s: file:line[:column], 1-based as editors count; the JSONL keeps the native 0-based %s",
			strings.Join(shown, ", "), strings.Join(native, ", ")))
	}
	return l
}

// fit drops and narrows columns until a line fits w cells: flexible
// columns are cut to a comfortable width first, then low-value columns
// go from the right, then flexible columns are cut further, then, only
// if still too wide, essential columns go from the right. It returns the
// columns kept, their widths set, and the names of those dropped.
func fit(cols []*column, w int) ([]*column, []string) {
	for _, c := range cols {
		c.natural = Width(c.label)
		for _, s := range c.cells {
			c.natural = max(c.natural, Width(s))
		}
	}
	least := func(c *column) int { // narrowest a column goes
		if c.shrink == fixed {
			return c.natural
		}
		return min(c.natural, max(Width(c.label), 8))
	}
	comfortable := func(c *column) int {
		if c.shrink == fixed {
			return c.natural
		}
		return min(c.natural, max(c.comfort, least(c)))
	}
	need := func(f func(*column) int) int {
		n := gap * max(0, len(cols)-1)
		for _, c := range cols {
			n += f(c)
		}
		return n
	}
	var dropped []string
	drop := func(f func(*column) int, may func(*column) bool) {
		for need(f) > w {
			i := len(cols) - 1
			for i > 0 && !may(cols[i]) {
				i--
			}
			if i <= 0 {
				return
			}
			dropped = append(dropped, cols[i].key)
			cols = append(cols[:i:i], cols[i+1:]...)
		}
	}
	for v := range 3 {
		drop(comfortable, func(c *column) bool { return !c.essential && c.value <= v })
	}
	drop(least, func(*column) bool { return true })
	for _, c := range cols {
		c.width = least(c)
	}
	room := w - need(func(c *column) int { return c.width })
	// Share the room evenly: first up to each column's comfortable width,
	// then up to its natural one, so no single column takes it all.
	share := func(target func(*column) int) {
		for room > 0 {
			var short []*column
			for _, c := range cols {
				if c.width < target(c) {
					short = append(short, c)
				}
			}
			if len(short) == 0 {
				return
			}
			each := max(1, room/len(short))
			for _, c := range short {
				add := min(each, target(c)-c.width, room)
				c.width += add
				room -= add
			}
		}
	}
	share(comfortable)
	share(func(c *column) int { return c.natural })
	return cols, dropped
}

// label is a column's header: its name, and its unit where the values do
// not carry one. Weights and shares read as in pprof (self, self%).
func label(schema *table.Schema, c evidence.Column) string {
	name := c.Name
	if c.Unit == "ratio" {
		if stem, ok := strings.CutSuffix(name, "_share"); ok {
			return stem + "%"
		}
		return name + "%"
	}
	if schema != nil {
		if d, ok := schema.Column(c.Name); ok && d.Unit == table.PerTable {
			return strings.TrimSuffix(name, "_weight") // the unit is stated above the table
		}
	}
	switch c.Unit {
	case "", "s", "count", name:
		return name
	}
	if strings.HasSuffix(name, c.Unit) || strings.HasPrefix(name, c.Unit) {
		return name
	}
	return name + " (" + c.Unit + ")"
}

// essential: the columns a ranking means — rank, names, locations,
// outcomes, messages, text, weights and shares.
func essential(schema *table.Schema, c evidence.Column) bool {
	switch c.Name {
	case "rank", "function", "nodeid", "outcome", "message", "text", "name", "pointer", "location", "metric", "source":
		return true
	case table.ArtifactColumn:
		return true // shown only when rows of several artifacts mix
	}
	if strings.HasSuffix(c.Name, "_function") || strings.HasSuffix(c.Name, "weight") || c.Unit == "ratio" || c.Unit == "percent" {
		return true
	}
	if schema != nil {
		if d, ok := schema.Column(c.Name); ok && d.Unit == table.PerTable {
			return true
		}
	}
	return false
}

// lowValue: columns that classify a row rather than measure or place it.
func lowValue(name string) bool {
	switch name {
	case "symbolization", "kind", "terminator", "escaped", "worker", "module", "thread", "process":
		return true
	}
	return false
}

// seriesTellApart raises the thread and process columns to the value of
// counts when the same function shows in several rows: a frame ranked
// once per thread or process would otherwise read as one frame listed
// twice, so the series goes before module and other labels.
func seriesTellApart(cols []*column) {
	var fn *column
	for _, c := range cols {
		if c.key == "function" {
			fn = c
		}
	}
	if fn == nil {
		return
	}
	seen := map[string]bool{}
	dup := false
	for _, s := range fn.cells {
		dup = dup || seen[s]
		seen[s] = true
	}
	if !dup {
		return
	}
	for _, c := range cols {
		if c.key == "thread" || c.key == "process" {
			c.value = 2
		}
	}
}

// midCut: names and paths, whose ends say the most.
func midCut(name string) bool {
	for _, s := range []string{"function", "file", "nodeid", "name", "pointer", "uri", "url", "path", "module", "thread", "process", "artifact_id"} {
		if name == s || strings.HasSuffix(name, "_"+s) {
			return true
		}
	}
	return false
}

func allSame(xs []string) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// location writes a native place the way editors take it: file:line or
// file:line:column, counted from 1. A coordinate below its base is the
// producer's "unavailable" and is left out.
func location(file, line any, lineBase int, col any, colBase int, hasCol bool) string {
	f, _ := file.(string)
	f = Safe(f)
	l, ok := evidence.AsInt(line)
	if !ok || l < int64(lineBase) {
		if f == "" {
			return "-"
		}
		return f
	}
	s := f + ":" + strconv.FormatInt(l-int64(lineBase)+1, 10)
	if f == "" {
		s = "line " + strconv.FormatInt(l-int64(lineBase)+1, 10)
	}
	if c, ok := evidence.AsInt(col); hasCol && ok && c >= int64(colBase) {
		s += ":" + strconv.FormatInt(c-int64(colBase)+1, 10)
	}
	return s
}

// cell writes one value for people; every string is made safe.
func (t *Text) cell(c evidence.Column, r evidence.Object, base int, based bool) string {
	v := r[c.Name]
	if v == nil {
		return "-"
	}
	if based {
		if n, ok := evidence.AsInt(v); ok && n < int64(base) {
			return "-" // the producer's "unavailable"
		}
	}
	if c.Unit == "ratio" {
		if f, ok := evidence.AsFloat(v); ok {
			return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
		}
	}
	if c.Unit == "s" {
		if f, ok := evidence.AsFloat(v); ok {
			return seconds(f)
		}
	}
	if c.Unit == "percent" {
		if f, ok := evidence.AsFloat(v); ok {
			return strconv.FormatFloat(f, 'f', 1, 64) + "%"
		}
	}
	if numeric(c) {
		return number(v)
	}
	if c.Name == table.ArtifactColumn {
		return t.artifactName(fmt.Sprint(v))
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case bool:
		return strconv.FormatBool(x)
	default:
		b, err := evidence.Canonical(v)
		if err != nil {
			return Safe(fmt.Sprint(v))
		}
		s = string(b)
	}
	if s == "" {
		if c.Name == "function" || strings.HasSuffix(c.Name, "_function") {
			// V8 writes "" for a function without a name; the decoder
			// says when that is what it is.
			if r["symbolization"] == table.Anonymous {
				return "(anonymous)"
			}
		}
		return `""`
	}
	if strings.HasSuffix(c.Name, "message") {
		// One line per row: the message's first line; the rest is in the
		// JSONL.
		if first, rest, ok := strings.Cut(strings.TrimLeft(s, "\n"), "\n"); ok {
			s = first
			if strings.TrimSpace(rest) != "" {
				s += " …"
			}
		}
	}
	return Safe(s)
}

// artifactName tells a row's artifact by its file name, less the
// extension all the table's artifacts share (recursive-main,
// recursive-worker), else by a short digest.
func (t *Text) artifactName(id string) string {
	a, ok := t.artifacts[id]
	if !ok || a.name == "" {
		return short(id)
	}
	ext := ""
	for i, other := range t.header.ArtifactIDs {
		o := t.artifacts[other].name
		e := o[max(0, strings.LastIndex(o, ".")):]
		if !strings.Contains(o, ".") || (i > 0 && e != ext) {
			return Safe(a.name)
		}
		ext = e
	}
	return Safe(strings.TrimSuffix(a.name, ext))
}
