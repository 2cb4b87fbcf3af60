package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
)

// hashSettled hashes exactly size bytes of path: the size recorded when
// the file was settled. A shorter file, or any byte beyond size (a
// detached process still writing), is an INTEGRITY_FAILURE, so hashing
// never follows a growing file.
func hashSettled(path string, size int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "capture: open %s", path)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, size))
	if err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "capture: read %s", path)
	}
	if n < size {
		return "", &evidence.Failure{Code: evidence.CodeIntegrity,
			Message:  fmt.Sprintf("capture: %s shrank from %d to %d bytes after it was settled", path, size, n),
			Location: evidence.Location{Path: path}}
	}
	var one [1]byte
	if m, _ := f.Read(one[:]); m > 0 {
		return "", &evidence.Failure{Code: evidence.CodeIntegrity,
			Message:  fmt.Sprintf("capture: %s grew past its settled size of %d bytes; a process outside the workload's tree may still be writing it", path, size),
			Location: evidence.Location{Path: path, Offset: size}}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// artifactOf settles and hashes one staged file.
func artifactOf(path, role, format string, producer evidence.Producer, captureID string) (*evidence.Artifact, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: stat %s", path)
	}
	return artifactSized(path, st.Size(), role, format, producer, captureID)
}

func artifactSized(path string, size int64, role, format string, producer evidence.Producer, captureID string) (*evidence.Artifact, error) {
	id, err := hashSettled(path, size)
	if err != nil {
		return nil, err
	}
	return &evidence.Artifact{ID: id, Path: path, Size: size, Name: filepath.Base(path),
		Role: role, Format: format, Producer: producer, CaptureID: captureID}, nil
}

// staged is one declared output found after the workload.
type staged struct {
	role Role
	path string
}

// collect finds each role's files in dir. Only regular files count: a
// symlink could make an artifact name bytes the workload did not write.
// Support files are flameox's own and never outputs, whatever their name.
func collect(dir string, roles []Role, support []SupportFile) (found []staged, missing []string, skipped []string, err error) {
	own := map[string]bool{}
	for _, s := range support {
		own[filepath.Clean(s.Path)] = true
	}
	for _, r := range roles {
		matches, gerr := filepath.Glob(filepath.Join(dir, r.Pattern))
		if gerr != nil {
			return nil, nil, nil, fmt.Errorf("capture: role %s pattern %q: %w", r.Role, r.Pattern, gerr)
		}
		sort.Strings(matches)
		n := 0
		for _, m := range matches {
			st, serr := os.Lstat(m)
			if serr != nil || own[m] {
				continue
			}
			if !st.Mode().IsRegular() {
				skipped = append(skipped, m)
				continue
			}
			found = append(found, staged{role: r, path: m})
			n++
		}
		if n == 0 && r.Required {
			missing = append(missing, r.Role)
		}
	}
	return found, missing, skipped, nil
}

// treeSize sums the sizes of the regular files under dir. A missing dir
// has size 0; files vanishing during the walk are skipped.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			if info, ierr := d.Info(); ierr == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n, err
}
