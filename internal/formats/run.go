package formats

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// The read path (docs/read-path.md): every artifact is opened once. Open
// and OpenArtifact check the descriptor (a regular file, its size from
// fstat); detection peeks at the first SniffBytes of the same buffered
// reader; Source.Run streams the bytes through the decoder and hashes them
// in the same pass. An explicit path's id is known only when the read
// ends, so its tables wait in a Hold until then.

// Source is one artifact opened for decoding. Artifact.ID is empty for an
// explicit path until the whole file has been hashed.
type Source struct {
	Artifact *evidence.Artifact

	f     *os.File
	br    *bufio.Reader
	open  fileState // fstat of the descriptor at open
	known bool      // the id was recorded before the read: verify it
	rd    *reader   // the one pass over the bytes, started on first use
	hold  *Hold
	// verified: the decoder verified the descriptor and reads it directly.
	verified bool
	// complete: the digest is known and checked; an explicit artifact's
	// ID is set.
	complete bool
	// settled: every check of the read is done (complete, and for a
	// descriptor read directly, its final fstat), so a table may be
	// closed as complete.
	settled bool
	failed  *evidence.Failure // the integrity failure, once found
}

// fileState is what fstat says about the descriptor; a file that changes
// while it is read changes at least one of these.
type fileState struct {
	size         int64
	dev, ino     uint64
	mtime, ctime int64 // nanoseconds
}

func (s fileState) value() evidence.Object {
	return evidence.Object{"size": s.size, "inode": int64(s.ino), "mtime_ns": s.mtime, "ctime_ns": s.ctime}
}

func fstat(f *os.File) (fileState, uint32, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileState{}, 0, err
	}
	return fileState{size: st.Size, dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, st.Mode, nil
}

// RoleExplicit is the role of an artifact named by a path argument rather
// than staged by a capture.
const RoleExplicit = "explicit"

// Open is the one path check for an explicit path: it resolves path to an
// absolute path, opens it without blocking (a FIFO must not hang the
// open), refuses anything but a regular file and takes the size from the
// descriptor. Nothing is read yet.
func Open(path, role string) (*Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "resolve %s", path)
	}
	s, err := openFile(abs, "")
	if err != nil {
		return nil, err
	}
	s.Artifact = &evidence.Artifact{Path: abs, Size: s.open.size, Name: filepath.Base(abs), Role: role}
	return s, nil
}

// OpenArtifact opens an artifact announced by a block, with the same check
// as Open. A recorded size that differs from the file's is an integrity
// failure before anything is read; the digest is verified as the bytes
// stream.
func OpenArtifact(a *evidence.Artifact) (*Source, error) {
	s, err := openFile(a.Path, a.ID)
	if err != nil {
		return nil, err
	}
	if s.open.size != a.Size {
		s.f.Close()
		return nil, (&evidence.Failure{Code: evidence.CodeIntegrity,
			Message: fmt.Sprintf("artifact size changed: recorded %d bytes, the file has %d", a.Size, s.open.size),
			Details: evidence.Object{"recorded_id": a.ID, "recorded_size": a.Size, "file_size": s.open.size}}).At(a.Path, a.ID)
	}
	s.Artifact, s.known = a, true
	return s, nil
}

func openFile(path, id string) (*Source, error) {
	f, st, err := openRegular(path, id)
	if err != nil {
		return nil, err
	}
	// The buffer only serves the peek: larger reads bypass it.
	return &Source{f: f, br: bufio.NewReaderSize(f, SniffBytes), open: st}, nil
}

// OpenRegular is the one path check for every file flameox reads by a
// path it was given or found in a block (decode, rank, preserve, bundle
// members): it opens without blocking, so that a FIFO cannot hang the
// open, fstats the descriptor it opened (no race with a rename) and
// refuses anything but a regular file, so that a character device such
// as /dev/zero cannot be read forever. It returns the file and its size.
func OpenRegular(path, id string) (*os.File, int64, error) {
	f, st, err := openRegular(path, id)
	if err != nil {
		return nil, 0, err
	}
	return f, st.size, nil
}

func openRegular(path, id string) (*os.File, fileState, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		pe := &os.PathError{Op: "open", Path: path, Err: err}
		return nil, fileState{}, (&evidence.Failure{Code: evidence.CodeIOFailure, Message: pe.Error(), Err: pe}).At(path, id)
	}
	f := os.NewFile(uintptr(fd), path)
	st, mode, err := fstat(f)
	if err != nil {
		f.Close()
		return nil, fileState{}, evidence.Wrap(evidence.CodeIOFailure, err, "fstat").At(path, id)
	}
	if mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fileState{}, evidence.Failf(evidence.CodeInvalidArgument, "not a regular file").At(path, id)
	}
	// O_NONBLOCK only guarded the open; reads of a regular file block.
	if err := unix.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, fileState{}, evidence.Wrap(evidence.CodeIOFailure, err, "open").At(path, id)
	}
	return f, st, nil
}

// Close releases the descriptor and anything a Hold spilled. Closing
// twice is harmless.
func (s *Source) Close() error {
	if s.f == nil {
		return nil
	}
	if s.rd != nil {
		s.rd.stop()
	}
	if s.hold != nil {
		s.hold.discard()
	}
	f := s.f
	s.f = nil
	return f.Close()
}

// Known reports whether the artifact's id was recorded before the read.
func (s *Source) Known() bool { return s.known }

// Complete reports whether the digest is known and checked.
func (s *Source) Complete() bool { return s.complete }

// Prefix returns up to SniffBytes from the start of the file, for
// detection, without consuming them: the decoder reads them again from the
// same buffer and they are hashed once.
func (s *Source) Prefix() ([]byte, error) {
	if s.rd != nil {
		return nil, evidence.Failf(evidence.CodeInternal, "prefix asked after the read began").At(s.Artifact.Path, s.Artifact.ID)
	}
	b, err := s.br.Peek(SniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read").At(s.Artifact.Path, s.Artifact.ID)
	}
	return b, nil
}

// Identify reads and hashes whatever has not been read yet, so that an
// artifact refused before decoding (no format, bad options) is still named
// by its digest.
func (s *Source) Identify() error {
	if s.complete {
		return nil
	}
	if s.failed != nil {
		return s.failed
	}
	return s.reader().drain()
}

func (s *Source) reader() *reader {
	if s.rd == nil {
		s.rd = newReader(s)
	}
	return s.rd
}

// finish completes the read: n bytes were hashed to sum. It checks them
// against the size at open and the descriptor's fstat, and sets or
// verifies the artifact id.
func (s *Source) finish(n int64, sum []byte) error {
	got := "sha256:" + hex.EncodeToString(sum)
	a := s.Artifact
	if s.known && (got != a.ID || n != a.Size) {
		return s.fail(&evidence.Failure{Code: evidence.CodeIntegrity,
			Message: "artifact bytes changed: they no longer match the recorded digest and size",
			Details: evidence.Object{"recorded_id": a.ID, "recorded_size": a.Size, "read_id": got, "read_size": n}})
	}
	if err := s.unchanged(n); err != nil {
		return err
	}
	if !s.known {
		a.ID = got
	}
	s.complete = true
	return nil
}

// unchanged checks that the descriptor still says what it said at open and
// that n, the bytes read, is its size.
func (s *Source) unchanged(n int64) error {
	now, _, err := fstat(s.f)
	if err != nil {
		return s.fail(evidence.Wrap(evidence.CodeIOFailure, err, "fstat"))
	}
	if now == s.open && n == s.open.size {
		return nil
	}
	return s.fail(&evidence.Failure{Code: evidence.CodeIntegrity,
		Message: "artifact changed while it was read",
		Details: evidence.Object{"at_open": s.open.value(), "after_read": now.value(), "read_size": n}})
}

func (s *Source) fail(f *evidence.Failure) *evidence.Failure {
	f.At(s.Artifact.Path, s.Artifact.ID)
	if s.failed == nil {
		s.failed = f
	}
	return s.failed
}

// ArtifactFromPath opens path once, hashes the whole file and returns its
// artifact block. Tests and tools that want a recorded artifact before
// decoding use it; the commands decode explicit paths in one pass instead.
func ArtifactFromPath(path, role string) (*evidence.Artifact, error) {
	s, err := Open(path, role)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.Identify(); err != nil {
		return nil, err
	}
	return s.Artifact, nil
}

// ReadPrefix reads up to SniffBytes from the start of a file, with the
// same path check as Open.
func ReadPrefix(path string) ([]byte, error) {
	s, err := Open(path, "")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	b, err := s.Prefix()
	return slices.Clone(b), err
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
	var yes, maybe, refused []cand
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
		case suffix > 0 && s.Family != FamilyPreviews:
			refused = append(refused, cand{s, suffix})
		}
	}
	// A name that claims one specific format (app.cpuprofile) whose bytes
	// no format accepts is that format, malformed: decoding it says what
	// is wrong, where "no known format" would hide it.
	if len(yes) == 0 && len(maybe) == 0 && len(refused) > 0 {
		sort.SliceStable(refused, func(i, j int) bool { return refused[i].suffix > refused[j].suffix })
		if len(refused) == 1 || refused[0].suffix > refused[1].suffix {
			return refused[0].s, nil
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
			Message: "no known format matches this file; name one with argument format",
			Details: evidence.Object{"known_formats": Names(specs)}}).At(path, "")
	}
	return nil, (&evidence.Failure{Code: evidence.CodeUnsupportedFormat,
		Message: "several formats match this file; name one with argument format",
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

// Run decodes one recorded artifact with spec into sink: OpenArtifact,
// then Source.Run.
func Run(ctx context.Context, spec *Spec, art *evidence.Artifact, limits map[string]int64, opts evidence.Object, sink Sink) error {
	s, err := OpenArtifact(art)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx, spec, limits, opts, sink)
}

// Run streams the source through spec's decoder into sink, hashing the
// bytes in the same pass, and fails with INTEGRITY_FAILURE when they do
// not match a recorded id or the file changed while it was read. Bytes the
// decoder leaves unread are read and hashed after it returns. When the
// source has a Hold, its tables are released once the digest is known,
// also after a decoder failure, so partial evidence survives as it would
// have streamed. Decoder errors become typed failures located at the
// artifact; a decoder panic becomes an INTERNAL failure instead of
// crossing the call.
func (s *Source) Run(ctx context.Context, spec *Spec, limits map[string]int64, opts evidence.Object, sink Sink) (err error) {
	art := s.Artifact
	at := func(f *evidence.Failure) error { return f.At(art.Path, art.ID) }
	in, err := NewInput(spec, limits, opts)
	if err != nil {
		return at(evidence.AsFailure(err, evidence.CodeInvalidArgument))
	}
	if !s.known && s.hold == nil {
		return at(evidence.Failf(evidence.CodeInternal, "an explicit artifact is decoded without a Hold: its tables would precede its id"))
	}
	rd := s.reader()
	in.Artifact, in.R, in.File, in.src = art, rd, s.f, s
	g := &gate{src: s, next: sink}
	return g.settle(s.run(ctx, spec, in, g))
}

// run is Run's decode and checks, through the gate.
func (s *Source) run(ctx context.Context, spec *Spec, in *Input, g *gate) error {
	art := s.Artifact
	at := func(f *evidence.Failure) error { return f.At(art.Path, art.ID) }
	rd := s.rd
	derr := s.decode(ctx, spec, in, g)
	if s.failed != nil {
		// The bytes changed: nothing decoded from them is evidence.
		return s.failed
	}
	if derr != nil {
		if ctx.Err() != nil {
			return at(evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "decode %s", spec.Title))
		}
		// A file cut or grown under the decoder looks malformed to it; the
		// descriptor tells, and then it is the file that changed.
		if f := s.changed(); f != nil {
			return f
		}
		f := evidence.Wrap(evidence.CodeDecodeFailure, derr, "%s", spec.Title)
		if s.hold != nil {
			// Name the artifact and release what was decoded before the
			// failure, as a stream would have carried it.
			if err := s.Identify(); err != nil {
				return err
			}
			if err := s.hold.flush(); err != nil {
				return err
			}
		}
		return at(f)
	}
	switch {
	case rd.used:
		if err := rd.drain(); err != nil {
			return err
		}
	case in.verified:
		// Random access after VerifyFile: the descriptor must still say
		// what it said when it was verified.
		if err := s.unchanged(s.open.size); err != nil {
			return err
		}
	default:
		return at(evidence.Failf(evidence.CodeInternal, "decoder %s neither streamed nor verified the artifact", spec.Name))
	}
	if s.hold != nil {
		return s.hold.flush()
	}
	return nil
}

// changed is the integrity failure of a descriptor whose fstat no longer
// says what it said at open, or nil.
func (s *Source) changed() *evidence.Failure {
	if s.failed != nil {
		return s.failed
	}
	now, _, err := fstat(s.f)
	if err != nil || now == s.open {
		return nil
	}
	return s.fail(&evidence.Failure{Code: evidence.CodeIntegrity,
		Message: "artifact changed while it was read",
		Details: evidence.Object{"at_open": s.open.value(), "now": now.value()}})
}

// gate stands between a decoder and its sink until the artifact's bytes
// are checked. Rows pass at once (memory stays flat), but a table's
// summary, which may say complete, waits while the check is pending: a
// decoder may end a table before the digest is known (a window that ends
// early, a table ended before EOF, random access after VerifyFile, whose
// file may still change). When the check fails, every table that reached
// the sink is closed incomplete, with the integrity failure as its
// limitation, so rows already written are never left looking complete.
type gate struct {
	src  *Source
	next Sink
	open []*gatedTable // begun, in order
}

type gatedTable struct {
	g       *gate
	tw      TableWriter
	name    string
	rows    int64
	pending *evidence.Summary // an End that waits for the check
	ended   bool              // End reached the sink
}

func (g *gate) Wants(s *table.Schema) bool { return g.next.Wants(s) }

func (g *gate) Begin(t *evidence.Table) (TableWriter, error) {
	tw, err := g.next.Begin(t)
	if err != nil {
		return nil, err
	}
	gt := &gatedTable{g: g, tw: tw, name: t.Name}
	g.open = append(g.open, gt)
	return gt, nil
}

func (gt *gatedTable) Row(row any) error {
	gt.rows++
	return gt.tw.Row(row)
}

func (gt *gatedTable) End(s *evidence.Summary) error {
	if gt.ended || gt.pending != nil {
		return evidence.Failf(evidence.CodeInternal, "table %s ended twice", gt.name)
	}
	if !gt.g.src.settled {
		gt.pending = s
		return nil
	}
	gt.ended = true
	return gt.tw.End(s)
}

// settle passes the waiting summaries on once the run's checks are done
// (err is their outcome): as they were when the bytes checked out, else
// incomplete, with the tables the decoder left open.
func (g *gate) settle(err error) error {
	g.src.settled = true
	bad := g.src.failed
	if bad != nil && g.src.hold != nil && !g.src.hold.released {
		// An explicit artifact's tables were held and are dropped: none
		// of them reached a stream.
		return err
	}
	for _, gt := range g.open {
		if gt.ended {
			continue
		}
		s := gt.pending
		if bad != nil {
			if s == nil {
				s = &evidence.Summary{RowsObserved: gt.rows}
			}
			s.Complete = false
			s.Limit("the artifact failed verification after these rows were read: " + bad.Message + "; they are not evidence of the recorded artifact")
		}
		if s == nil {
			continue // the decoder left it open; its failure says why
		}
		gt.ended = true
		if eerr := gt.tw.End(s); eerr != nil && err == nil {
			err = eerr
		}
	}
	return err
}

func (s *Source) decode(ctx context.Context, spec *Spec, in *Input, sink Sink) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = (&evidence.Failure{Code: evidence.CodeInternal,
				Message: fmt.Sprintf("decoder %s panicked: %v", spec.Name, p),
				Details: evidence.Object{"stack": string(debug.Stack())}}).At(s.Artifact.Path, s.Artifact.ID)
		}
	}()
	return spec.Decoder.Decode(ctx, in, sink)
}

// DigestFirst is the reader for a decoder whose rows stream out while it
// reads: for an open file, the file from its start once VerifyFile has
// hashed it in a first pass, so that no row waits in the hold for the
// digest and is read back; without one (a pipe), R.
func (in *Input) DigestFirst() (io.Reader, error) {
	if in.File == nil || in.Artifact == nil {
		return in.R, nil
	}
	if err := in.VerifyFile(); err != nil {
		return nil, err
	}
	return io.NewSectionReader(in.File, 0, in.Artifact.Size), nil
}

// VerifyFile hashes the open file from its start, checks it against the
// artifact's digest and size (an explicit artifact gets its id here), and
// leaves the offset at the start. Decoders that read File instead of R (an
// isolated worker, random access) call it before trusting the bytes; it is
// their one hash.
func (in *Input) VerifyFile() error {
	if in.src == nil {
		if err := verifyFile(in.File, in.Artifact); err != nil {
			return err
		}
		in.verified = true
		return nil
	}
	s := in.src
	if s.rd != nil && s.rd.used {
		return evidence.Failf(evidence.CodeInternal, "decoder %s verifies the file after streaming it", in.Spec.Name).At(s.Artifact.Path, s.Artifact.ID)
	}
	if !s.complete {
		if s.failed != nil {
			return s.failed
		}
		h := sha256.New()
		n, err := io.Copy(h, io.NewSectionReader(s.f, 0, 1<<62))
		if err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read").At(s.Artifact.Path, s.Artifact.ID)
		}
		if err := s.finish(n, h.Sum(nil)); err != nil {
			return err
		}
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "seek").At(s.Artifact.Path, s.Artifact.ID)
	}
	in.verified, s.verified = true, true
	return nil
}

// verifyFile checks a descriptor that no Source opened (decoder tests
// that build their Input by hand).
func verifyFile(f *os.File, art *evidence.Artifact) error {
	if f == nil {
		return evidence.Failf(evidence.CodeInternal, "input has no open file to verify").At(art.Path, art.ID)
	}
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

// Chunks of the one pass: the reader fills one from the file, the decoder
// copies out of it while the hasher hashes it.
const (
	chunkBytes = 512 << 10
	chunks     = 4
	// concurrentFrom is the size from which the hash runs on its own
	// goroutine: below it the hash takes a few milliseconds, not worth a
	// goroutine and four chunks.
	concurrentFrom = 4 << 20
)

// hashInline forces hashing on the reading goroutine (for measuring the
// concurrent hasher against it).
var hashInline bool

// reader is the decoder's view of a source: its bytes up to the size
// fstat gave at open (growth is caught by the fstat check), each hashed
// exactly once. With more than one CPU the hash runs on its own
// goroutine, at most `chunks` chunks behind the reader.
type reader struct {
	s    *Source
	r    io.Reader
	h    hash.Hash
	n    int64  // bytes read from the file
	cur  []byte // the part of the current chunk not yet handed out
	used bool   // the decoder read
	end  error  // io.EOF, or the failure that ended the read
	// concurrent hashing
	work  chan []byte
	free  chan []byte
	done  chan struct{}
	alloc int
	buf   []byte // the one chunk when hashing inline
}

func newReader(s *Source) *reader {
	rd := &reader{s: s, r: io.LimitReader(s.br, s.open.size), h: sha256.New()}
	if !hashInline && runtime.GOMAXPROCS(0) > 1 && s.open.size >= concurrentFrom {
		rd.work = make(chan []byte, chunks)
		rd.free = make(chan []byte, chunks)
		rd.done = make(chan struct{})
		go func() {
			defer close(rd.done)
			for b := range rd.work {
				rd.h.Write(b)
				rd.free <- b[:cap(b)]
			}
		}()
	}
	return rd
}

func (rd *reader) Read(p []byte) (int, error) {
	if rd.s.verified {
		return 0, rd.s.fail(evidence.Failf(evidence.CodeInternal, "the decoder streams the artifact after verifying its descriptor"))
	}
	rd.used = true
	for len(rd.cur) == 0 {
		if rd.end != nil {
			return 0, rd.end
		}
		rd.fill()
	}
	n := copy(p, rd.cur)
	rd.cur = rd.cur[n:]
	return n, nil
}

// fill reads the next chunk and hands it to the hasher. At the end of the
// file it completes the source, so that a decoder that emits after EOF
// already has the digest.
func (rd *reader) fill() {
	b := rd.chunk()
	m, err := io.ReadFull(rd.r, b)
	if m > 0 {
		rd.n += int64(m)
		if rd.work != nil {
			rd.work <- b[:m]
		} else {
			rd.h.Write(b[:m])
		}
		rd.cur = b[:m]
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		rd.end = io.EOF
		if ferr := rd.s.finish(rd.n, rd.sum()); ferr != nil {
			rd.end = ferr
		} else if !rd.s.verified {
			rd.s.settled = true
		}
	default:
		rd.stop()
		rd.end = rd.s.fail(evidence.Wrap(evidence.CodeIOFailure, err, "read artifact"))
	}
}

// chunk returns a buffer the hasher is done with.
func (rd *reader) chunk() []byte {
	if rd.work == nil {
		if rd.buf == nil {
			rd.buf = make([]byte, chunkBytes)
		}
		return rd.buf
	}
	select {
	case b := <-rd.free:
		return b
	default:
	}
	if rd.alloc < chunks {
		rd.alloc++
		return make([]byte, chunkBytes)
	}
	return <-rd.free
}

// sum waits for the hasher and returns the digest.
func (rd *reader) sum() []byte {
	rd.stop()
	return rd.h.Sum(nil)
}

// stop ends the hashing goroutine once it has hashed what it was given.
func (rd *reader) stop() {
	if rd.work != nil {
		close(rd.work)
		<-rd.done
		rd.work = nil
	}
}

// drain reads and hashes what the decoder left unread.
func (rd *reader) drain() error {
	for {
		rd.cur = nil
		if rd.end != nil {
			if errors.Is(rd.end, io.EOF) {
				return nil
			}
			return rd.end
		}
		rd.fill()
	}
}
