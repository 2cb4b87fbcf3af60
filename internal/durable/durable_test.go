package durable

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFile(p, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	st, _ := os.Stat(p)
	if err != nil || string(b) != "data" || st.Mode().Perm() != 0o600 {
		t.Fatalf("%q %v %v", b, err, st.Mode())
	}
	if err := WriteFile(p, []byte("again"), 0o600); !errors.Is(err, os.ErrExist) {
		t.Fatalf("an existing file was overwritten: %v", err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

// short accepts at most n bytes of each write.
type short struct{ n int }

func (s short) Write(p []byte) (int, error) {
	if len(p) > s.n {
		return s.n, errors.New("short write")
	}
	return len(p), nil
}

func TestWriterCountsWhatWasAccepted(t *testing.T) {
	w := NewWriter(short{3})
	if n, err := w.Write([]byte("ab")); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := w.Write([]byte("cdef")); n != 3 || err == nil {
		t.Fatal(n, err)
	}
	want := sha256.Sum256([]byte("abcde"))
	if w.Size() != 5 || w.Sum() != hex.EncodeToString(want[:]) {
		t.Fatalf("size %d sum %s", w.Size(), w.Sum())
	}
}
