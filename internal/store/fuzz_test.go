package store

import (
	"os"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// FuzzParseEntry: an index entry file from another process or host is
// input; any bytes give an entry or an error, never a panic, and an entry
// read back encodes to exactly the bytes it was read from (so no two files
// read as one entry).
func FuzzParseEntry(f *testing.F) {
	seed, err := os.ReadFile("testdata/entry.json") // written by flameox-preserve --label
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"layout":"flameox-index/1"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := parseEntry(data)
		if err != nil {
			return
		}
		out, err := evidence.Canonical(e)
		if err != nil {
			t.Fatalf("entry read back does not encode: %v", err)
		}
		if string(append(out, '\n')) != string(data) {
			t.Fatalf("entry %q encodes as %q", data, out)
		}
	})
}
