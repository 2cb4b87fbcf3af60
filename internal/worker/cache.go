package worker

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/flameox/flameox/internal/durable"
	"github.com/flameox/flameox/internal/evidence"
)

// ScratchEnv names the session scratch root. The MCP server (or any
// long-lived caller) sets it to its session's scratch directory; the
// conversion cache lives in $FLAMEOX_SCRATCH/conversions and dies with the
// session. Unset, there is no cache: a one-shot CLI run converts every time.
const ScratchEnv = "FLAMEOX_SCRATCH"

// Cache holds converted outputs keyed by input digest and converter
// identity. Each entry is a directory:
//
//	<Dir>/<key>/output     the converter's stdout, byte for byte
//	<Dir>/<key>/meta.json  the key, the output's digest and size, retained stderr
//
// Entries are installed only by Pending.Commit, which the caller invokes
// after the worker exited 0 and the output was accepted whole: failed or
// ambiguous conversions never become entries. Installation is atomic (a
// complete directory is renamed into place), so readers never see a
// partial entry.
type Cache struct{ Dir string }

// SessionCache returns the cache of the current session, or nil when
// FLAMEOX_SCRATCH is unset.
func SessionCache() *Cache {
	root := os.Getenv(ScratchEnv)
	if root == "" {
		return nil
	}
	return &Cache{Dir: filepath.Join(root, "conversions")}
}

// Key identifies a conversion: the same input bytes through the same
// converter binary, version, arguments and consumer give the same output.
type Key struct {
	Input     string   `json:"input"`     // artifact id, sha256:<hex>
	Converter string   `json:"converter"` // e.g. "perf script"
	Identity  string   `json:"identity"`  // executable digest and version
	Args      []string `json:"args"`
	Consumer  string   `json:"consumer"` // the parser reading the output, with its version
}

// Hex is the key's directory name: the SHA-256 of its JSON form.
func (k Key) Hex() string {
	b, _ := json.Marshal(k) // a struct of strings always marshals
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Meta is an entry's metadata.
type Meta struct {
	Key          Key    `json:"key"`
	OutputSHA256 string `json:"output_sha256"`
	OutputSize   int64  `json:"output_size"`
	Stderr       Stderr `json:"stderr"`
}

// Entry is an installed conversion.
type Entry struct {
	Meta   Meta
	Output string // path of the output file
}

// Lookup returns the entry for k, if one is installed and its metadata
// names k.
func (c *Cache) Lookup(k Key) (*Entry, bool) {
	dir := filepath.Join(c.Dir, k.Hex())
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, false
	}
	var m Meta
	if json.Unmarshal(b, &m) != nil || m.Key.Hex() != k.Hex() {
		return nil, false
	}
	return &Entry{Meta: m, Output: filepath.Join(dir, "output")}, true
}

// Open opens the entry's output through a reader that checks its digest:
// call Verify after reading it to the end, before trusting what was read.
func (e *Entry) Open() (*VerifyingReader, error) {
	f, err := os.Open(e.Output)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "open cached conversion")
	}
	return &VerifyingReader{f: f, h: sha256.New(), want: e.Meta.OutputSHA256, size: e.Meta.OutputSize}, nil
}

// VerifyingReader hashes a cached output as it is read.
type VerifyingReader struct {
	f    *os.File
	h    hash.Hash
	n    int64
	want string
	size int64
}

func (v *VerifyingReader) Read(p []byte) (int, error) {
	n, err := v.f.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	return n, err
}

// Verify reads what is left, closes the file and checks digest and size.
func (v *VerifyingReader) Verify() error {
	defer v.f.Close()
	if _, err := io.Copy(io.Discard, v); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read cached conversion")
	}
	if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want || v.n != v.size {
		return evidence.Failf(evidence.CodeIntegrity, "cached conversion %s changed: digest %s size %d, recorded %s size %d", v.f.Name(), got, v.n, v.want, v.size)
	}
	return nil
}

// Close closes the file without verifying.
func (v *VerifyingReader) Close() error { return v.f.Close() }

// Pending is an entry being written.
type Pending struct {
	c   *Cache
	key Key
	tmp string
	f   *os.File
	out *durable.Writer // hashes and counts what reaches f
}

// Begin starts writing an entry for k in a private temporary directory.
func (c *Cache) Begin(k Key) (*Pending, error) {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "conversion cache")
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(c.Dir, ".tmp-"+k.Hex()[:16]+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "conversion cache")
	}
	f, err := os.OpenFile(filepath.Join(tmp, "output"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "conversion cache")
	}
	return &Pending{c: c, key: k, tmp: tmp, f: f, out: durable.NewWriter(f)}, nil
}

// Write appends converter output.
func (p *Pending) Write(b []byte) (int, error) { return p.out.Write(b) }

// Commit installs the entry atomically. When another run installed the
// same key first, that entry is kept and this one discarded.
func (p *Pending) Commit(stderr Stderr) error {
	fail := func(err error) error {
		p.Abort()
		return evidence.Wrap(evidence.CodeIOFailure, err, "install conversion")
	}
	if err := durable.SyncClose(p.f); err != nil {
		return fail(err)
	}
	m := Meta{Key: p.key, OutputSHA256: p.out.Sum(), OutputSize: p.out.Size(), Stderr: stderr}
	b, err := json.Marshal(m)
	if err != nil {
		return fail(err)
	}
	if err := durable.WriteFile(filepath.Join(p.tmp, "meta.json"), b, 0o600); err != nil {
		return fail(err)
	}
	final := filepath.Join(p.c.Dir, p.key.Hex())
	if err := os.Rename(p.tmp, final); err != nil {
		if _, ok := p.c.Lookup(p.key); ok {
			os.RemoveAll(p.tmp)
			return nil
		}
		return fail(err)
	}
	_ = durable.SyncDir(p.c.Dir) // the entry is in place; a failed sync cannot undo that
	return nil
}

// Abort discards the entry. It is safe after Commit failed.
func (p *Pending) Abort() {
	p.f.Close()
	os.RemoveAll(p.tmp)
}
