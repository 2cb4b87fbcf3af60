package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flameox/flameox/internal/durable"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// copyBuffer is the read size for native copies and digest checks.
const copyBuffer = 1 << 20

// copyNative copies a's bytes to dst, hashing them on the way. It reads at
// most a.Size+1 bytes, so a file that is still growing cannot keep it busy,
// and removes dst unless the bytes match the artifact's id and size.
func copyNative(ctx context.Context, a *evidence.Artifact, dst string) (err error) {
	// The one path check: a FIFO named by a forged block must not hang the
	// open, nor a device be copied forever.
	src, _, err := formats.OpenRegular(a.Path, a.ID)
	if err != nil {
		f := evidence.AsFailure(err, evidence.CodeIOFailure)
		f.Message = "native artifact: " + f.Message
		return f
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "create native copy").At(a.Path, a.ID)
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(dst)
		}
	}()
	dw := durable.NewWriter(out)
	var r io.Reader = io.LimitReader(src, a.Size+1)
	if ctx != nil {
		r = &ctxReader{ctx: ctx, r: r}
	}
	n, err := io.CopyBuffer(dw, r, make([]byte, copyBuffer))
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "copy native artifact").At(a.Path, a.ID)
	}
	if n != a.Size {
		msg := fmt.Sprintf("native artifact holds %d bytes, its artifact block says %d", n, a.Size)
		if n > a.Size {
			msg = fmt.Sprintf("native artifact holds more than the %d bytes its artifact block says", a.Size)
		}
		return (&evidence.Failure{Code: evidence.CodeIntegrity, Message: msg,
			Details: evidence.Object{"expected_size": a.Size}}).At(a.Path, a.ID)
	}
	if got := dw.Sum(); got != a.Digest() {
		return (&evidence.Failure{Code: evidence.CodeIntegrity,
			Message: "native artifact bytes do not match the artifact id",
			Details: evidence.Object{"expected_sha256": a.Digest(), "actual_sha256": got}}).At(a.Path, a.ID)
	}
	if err := durable.SyncClose(out); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "write native copy").At(a.Path, a.ID)
	}
	return nil
}

// ctxReader ends a read when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, evidence.Wrap(evidence.CodeCancelled, err, "copy native artifact")
	}
	return c.r.Read(p)
}

// verifyFile checks that path is a regular file of size bytes whose
// SHA-256 is sum (hex), reading at most size+1 bytes.
func verifyFile(path string, size int64, sum string) error {
	f, _, err := formats.OpenRegular(path, "")
	if err != nil {
		return errors.New(evidence.AsFailure(err, evidence.CodeIOFailure).Message)
	}
	defer f.Close()
	return verifyOpen(f, size, sum)
}

func verifyOpen(f *os.File, size int64, sum string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	h := sha256.New()
	// A small table file needs no large buffer: across a store of
	// thousands, the buffers would cost more than the hashing.
	n, err := io.CopyBuffer(h, io.LimitReader(f, size+1), make([]byte, min(copyBuffer, max(size+1, 4096))))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("size is not %d bytes as the manifest says", size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("sha256 is %s, the manifest says %s", got, sum)
	}
	return nil
}

// mkdirSynced creates dir if absent and syncs its parent, so the new
// entry survives a crash.
func mkdirSynced(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case errors.Is(err, os.ErrExist):
		st, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return errors.New("not a directory")
		}
		return nil
	case errors.Is(err, os.ErrNotExist):
		if err := mkdirSynced(filepath.Dir(dir)); err != nil {
			return err
		}
		return mkdirSynced(dir)
	case err != nil:
		return err
	}
	return durable.SyncDir(filepath.Dir(dir))
}
