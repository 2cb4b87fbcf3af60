package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
)

// Session bounds. A handle expires with the session, or when it is the
// oldest of more than MaxHandles handles or of more than MaxHandleBytes
// of staged outputs; its scratch goes with it.
const (
	MaxHandles     = 16
	MaxHandleBytes = 2 << 30
)

// expiry is what a handle says of its own end.
var expiry = fmt.Sprintf("when this MCP session ends, or once it is the oldest of more than %d handles or %d bytes of staged outputs", MaxHandles, int64(MaxHandleBytes))

// handle is one capture's staged native outputs, kept for reanalysis and
// preservation without running the workload again.
type handle struct {
	id       string
	dir      string // the capture's own scratch root, owned by the session
	provider string
	sources  []byte // the capture and artifact blocks, in order
	formats  []string
	size     int64
	bundle   string // its bundle id, once preserved
	// failures are the failure blocks of the capture call's analysis: a
	// preservation records them (and their limit receipts) in the bundle.
	failures []evidence.Object
	busy     int // calls reading its scratch now; it is not evicted under them
}

// session is the server's scratch for one client: a private directory
// holding each capture's scratch root, and the handles of the captures
// that completed. Each request owns its directory until it ends: a
// cancelled or failed capture's is removed at once, a completed one's
// becomes a handle's.
type session struct {
	mu      sync.Mutex
	parent  string // where root is made, lazily
	root    string
	handles map[string]*handle
	order   []string // oldest first
	expired map[string]bool
	stores  []string // evidence stores this session used or was given
	closed  bool
}

func newSession(parent string, stores []string) *session {
	return &session{parent: parent, handles: map[string]*handle{}, expired: map[string]bool{}, stores: stores}
}

func randomID(prefix string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", evidence.Wrap(evidence.CodeInternal, err, "session id")
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// requestDir creates a fresh private scratch root for one capture request
// and the handle id it will have if the capture completes.
func (s *session) requestDir() (id, dir string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureRoot(); err != nil {
		return "", "", err
	}
	if id, err = randomID("h-"); err != nil {
		return "", "", err
	}
	dir = filepath.Join(s.root, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", "", evidence.Wrap(evidence.CodeIOFailure, err, "request scratch")
	}
	return id, dir, nil
}

// ensureRoot makes the session's directory on first use; the lock is held.
func (s *session) ensureRoot() error {
	if s.closed {
		return evidence.Failf(evidence.CodeCancelled, "the MCP session has ended")
	}
	if s.root != "" {
		return nil
	}
	parent, err := capture.ScratchRoot(s.parent)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "session scratch")
	}
	root, err := os.MkdirTemp(parent, ".mcp-session-")
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "session scratch")
	}
	s.root = root
	return nil
}

// rootDir is the session's directory, where the decoding commands keep
// the session's conversion cache ($FLAMEOX_SCRATCH/conversions).
func (s *session) rootDir() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureRoot(); err != nil {
		return "", err
	}
	return s.root, nil
}

// adopt makes a finished capture's scratch a handle, when the capture
// completed with its artifacts; otherwise the scratch is removed. It
// evicts the oldest handles beyond the bounds, never the new one.
func (s *session) adopt(id, dir, provider string, c *collector, cancelled bool) *handle {
	c.mu.Lock()
	capt := c.capture
	var src []byte
	for _, l := range c.sources {
		src = append(src, l...)
	}
	var formats []string
	for _, a := range c.artifacts {
		if f, ok := a["format"].(string); ok && !slices.Contains(formats, f) {
			formats = append(formats, f)
		}
	}
	n := len(c.artifacts)
	failures := slices.Clone(c.failures)
	c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || cancelled || capt == nil || capt["outcome"] != "completed" || n == 0 {
		_ = os.RemoveAll(dir)
		return nil
	}
	h := &handle{id: id, dir: dir, provider: provider, sources: src, formats: formats, size: treeBytes(dir), failures: failures}
	s.handles[id] = h
	s.order = append(s.order, id)
	total := int64(0)
	for _, k := range s.order {
		total += s.handles[k].size
	}
	for _, k := range slices.Clone(s.order) {
		if len(s.order) <= MaxHandles && total <= MaxHandleBytes {
			break
		}
		if old := s.handles[k]; old != h && old.busy == 0 {
			total -= old.size
			s.drop(old.id)
		}
	}
	return h
}

// acquire is get for a call that reads the handle's scratch: the handle
// is not evicted until release.
func (s *session) acquire(id string) (*handle, func(), error) {
	h, err := s.get(id)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	h.busy++
	s.mu.Unlock()
	var once sync.Once
	return h, func() {
		once.Do(func() {
			s.mu.Lock()
			h.busy--
			s.mu.Unlock()
		})
	}, nil
}

// drop removes a handle and its scratch; the lock is held.
func (s *session) drop(id string) {
	h := s.handles[id]
	if h == nil {
		return
	}
	_ = os.RemoveAll(h.dir)
	delete(s.handles, id)
	for i, k := range s.order {
		if k == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	if len(s.expired) < 4*MaxHandles {
		s.expired[id] = true
	}
}

// get returns a live handle, or a failure that says why there is none.
func (s *session) get(id string) (*handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.handles[id]; ok {
		return h, nil
	}
	msg := fmt.Sprintf("handle %q is not a live handle of this session", id)
	if s.expired[id] {
		msg = fmt.Sprintf("handle %q expired (handles last %s)", id, expiry)
	}
	return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: msg, Location: evidence.Location{Field: "handle"},
		Retry: &evidence.Retry{Action: "capture again, or reanalyze a preserved bundle (argument bundle)"}}
}

// preserved records a handle's bundle.
func (s *session) preserved(id, bundle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.handles[id]; ok {
		h.bundle = bundle
	}
}

// addStore remembers an evidence store the session published to.
func (s *session) addStore(store string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.stores, store) {
		s.stores = append(s.stores, store)
	}
}

func (s *session) storeList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.stores...)
}

// close removes the session's scratch: every handle expires.
func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, id := range append([]string(nil), s.order...) {
		s.drop(id)
	}
	if s.root != "" {
		_ = os.RemoveAll(s.root)
		s.root = ""
	}
}

// value is a handle as a result states it.
func (h *handle) value() evidence.Object {
	v := evidence.Object{"id": h.id, "provider": h.provider, "formats": h.formats, "bytes": h.size, "expires": expiry}
	if h.bundle != "" {
		v["bundle_id"] = h.bundle
	}
	return v
}

func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
