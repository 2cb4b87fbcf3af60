package formats

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// ArtifactFromPath resolves path to an absolute path, hashes the file and
// returns its artifact block. Nothing else reads the file first.
func ArtifactFromPath(path, role string) (*evidence.Artifact, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "resolve %s", path)
	}
	// Check the kind before opening: opening a FIFO would block.
	if st, err := os.Stat(abs); err != nil {
		return nil, (&evidence.Failure{Code: evidence.CodeIOFailure, Message: err.Error(), Err: err}).At(abs, "")
	} else if !st.Mode().IsRegular() {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "not a regular file").At(abs, "")
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, (&evidence.Failure{Code: evidence.CodeIOFailure, Message: err.Error(), Err: err}).At(abs, "")
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read").At(abs, "")
	}
	return &evidence.Artifact{
		ID:   "sha256:" + hex.EncodeToString(h.Sum(nil)),
		Path: abs,
		Size: n,
		Name: filepath.Base(abs),
		Role: role,
	}, nil
}

// Detect picks the format of an artifact: the explicit hint when given;
// else the formats whose sniffer says Yes (a longer matching suffix breaks a
// tie); else, when no sniffer is sure, the longest matching suffix whose
// sniffer does not say No. A specific format's Yes therefore beats a generic
// format that only matched by suffix. Ambiguity is a failure, not a guess.
func Detect(specs []*Spec, path string, prefix []byte, hint string) (*Spec, error) {
	if hint != "" {
		for _, s := range specs {
			if s.Name == hint {
				return s, nil
			}
		}
		return nil, evidence.Failf(evidence.CodeUnsupportedFormat, "unknown format %q (known: %s)", hint, strings.Join(Names(specs), ", "))
	}
	lower := strings.ToLower(filepath.Base(path))
	type cand struct {
		s      *Spec
		suffix int // length of the longest matching suffix; 0 for none
	}
	var yes, maybe []cand
	for _, s := range specs {
		suffix := 0
		for _, suf := range s.Suffixes {
			if strings.HasSuffix(lower, suf) && len(suf) > suffix {
				suffix = len(suf)
			}
		}
		v := NeedMore
		if s.Sniff != nil {
			v = s.Sniff(prefix)
		}
		switch {
		case v == Yes:
			yes = append(yes, cand{s, suffix})
		case v == NeedMore && suffix > 0:
			maybe = append(maybe, cand{s, suffix})
		}
	}
	pick := func(cs []cand) (*Spec, []*Spec) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].suffix > cs[j].suffix })
		if len(cs) == 1 || cs[0].suffix > cs[1].suffix {
			return cs[0].s, nil
		}
		var tied []*Spec
		for _, c := range cs {
			if c.suffix == cs[0].suffix {
				tied = append(tied, c.s)
			}
		}
		return nil, tied
	}
	var tied []*Spec
	switch {
	case len(yes) > 0:
		var s *Spec
		if s, tied = pick(yes); s != nil {
			return s, nil
		}
	case len(maybe) > 0:
		var s *Spec
		if s, tied = pick(maybe); s != nil {
			return s, nil
		}
	default:
		return nil, (&evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: "no known format matches this file; name one with --format",
			Details: evidence.Object{"known_formats": Names(specs)}}).At(path, "")
	}
	return nil, (&evidence.Failure{Code: evidence.CodeUnsupportedFormat,
		Message: "several formats match this file; name one with --format",
		Details: evidence.Object{"candidates": Names(tied)}}).At(path, "")
}

// Names lists spec names.
func Names(specs []*Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// ReadPrefix reads up to SniffBytes from the start of a file.
func ReadPrefix(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "open").At(path, "")
	}
	defer f.Close()
	buf := make([]byte, SniffBytes)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read").At(path, "")
	}
	return buf[:n], nil
}

// NewInput validates limits and options for spec and returns an Input
// without its artifact and reader: the limits over the spec's defaults,
// the options typed, bounded and with defaults filled. Options may be
// JSON values or command-line text (param.FlagText).
func NewInput(spec *Spec, limits map[string]int64, opts evidence.Object) (*Input, error) {
	lim, err := EffectiveLimits(spec, limits)
	if err != nil {
		return nil, err
	}
	eff, given, err := EffectiveOptions(spec, opts)
	if err != nil {
		return nil, err
	}
	return &Input{Spec: spec, Limits: lim, Options: eff, given: given}, nil
}

// EffectiveOptions validates decoder options against spec's declarations.
func EffectiveOptions(spec *Spec, opts evidence.Object) (evidence.Object, map[string]bool, error) {
	eff, given, err := param.Validate(spec.Options, opts)
	if err != nil {
		f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
		f.Message = "format " + spec.Name + ": decoder option: " + f.Message
		f.Location.Field = "options." + f.Location.Field
		return nil, nil, f
	}
	return eff, given, nil
}

// EffectiveLimits merges requested limits over a spec's defaults and
// rejects names the spec does not declare.
func EffectiveLimits(s *Spec, requested map[string]int64) (map[string]int64, error) {
	out := make(map[string]int64, len(s.Limits))
	for _, l := range s.Limits {
		out[l.Name] = l.Default
	}
	for k, v := range requested {
		if _, ok := out[k]; !ok {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "format %s has no limit %q (it has: %s)", s.Name, k, strings.Join(slices.Sorted(mapsKeys(out)), ", "))
		}
		if v <= 0 {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "limit %s must be positive", k)
		}
		out[k] = v
	}
	return out, nil
}

func mapsKeys(m map[string]int64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// hashingReader hashes and counts what the decoder reads.
type hashingReader struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	used bool
}

func (h *hashingReader) Read(p []byte) (int, error) {
	h.used = true
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

// Run decodes one artifact with spec into sink. It opens the artifact's
// path once, streams it through the decoder while hashing, and fails with
// INTEGRITY_FAILURE when the bytes read do not match the artifact's id and
// size. Decoder errors become typed failures located at the artifact; a
// decoder panic becomes an INTERNAL failure instead of crossing the call.
func Run(ctx context.Context, spec *Spec, art *evidence.Artifact, limits map[string]int64, opts evidence.Object, sink Sink) (err error) {
	in, err := NewInput(spec, limits, opts)
	if err != nil {
		return evidence.AsFailure(err, evidence.CodeInvalidArgument).At(art.Path, art.ID)
	}
	f, err := os.Open(art.Path)
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "open artifact").At(art.Path, art.ID)
	}
	defer f.Close()
	hr := &hashingReader{r: f, h: sha256.New()}
	in.Artifact, in.R, in.File = art, hr, f
	defer func() {
		if p := recover(); p != nil {
			err = (&evidence.Failure{Code: evidence.CodeInternal,
				Message: fmt.Sprintf("decoder %s panicked: %v", spec.Name, p),
				Details: evidence.Object{"stack": string(debug.Stack())}}).At(art.Path, art.ID)
		}
	}()
	if derr := spec.Decoder.Decode(ctx, in, sink); derr != nil {
		if ctx.Err() != nil {
			return evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "decode %s", spec.Name).At(art.Path, art.ID)
		}
		return evidence.Wrap(evidence.CodeDecodeFailure, derr, "%s", spec.Title).At(art.Path, art.ID)
	}
	if !hr.used {
		if !in.verified {
			return evidence.Failf(evidence.CodeInternal, "decoder %s neither streamed nor verified the artifact", spec.Name).At(art.Path, art.ID)
		}
		return nil
	}
	{
		// Hash whatever the decoder left unread so the digest covers the file.
		if _, err := io.Copy(io.Discard, hr); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read artifact").At(art.Path, art.ID)
		}
		got := "sha256:" + hex.EncodeToString(hr.h.Sum(nil))
		if got != art.ID || hr.n != art.Size {
			return (&evidence.Failure{Code: evidence.CodeIntegrity,
				Message: "artifact bytes changed: they no longer match the recorded digest and size",
				Details: evidence.Object{"recorded_id": art.ID, "recorded_size": art.Size, "read_id": got, "read_size": hr.n}}).At(art.Path, art.ID)
		}
	}
	return nil
}

// VerifyFile hashes the open file from its start, checks it against the
// artifact's digest and size, and leaves the offset at the start. Decoders
// that read File instead of R (an isolated worker, random access) call it
// before trusting the bytes.
func (in *Input) VerifyFile() error {
	if err := verifyFile(in.File, in.Artifact); err != nil {
		return err
	}
	in.verified = true
	return nil
}

func verifyFile(f *os.File, art *evidence.Artifact) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "seek").At(art.Path, art.ID)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read").At(art.Path, art.ID)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "seek").At(art.Path, art.ID)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != art.ID || n != art.Size {
		return (&evidence.Failure{Code: evidence.CodeIntegrity,
			Message: "artifact bytes do not match the recorded digest and size",
			Details: evidence.Object{"recorded_id": art.ID, "read_id": got, "read_size": n}}).At(art.Path, art.ID)
	}
	return nil
}
