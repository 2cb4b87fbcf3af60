package formats

import (
	"bytes"
	"testing"
)

func TestSniffObject(t *testing.T) {
	has := func(p []byte) Verdict {
		if bytes.Contains(p, []byte(`"key"`)) {
			return Yes
		}
		return NeedMore
	}
	long := append(append([]byte("{"), bytes.Repeat([]byte(" "), SniffBytes)...), `"key":1}`...)
	// A document that leads with white space is cut at the same bound as any
	// other: the prefix is cut, not the whole file, so it needs more.
	ws := append(bytes.Repeat([]byte("\n"), 100), long[:SniffBytes-100]...)
	for _, c := range []struct {
		name   string
		prefix []byte
		bom    bool
		want   Verdict
	}{
		{"empty", nil, false, NeedMore},
		{"white space only", []byte(" \n\t"), false, NeedMore},
		{"not an object", []byte(`[{"key":1}]`), false, No},
		{"match", []byte(`  {"key": 1}`), false, Yes},
		{"whole file, no match", []byte(`{"other": 1}`), false, No},
		{"cut, no match yet", long[:SniffBytes], false, NeedMore},
		{"cut after leading white space", ws, false, NeedMore},
		{"bom refused", append([]byte{0xEF, 0xBB, 0xBF}, `{"key":1}`...), false, No},
		{"bom allowed", append([]byte{0xEF, 0xBB, 0xBF}, `{"key":1}`...), true, Yes},
	} {
		if got := SniffObject(c.prefix, c.bom, has); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
