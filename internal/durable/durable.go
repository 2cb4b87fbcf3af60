// Package durable holds the crash-safe steps of publishing files, shared
// by evidence bundles and the conversion cache: a file is created once,
// written, synced and closed before it counts; a directory is synced after
// entries appear in it; and what reaches a file is hashed and counted on
// the way, so a recorded digest and size are those of the bytes written.
//
// It imports nothing of flameox.
package durable

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
)

// WriteFile creates path, which must not exist, with data and perm, and
// syncs it.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return SyncClose(f)
}

// SyncClose flushes a file to stable storage and closes it.
func SyncClose(f *os.File) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SyncDir makes a directory's entries durable (new files, renames).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Writer writes to W and hashes (SHA-256) and counts what W accepted.
type Writer struct {
	W io.Writer
	h hash.Hash
	n int64
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w, h: sha256.New()} }

func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.W.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// Sum is the hex SHA-256 of the bytes written.
func (w *Writer) Sum() string { return hex.EncodeToString(w.h.Sum(nil)) }

// Size is the number of bytes written.
func (w *Writer) Size() int64 { return w.n }
