package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// ID is a bundle's address: the SHA-256 of its canonical manifest.
type ID [sha256.Size]byte

// Hash returns the ID of a manifest's canonical bytes.
func Hash(manifest []byte) ID { return sha256.Sum256(manifest) }

// ParseID reads "sha256:<64 hex digits>" or the bare hex digits (how a
// bundle directory is named).
func ParseID(s string) (ID, error) {
	var id ID
	h := strings.TrimPrefix(s, "sha256:")
	if len(h) != 2*len(id) || strings.ToLower(h) != h {
		return id, evidence.Failf(evidence.CodeInvalidArgument, "bundle id %q: want sha256:<64 lower-case hex digits>", s)
	}
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return id, evidence.Wrap(evidence.CodeInvalidArgument, err, "bundle id %q", s)
	}
	return id, nil
}

// String returns the id as it appears in blocks: "sha256:<hex>".
func (id ID) String() string { return "sha256:" + id.Hex() }

// Hex returns the 64 hex digits, which name the bundle's directory. The
// "sha256:" prefix is left out of file names because a colon is not
// portable there.
func (id ID) Hex() string { return hex.EncodeToString(id[:]) }
