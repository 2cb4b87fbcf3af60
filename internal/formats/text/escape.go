package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Escape renders native bytes as text for a canonical row. Valid UTF-8 is
// returned unchanged with escaped=false. Otherwise every byte that is not
// part of a valid UTF-8 sequence becomes \xHH, every backslash becomes \\,
// and escaped=true, so the bytes can be recovered exactly (Unescape) and
// replacement characters never pass for native text.
func Escape(b []byte) (string, bool) {
	if utf8.Valid(b) {
		return string(b), false
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/4)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			sb.WriteString(`\x`)
			sb.WriteByte(hexDigits[b[i]>>4])
			sb.WriteByte(hexDigits[b[i]&0xF])
			i++
			continue
		case r == '\\':
			sb.WriteString(`\\`)
		default:
			sb.Write(b[i : i+n])
		}
		i += n
	}
	return sb.String(), true
}

// Unescape recovers the native bytes of a text value written by Escape.
func Unescape(s string, escaped bool) ([]byte, error) {
	if !escaped {
		return []byte(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]):
			out = append(out, unhex(s[i+2])<<4|unhex(s[i+3]))
			i += 3
		default:
			return nil, fmt.Errorf("text: bad escape at byte %d", i)
		}
	}
	return out, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}
