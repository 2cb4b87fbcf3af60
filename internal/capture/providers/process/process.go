// Package process is the capture provider for an arbitrary command's
// output: the command runs as given, and its stdout and stderr, kept whole
// on disk by the capture runtime, become text artifacts for
// preview_text_fragment and preview_artifact.
//
// It imports capture and evidence, and formats/text for the name of the format it stages.
package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/text"
)

// Console roles and files, as the capture runtime writes them under the
// request's scratch directory when a plan asks for FullConsole.
const (
	RoleStdout = "console-stdout"
	RoleStderr = "console-stderr"
	FileStdout = "console/stdout"
	FileStderr = "console/stderr"
)

const guidance = "argv[0] must name an executable file: a path (absolute, or relative to the capture's --cwd) or a program on PATH"

// Provider is the process provider's contract.
var Provider = &capture.Provider{
	Name:    "process",
	Example: []string{"make", "build"},
	Title:   "Process output",
	Family:  "Generic previews",
	Selection: "Run any command and keep its complete stdout and stderr as text artifacts, to read " +
		"bounded fragments of them. Use it when the evidence is what a program prints; it records no " +
		"profile, trace or timing beyond the capture's own provenance.",
	Artifacts: []capture.Role{
		{Role: RoleStdout, Format: text.Spec.Name, Pattern: FileStdout, Required: true, Doc: "the command's standard output, whole"},
		{Role: RoleStderr, Format: text.Spec.Name, Pattern: FileStderr, Required: true, Doc: "the command's standard error, whole"},
	},
	Binding: capture.Binding{Executable: "argv[0]", Guidance: guidance},
	Resolve: Resolve,
	Plan:    Plan,
}

// Resolve finds the workload's executable and binds its identity (path
// and SHA-256) before anything runs. A name with a slash is taken relative
// to the request's working directory; a bare name is looked up on PATH.
func Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "the process provider needs a command: flameox-capture process -- PROGRAM [ARGS...]"}
	}
	name := req.Argv[0]
	path, err := lookPath(name, req.Cwd)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("cannot run %q: %v", name, err),
			Details: evidence.Object{"argv0": name},
			Retry:   &evidence.Retry{Action: guidance + "; install the program or fix the path, then capture again"},
			Err:     err}
	}
	sum, err := capture.FileSHA256(path)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("cannot read the executable %s to bind its identity: %v", path, err),
			Details: evidence.Object{"argv0": name, "path": path}, Err: err}
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: sum}}, nil
}

// lookPath resolves argv[0] without consulting the process's own working
// directory: relative paths belong to the request's.
func lookPath(name, cwd string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) {
		p := name
		if !filepath.IsAbs(p) {
			if cwd == "" {
				return "", errors.New("a relative program path needs the capture's working directory")
			}
			p = filepath.Join(cwd, p)
		}
		return checkExecutable(p)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("not found on PATH")
	}
	if !filepath.IsAbs(p) {
		// PATH held a relative entry (exec.ErrDot is already refused):
		// never bind a path that moves with the working directory.
		return "", fmt.Errorf("found only through a relative PATH entry (%s)", p)
	}
	return checkExecutable(p)
}

func checkExecutable(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	if st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable", p)
	}
	return filepath.Clean(p), nil
}

// Plan runs the resolved executable with the request's arguments in the
// request's directory and asks for full console retention: the streams
// are the evidence. argv[0] becomes the resolved path; a program that
// reads its own argv[0] sees that path.
func Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "the process provider needs a command")
	}
	if r == nil || r.Executable == nil || r.Executable.Path == "" {
		return nil, evidence.Failf(evidence.CodeInternal, "process plan without a resolved executable")
	}
	if !filepath.IsAbs(scratch) {
		return nil, evidence.Failf(evidence.CodeInternal, "scratch directory %q is not absolute", scratch)
	}
	cmd := append([]string{r.Executable.Path}, req.Argv[1:]...)
	return &capture.Plan{
		Command:     cmd,
		Dir:         req.Cwd,
		OutputDir:   scratch,
		FullConsole: true,
	}, nil
}
