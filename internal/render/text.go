package render

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe makes native text printable on a terminal without letting it act
// on the terminal: C0 and C1 controls (ESC, CR, BEL…), DEL, bidi
// overrides and isolates, line separators and invalid UTF-8 are written
// as escapes, so a function name or a log line can neither clear the
// screen, retitle the window, overwrite a row nor reorder what follows.
// The JSONL keeps the exact text; only this view escapes.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune: controls, and the format characters that move or reorder
// text (bidi embeddings, overrides, isolates and marks, line and
// paragraph separators).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// runeWidth is the terminal cells a printable rune takes: 0 for
// combining marks and joiners, 2 for East Asian wide and fullwidth
// characters (and emoji), 1 otherwise.
func runeWidth(r rune) int {
	switch {
	case r == 0x200b || r == 0x200d || (r >= 0xfe00 && r <= 0xfe0f):
		return 0
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// Width is the display width of printable text in terminal cells.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// cutEnd keeps the start of s within w cells, ending in "…".
func cutEnd(s string, w int) string {
	if Width(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	return cutRunes(s, w-1) + "…"
}

// cutMiddle keeps both ends of s within w cells, joined by "…", the
// start taking 1/part of them: a path keeps its root and its file name, a
// qualified name its package and its function.
func cutMiddle(s string, w, part int) string {
	if Width(s) <= w {
		return s
	}
	if w <= 1 {
		return cutEnd(s, w)
	}
	r := []rune(s)
	head := (w - 1) / part
	tail := w - 1 - head
	i, n := len(r), 0
	for i > 0 && n+runeWidth(r[i-1]) <= tail {
		i--
		n += runeWidth(r[i])
	}
	return cutRunes(s, head) + "…" + string(r[i:])
}

// wrap breaks prose into lines of at most w cells, at spaces where it
// can (a word longer than a line is cut); continuation lines are indented
// by two spaces.
func wrap(s string, w int) []string {
	s = Safe(s)
	if Width(s) <= w || w < 8 {
		return []string{s}
	}
	const indent = "  "
	var out []string
	cur, start := "", true // start: nothing on the line yet but its indent
	for _, word := range strings.Fields(s) {
		for word != "" {
			sep := " "
			if start {
				sep = ""
			}
			room := w - Width(cur) - len(sep)
			switch {
			case Width(word) <= room:
				cur, start, word = cur+sep+word, false, ""
			case !start && Width(word) <= w-len(indent):
				out = append(out, cur)
				cur, start = indent, true
			default:
				head := cutRunes(word, room)
				cur, word = cur+sep+head, word[len(head):]
				out = append(out, cur)
				cur, start = indent, true
			}
		}
	}
	if !start {
		out = append(out, cur)
	}
	return out
}

// cutRunes is the longest prefix of s at most w cells wide.
func cutRunes(s string, w int) string {
	n := 0
	for i, r := range s {
		if n+runeWidth(r) > w {
			return s[:i]
		}
		n += runeWidth(r)
	}
	return s
}
