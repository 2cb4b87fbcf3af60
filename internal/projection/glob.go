package projection

import (
	"regexp"
	"strings"
)

// NameGlob compiles a name pattern for filters over identities that are
// not paths (test node ids, observation names): * matches any text, ?
// one character, everything else itself; the whole name must match.
func NameGlob(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}
