package nsys

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/worker"
)

// An .nsys-rep report is read by converting it with the installation's own
// `nsys export --type parquetdir` in an isolated worker, then decoding the
// directory as a parquetdir. Without nsys there is no reader: the decode
// is PROVIDER_UNAVAILABLE, never a guess at the report's private format.

const (
	limitWorkerTimeout = "worker_timeout_seconds"
	limitWorkerRSS     = "worker_max_rss_bytes"
)

// HostGuidance is what to do when no nsys is found.
const HostGuidance = "install NVIDIA Nsight Systems (the CUDA toolkit's nsight-systems package, or https://developer.nvidia.com/nsight-systems) " +
	"and put its nsys on PATH, or export the report on a host that has it: `nsys export --type parquetdir -o report_pqtdir report.nsys-rep`, " +
	"then give report_pqtdir/META_DATA_EXPORT.parquet"

// SearchGlobs are where nsys is looked for after PATH, newest version
// first: the standalone installer's and Nsight Compute's bundled copy.
var SearchGlobs = []string{
	"/opt/nvidia/nsight-systems/*/bin/nsys",
	"/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
	"/usr/local/cuda/bin/nsys",
}

// repMagic starts every Nsight Systems report (.nsys-rep, and the .qdrep
// of older releases).
var repMagic = []byte("NVIDIA Tegra Profiler Report")

// RepSpec is the Nsight Systems report format.
var RepSpec = &formats.Spec{
	Name:     "nsys-rep",
	Title:    "Nsight Systems report",
	Family:   formats.FamilyGPU,
	Suffixes: []string{".nsys-rep"},
	Sniff:    sniffRep,
	Tables:   Spec.Tables,
	Limits: append(append([]formats.Limit{}, Spec.Limits...),
		formats.Limit{Name: limitWorkerTimeout, Default: 1800, Unit: "s", Doc: "wall time of the nsys export worker"},
		formats.Limit{Name: limitWorkerRSS, Default: 16 << 30, Unit: "bytes", Doc: "resident memory of the nsys export worker's process group"}),
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "NVIDIA Nsight Systems (nsys profile), converted with nsys export --type parquetdir",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeRep),
}

func sniffRep(prefix []byte) formats.Verdict {
	if len(prefix) < len(repMagic) {
		if bytes.HasPrefix(repMagic, prefix) {
			return formats.NeedMore
		}
		return formats.No
	}
	if bytes.HasPrefix(prefix, repMagic) {
		return formats.Yes
	}
	return formats.No
}

// Nsys is a resolved nsys installation.
type Nsys struct {
	Path    string
	Version string // `nsys --version`, e.g. "NVIDIA Nsight Systems version 2024.6.2.225-246235244400v0"
	Digest  string // sha256 of the executable
}

// Locate finds nsys (PATH, then SearchGlobs) and identifies it by digest
// and version. No nsys is PROVIDER_UNAVAILABLE with HostGuidance.
func Locate(ctx context.Context) (*Nsys, error) {
	path, err := exec.LookPath("nsys")
	if err != nil {
		path = ""
		for _, g := range SearchGlobs {
			m, _ := filepath.Glob(g)
			sort.Sort(sort.Reverse(sort.StringSlice(m)))
			for _, c := range m {
				if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					path = c
					break
				}
			}
			if path != "" {
				break
			}
		}
	}
	if path == "" {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: "reading an Nsight Systems report needs nsys (nsys export), and none is on PATH or under " + strings.Join(SearchGlobs, ", "),
			Retry:   &evidence.Retry{Action: HostGuidance}}
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "resolve nsys")
	}
	digest, err := worker.FileSHA256(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "read %s", path)
	}
	n := &Nsys{Path: path, Digest: digest}
	var out bytes.Buffer
	dir, err := os.MkdirTemp("", "flameox-nsys-")
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "make a directory for nsys --version")
	}
	defer os.RemoveAll(dir)
	_, err = worker.Run(ctx, &worker.Spec{
		Name: "nsys --version", Path: path, Args: []string{"--version"}, Dir: dir,
		Env: workerEnv(dir), Timeout: 60 * time.Second, MaxRSS: 1 << 30,
	}, func(r io.Reader) error {
		_, err := io.Copy(&out, io.LimitReader(r, 4096))
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		return err
	})
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable, Message: path + " --version failed: " + err.Error(),
			Retry: &evidence.Retry{Action: HostGuidance}, Err: err}
	}
	n.Version = strings.TrimSpace(out.String())
	if !strings.Contains(n.Version, "Nsight Systems") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: path + " --version printed " + quote(n.Version) + ", not an NVIDIA Nsight Systems version",
			Retry:   &evidence.Retry{Action: HostGuidance}}
	}
	return n, nil
}

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// workerEnv is the whole environment of an nsys worker: nsys keeps its
// configuration and temporary files under HOME and TMPDIR, both inside
// the worker's own directory.
func workerEnv(dir string) []string {
	return []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" + dir, "TMPDIR=" + dir}
}

// ExportArgs are the nsys arguments of a conversion after the input and
// output paths are known.
var ExportArgs = []string{"export", "--type", "parquetdir", "--force-overwrite", "true"}

// cacheManifest is an installed conversion's record: its key and every
// file of its directory by size and digest, checked before it is reused.
type cacheManifest struct {
	Key   worker.Key       `json:"key"`
	Files map[string]entry `json:"files"`
}

type entry struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

func decodeRep(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if in.File == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "the nsys-rep decoder needs the artifact's file")
	}
	if err := in.VerifyFile(); err != nil {
		return err
	}
	head := make([]byte, len(repMagic))
	if _, err := in.File.ReadAt(head, 0); err != nil || !bytes.Equal(head, repMagic) {
		return evidence.Failf(evidence.CodeDecodeFailure, "not an Nsight Systems report: it does not start with %q", repMagic).At(in.Artifact.Path, "")
	}
	n, err := Locate(ctx)
	if err != nil {
		return err
	}
	key := worker.Key{Input: in.Artifact.ID, Converter: "nsys export", Identity: "sha256:" + n.Digest + " " + n.Version,
		Args: ExportArgs, Consumer: "flameox nsys-parquetdir " + Version}
	conv := evidence.Object{"converter": n.Path, "converter_version": n.Version}
	var dir string
	if cache := worker.SessionCache(); cache == nil {
		conv["conversion_cache"] = "off"
		tmp, err := os.MkdirTemp("", "flameox-nsys-export-")
		if err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "make a directory for the conversion")
		}
		defer os.RemoveAll(tmp)
		if dir, err = convert(ctx, in, n, tmp, conv); err != nil {
			return err
		}
	} else {
		root := filepath.Join(cache.Dir, "nsys-parquetdir")
		final := filepath.Join(root, key.Hex())
		if ok := verifyEntry(final, key); ok {
			conv["conversion_cache"] = "hit"
			dir = filepath.Join(final, "pqtdir")
		} else {
			conv["conversion_cache"] = "miss"
			if dir, err = convertInto(ctx, in, n, root, final, key, conv); err != nil {
				return err
			}
		}
	}
	e, err := openExport(in, dir, "")
	if err != nil {
		return err
	}
	base, ok := e.resolve(MetaTable)
	if !ok {
		return (&evidence.Failure{Code: evidence.CodeDecodeFailure,
			Message: "nsys export wrote no " + MetaTable + " table: the conversion is not a parquetdir export",
			Details: evidence.Object{"tables": e.tableNames()}}).At(in.Artifact.Path, "")
	}
	return decodeExport(ctx, in, e, base, out, conv)
}

// convert runs nsys export in a fresh directory under parent and returns
// the parquetdir it wrote.
func convert(ctx context.Context, in *formats.Input, n *Nsys, parent string, conv evidence.Object) (string, error) {
	work, err := os.MkdirTemp(parent, "run-")
	if err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "make a directory for the conversion")
	}
	// The worker sees the report only as its descriptor 3; nsys wants a
	// path with the report's suffix, which this link gives it.
	if err := os.Symlink(worker.InputPath(0), filepath.Join(work, "report.nsys-rep")); err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "link the report for nsys")
	}
	args := append(append([]string{}, ExportArgs...), "--output", "report_pqtdir", "report.nsys-rep")
	res, err := worker.Run(ctx, &worker.Spec{
		Name: "nsys export", Path: n.Path, Args: args, Inputs: []*os.File{in.File}, Dir: work,
		Env: workerEnv(work), Timeout: time.Duration(in.Limit(limitWorkerTimeout)) * time.Second, MaxRSS: in.Limit(limitWorkerRSS),
	}, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r) // progress text
		return err
	})
	if err != nil {
		return "", err
	}
	if res.Stderr.Retained > 0 {
		conv["converter_stderr"] = res.Stderr.Text
	}
	// Releases differ in whether --output names the directory or its
	// stem (an older export appends _pqtdir).
	for _, c := range []string{"report_pqtdir", "report_pqtdir_pqtdir", "report"} {
		p := filepath.Join(work, c)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, nil
		}
	}
	return "", (&evidence.Failure{Code: evidence.CodeDecodeFailure,
		Message: "nsys export exited 0 but wrote no parquetdir (report_pqtdir)", Details: res.Details()}).At(in.Artifact.Path, "")
}

// convertInto converts into the cache: the directory is complete, with
// its manifest, before it is renamed into place, so a reader never sees a
// partial entry.
func convertInto(ctx context.Context, in *formats.Input, n *Nsys, root, final string, key worker.Key, conv evidence.Object) (string, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "make the conversion cache")
	}
	tmp, err := os.MkdirTemp(root, ".pending-")
	if err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "make a cache entry")
	}
	defer os.RemoveAll(tmp)
	out, err := convert(ctx, in, n, tmp, conv)
	if err != nil {
		return "", err
	}
	entryDir := filepath.Join(tmp, "entry")
	if err := os.Mkdir(entryDir, 0o700); err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "make a cache entry")
	}
	if err := os.Rename(out, filepath.Join(entryDir, "pqtdir")); err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "move the conversion")
	}
	files, err := listFiles(filepath.Join(entryDir, "pqtdir"))
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(cacheManifest{Key: key, Files: files})
	if err := os.WriteFile(filepath.Join(entryDir, "manifest.json"), b, 0o600); err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "write the cache manifest")
	}
	os.RemoveAll(final) // an entry that failed verification
	if err := os.Rename(entryDir, final); err != nil {
		if !verifyEntry(final, key) { // another run may have installed it meanwhile
			return "", evidence.Wrap(evidence.CodeIOFailure, err, "install the conversion")
		}
	}
	return filepath.Join(final, "pqtdir"), nil
}

// listFiles digests every regular file of a conversion; anything else
// (a link, a subdirectory) is not a parquetdir's and fails.
func listFiles(dir string) (map[string]entry, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "list the conversion")
	}
	out := map[string]entry{}
	for _, d := range ents {
		if !d.Type().IsRegular() {
			return nil, evidence.Failf(evidence.CodeDecodeFailure, "nsys export wrote %s, which is not a regular file", d.Name())
		}
		f, err := os.Open(filepath.Join(dir, d.Name()))
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read the conversion")
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read the conversion")
		}
		out[d.Name()] = entry{Bytes: n, SHA256: "sha256:" + hex.EncodeToString(h.Sum(nil))}
	}
	return out, nil
}

// verifyEntry reports whether an installed entry is the conversion of key
// with every file as the manifest lists it.
func verifyEntry(final string, key worker.Key) bool {
	b, err := os.ReadFile(filepath.Join(final, "manifest.json"))
	if err != nil {
		return false
	}
	var m cacheManifest
	if json.Unmarshal(b, &m) != nil || m.Key.Hex() != key.Hex() {
		return false
	}
	files, err := listFiles(filepath.Join(final, "pqtdir"))
	if err != nil || len(files) != len(m.Files) {
		return false
	}
	for k, v := range m.Files {
		if files[k] != v {
			return false
		}
	}
	return true
}
