package capture

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// Scratch root bounds. Before a request creates its directory, the oldest
// completed, unlocked request directories are evicted until the root holds
// fewer than ScratchMaxRequests directories and at most ScratchMaxBytes.
const (
	ScratchMaxRequests = 32
	ScratchMaxBytes    = 4 << 30
)

// Names inside a request directory.
const (
	lockName     = ".lock"     // held (flock LOCK_EX) by the owning capture while it runs
	completeName = ".complete" // written when the capture has finished
)

// EnvScratch overrides the default scratch root.
const EnvScratch = "FLAMEOX_SCRATCH"

// ScratchRoot returns the scratch root: dir when given, else
// $FLAMEOX_SCRATCH, else flameox-<uid> under os.TempDir().
func ScratchRoot(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(EnvScratch)
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("flameox-%d", os.Getuid()))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", evidence.Wrap(evidence.CodeInvalidArgument, err, "capture: scratch root")
	}
	return abs, nil
}

// checkPrivate refuses a scratch root that another user could have
// prepared or can change: one not owned by us, writable by group or
// others, or a symbolic link (a shared temp directory lets anyone create
// flameox-<uid> first). Outputs placed there would not be ours alone.
func checkPrivate(root string) error {
	st, err := os.Lstat(root)
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "capture: scratch root")
	}
	refuse := func(why string) error {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("capture: scratch root %s %s; give a private directory (owned by uid %d, mode 0700) with --scratch or %s, or remove it", root, why, os.Geteuid(), EnvScratch),
			Location: evidence.Location{Path: root}}
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return refuse("is a symbolic link")
	}
	if !st.IsDir() {
		return refuse("is not a directory")
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return refuse(fmt.Sprintf("is owned by uid %d", sys.Uid))
	}
	if st.Mode().Perm()&0o022 != 0 {
		return refuse(fmt.Sprintf("is writable by others (mode %04o)", st.Mode().Perm()))
	}
	return nil
}

// requestDir is one request's exclusively owned scratch directory.
type requestDir struct {
	path string
	id   string
	lock *os.File
}

// newRequestDir evicts what the bound requires, then creates and locks a
// fresh directory. It returns notes about the root's state.
func newRequestDir(root string) (*requestDir, []string, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: scratch root")
	}
	if err := checkPrivate(root); err != nil {
		return nil, nil, err
	}
	notes, err := evict(root, ScratchMaxRequests-1, ScratchMaxBytes)
	if err != nil {
		return nil, nil, err
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, nil, evidence.Wrap(evidence.CodeInternal, err, "capture: request id")
	}
	id := time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:])
	// The directory is created under a dot name and renamed into place
	// once locked, so eviction never sees it unlocked.
	tmp := filepath.Join(root, ".new-"+id)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: scratch directory")
	}
	lock, err := os.OpenFile(filepath.Join(tmp, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
	}
	final := filepath.Join(root, id)
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(tmp)
		return nil, nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: scratch directory")
	}
	return &requestDir{path: final, id: id, lock: lock}, notes, nil
}

// complete marks the directory finished and releases its lock; it becomes
// eligible for eviction.
func (d *requestDir) complete() error {
	err := os.WriteFile(filepath.Join(d.path, completeName), nil, 0o600)
	d.lock.Close()
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "capture: mark scratch complete")
	}
	return nil
}

// remove deletes the directory the request owns (after cancellation).
func (d *requestDir) remove() error {
	err := os.RemoveAll(d.path)
	d.lock.Close()
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "capture: remove scratch")
	}
	return nil
}

// evict removes the oldest completed, unlocked request directories until
// at most maxDirs remain and their total size is at most maxBytes. A
// directory whose lock is held (a running capture, or a reader holding a
// shared lock) or that never completed is left alone.
func evict(root string, maxDirs int, maxBytes int64) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "capture: read scratch root")
	}
	type cand struct {
		path string
		done time.Time
		size int64
	}
	var cands []cand
	var dirs int
	var total int64
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(root, e.Name())
		size, _ := treeSize(p)
		dirs++
		total += size
		if st, err := os.Stat(filepath.Join(p, completeName)); err == nil {
			cands = append(cands, cand{p, st.ModTime(), size})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].done.Before(cands[j].done) })
	var notes []string
	for _, c := range cands {
		if dirs <= maxDirs && total <= maxBytes {
			break
		}
		ok, err := removeUnlocked(c.path)
		if err != nil {
			return nil, err
		}
		if ok {
			dirs--
			total -= c.size
		}
	}
	if dirs > maxDirs || total > maxBytes {
		notes = append(notes, fmt.Sprintf("scratch root %s stays over its bound (%d directories, %d bytes): the rest are running, locked by readers, or never completed", root, dirs, total))
	}
	return notes, nil
}

// removeUnlocked deletes dir if its lock can be taken without waiting.
func removeUnlocked(dir string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, evidence.Wrap(evidence.CodeIOFailure, err, "capture: evict %s", dir)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, evidence.Wrap(evidence.CodeIOFailure, err, "capture: evict %s", dir)
	}
	return true, nil
}
