package command

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/wire"
	"golang.org/x/sys/unix"
)

// run runs body with captured streams and returns the exit status, the
// blocks on stdout and the stderr text.
func run(t *testing.T, ctx context.Context, body func(ctx context.Context, env *Env) error) (int, []*evidence.Raw, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, W: wire.NewWriter(&stdout)}
	code := Run(ctx, "flameox-test", env, body)
	var blocks []*evidence.Raw
	r := wire.NewReader(&stdout)
	for {
		raw, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stdout is not a block stream: %v\n%s", err, stdout.String())
		}
		blocks = append(blocks, raw)
	}
	return code, blocks, stderr.String()
}

// One rule for failures: one failure block on stdout, one line on stderr
// (two with a retry action), the exit status of the failure's code.
func TestRunFailures(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		body   func(context.Context, *Env) error
		code   evidence.Code
		stderr []string
	}{
		{"typed failure", context.Background(), func(context.Context, *Env) error {
			return evidence.Failf(evidence.CodeDecodeFailure, "bad byte")
		}, evidence.CodeDecodeFailure, []string{"flameox-test: DECODE_FAILURE: bad byte"}},
		{"wrapped typed failure", context.Background(), func(context.Context, *Env) error {
			return errors.Join(errors.New("context"), evidence.Failf(evidence.CodeLimitExceeded, "too many"))
		}, evidence.CodeLimitExceeded, []string{"LIMIT_EXCEEDED"}},
		{"with a retry action", context.Background(), func(context.Context, *Env) error {
			return &evidence.Failure{Code: evidence.CodeProviderUnavailable, Message: "no node", Retry: &evidence.Retry{Action: "install node"}}
		}, evidence.CodeProviderUnavailable, []string{"PROVIDER_UNAVAILABLE: no node", "flameox-test: to fix: install node"}},
		{"plain error is internal", context.Background(), func(context.Context, *Env) error {
			return errors.New("oops")
		}, evidence.CodeInternal, []string{"INTERNAL"}},
		{"plain error after cancellation", cancelled, func(context.Context, *Env) error {
			return errors.New("read interrupted")
		}, evidence.CodeCancelled, []string{"CANCELLED"}},
		{"panic", context.Background(), func(context.Context, *Env) error {
			panic("boom")
		}, evidence.CodeInternal, []string{"flameox-test panicked: boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, blocks, stderr := run(t, tc.ctx, tc.body)
			if code != evidence.ExitCode(tc.code) || code == 0 {
				t.Errorf("exit %d, want %d (%s)", code, evidence.ExitCode(tc.code), tc.code)
			}
			if len(blocks) != 1 || blocks[0].Kind() != evidence.KindFailure {
				t.Fatalf("stdout blocks %v, want one failure block", blocks)
			}
			f, err := evidence.FailureFrom(blocks[0].Obj)
			if err != nil || f.Code != tc.code {
				t.Errorf("failure block %v (%v), want code %s", blocks[0].Obj, err, tc.code)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != len(tc.stderr) {
				t.Errorf("stderr %q, want %d lines", stderr, len(tc.stderr))
			}
			for i, want := range tc.stderr {
				if i < len(lines) && !strings.Contains(lines[i], want) {
					t.Errorf("stderr line %d = %q, want it to hold %q", i, lines[i], want)
				}
			}
		})
	}
}

func TestRunPanicKeepsTheStack(t *testing.T) {
	_, blocks, _ := run(t, context.Background(), func(context.Context, *Env) error { panic("boom") })
	details, _ := blocks[0].Obj["details"].(evidence.Object)
	if s, _ := details["stack"].(string); !strings.Contains(s, "command_test.go") {
		t.Errorf("details.stack %q does not locate the panic", s)
	}
}

func TestRunSuccess(t *testing.T) {
	code, blocks, stderr := run(t, context.Background(), func(_ context.Context, env *Env) error {
		return env.W.Write(&evidence.Summary{TableID: "t", Complete: true})
	})
	if code != 0 || stderr != "" || len(blocks) != 1 || blocks[0].Kind() != evidence.KindSummary {
		t.Errorf("exit %d, stderr %q, blocks %v", code, stderr, blocks)
	}
}

// A body that wrote its failure blocks itself (one per artifact, or one
// passed on from upstream) gets the first one's status and one stderr
// line, and no extra block.
func TestRunReported(t *testing.T) {
	first := evidence.Failf(evidence.CodeIntegrity, "changed")
	code, blocks, stderr := run(t, context.Background(), func(_ context.Context, env *Env) error {
		_ = env.W.Write(first)
		_ = env.W.Write(evidence.Failf(evidence.CodeDecodeFailure, "second"))
		return &Reported{First: first}
	})
	if code != evidence.ExitCode(evidence.CodeIntegrity) {
		t.Errorf("exit %d, want the first failure's", code)
	}
	if len(blocks) != 2 {
		t.Errorf("%d blocks, want the body's two and no more", len(blocks))
	}
	if stderr != "flameox-test: INTEGRITY_FAILURE: changed\n" {
		t.Errorf("stderr %q", stderr)
	}
}

// A usage error is INVALID_ARGUMENT, never a process exit.
func TestParse(t *testing.T) {
	var c struct {
		Top    int               `default:"3"`
		Option map[string]string `mapsep:","`
	}
	if _, err := Parse(&c, "x", "d", []string{"--top", "7", "--option", "a=1,b=x"}); err != nil || c.Top != 7 || c.Option["b"] != "x" {
		t.Fatalf("parse: %v, %+v", err, c)
	}
	_, err := Parse(&c, "x", "d", []string{"--bogus"})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
		t.Fatalf("unknown flag: %v", err)
	}
}

// --option text stays text until the format that declares the option
// types it.
func TestOptionValues(t *testing.T) {
	spec := &formats.Spec{Name: "x", Options: []param.Param{
		{Name: "delimiter", Type: param.String, Doc: "d"},
		{Name: "max_rows", Type: param.Int, Doc: "n"},
		{Name: "header", Type: param.Bool, Doc: "h"},
	}}
	got, _, err := formats.EffectiveOptions(spec, OptionValues(map[string]string{"delimiter": "1", "max_rows": "10", "header": "false"}))
	if err != nil {
		t.Fatal(err)
	}
	if got["delimiter"] != "1" || got["max_rows"] != int64(10) || got["header"] != false {
		t.Errorf("options %#v", got)
	}
	if _, _, err := formats.EffectiveOptions(spec, OptionValues(map[string]string{"max_rows": "ten"})); err == nil {
		t.Error("a non-integer max_rows was accepted")
	}
}

func TestOptionsHelp(t *testing.T) {
	specs := []*formats.Spec{
		{Name: "none", Title: "No options"},
		{Name: "csv", Title: "CSV", Options: []param.Param{
			{Name: "delimiter", Type: param.String, Default: "", Doc: "field delimiter"},
			{Name: "max_rows", Type: param.Int, Default: int64(100), Min: param.F(0), Max: param.F(1000), Doc: "rows emitted; " + strings.Repeat("word ", 20)},
			{Name: "mode", Type: param.Enum, Enum: []string{"a", "b"}, Doc: "mode"},
		}},
	}
	got := OptionsHelp(specs)
	for _, want := range []string{
		"\n  csv (CSV)\n",
		"\n    delimiter=STRING\n      field delimiter (default \"\")\n",
		"\n    max_rows=INTEGER\n      rows emitted; word",
		"(default 100; 0 to 1000)\n",
		"\n    mode=A|B\n      mode\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "none") {
		t.Errorf("a format without options is listed:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if len([]rune(line)) > helpWidth {
			t.Errorf("line longer than %d: %q", helpWidth, line)
		}
	}
	// Every registered format's options are listed.
	all := OptionsHelp(registry.Formats())
	for _, s := range registry.Formats() {
		for _, p := range s.Options {
			if !strings.Contains(all, "    "+p.Name+"=") {
				t.Errorf("%s option %s is not in the help", s.Name, p.Name)
			}
		}
	}
}

// Flags are typed by the declarations; only given flags are returned.
func TestParamFlags(t *testing.T) {
	params := []param.Param{
		{Name: "top", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(100), Doc: "rows"},
		{Name: "pattern", Type: param.String, Doc: "re"},
		{Name: "synthetic", Type: param.Bool, Default: true, Doc: "keep"},
		{Name: "outcomes", Type: param.StringList, Doc: "keep only"},
		{Name: "metric", Type: param.Enum, Enum: []string{"self", "calls"}, Doc: "metric"},
	}
	parse := func(args ...string) (evidence.Object, error) {
		flags := NewParamFlags(params, func(p param.Param) string { return "[op]" }, "Arguments")
		cli := &struct {
			P kong.Plugins `embed:""`
		}{P: kong.Plugins{flags.Plugin()}}
		if _, err := Parse(cli, "x", "d", args); err != nil {
			return nil, err
		}
		return flags.Args()
	}
	got, err := parse("--top", "5", "--pattern", "10", "--no-synthetic", "--outcomes", "failed,error", "--metric", "calls")
	if err != nil {
		t.Fatal(err)
	}
	eff, _, err := param.Validate(params, got)
	if err != nil {
		t.Fatal(err)
	}
	if eff["top"] != int64(5) || eff["pattern"] != "10" || eff["synthetic"] != false || eff["metric"] != "calls" ||
		strings.Join(eff["outcomes"].([]string), "|") != "failed|error" {
		t.Errorf("arguments %#v", eff)
	}
	if got, err := parse(); err != nil || len(got) != 0 {
		t.Errorf("no flags gave %v, %v; want nothing given", got, err)
	}
	if _, err := parse("--synthetic=maybe"); err == nil {
		t.Error("a non-boolean --synthetic was accepted")
	}
}

func TestMergeRequest(t *testing.T) {
	got, err := MergeRequest(`{"top":5,"metric":"self"}`, evidence.Object{"metric": "self", "thread": "main"})
	if err != nil || len(got) != 3 || got["thread"] != "main" {
		t.Fatalf("merge = %v, %v", got, err)
	}
	for _, tc := range []struct{ req string }{{`{"top":5`}, {`[1]`}} {
		if _, err := MergeRequest(tc.req, nil); err == nil {
			t.Errorf("--request %s was accepted", tc.req)
		}
	}
	_, err = MergeRequest(`{"top":5}`, evidence.Object{"top": param.FlagText("6")})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
		t.Errorf("a flag contradicting --request: %v", err)
	}
}

// On a terminal stdout a failure is its stderr text alone: no block.
func TestRunFailureOnTerminal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, W: wire.NewWriter(&stdout), StdoutTerminal: true}
	code := Run(context.Background(), "flameox-test", env, func(context.Context, *Env) error {
		return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "bad\nbyte", Location: evidence.Location{Path: "a.cpuprofile", Line: 3}}
	})
	if code != evidence.ExitCode(evidence.CodeDecodeFailure) || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q: want exit 4 and nothing on the terminal's stdout", code, stdout.String())
	}
	if want := "flameox-test: DECODE_FAILURE: bad byte (a.cpuprofile, line 3)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// The fix names the exact command when the failure carries one.
func TestFailureText(t *testing.T) {
	for _, tc := range []struct {
		f    *evidence.Failure
		want string
	}{
		{&evidence.Failure{Code: evidence.CodeProviderUnavailable, Message: "py-spy is not set up",
			Retry: &evidence.Retry{Action: "prepare the pinned collector", Argv: []string{"flameox-capture", "setup", "--provider", "py-spy"}}},
			"x: PROVIDER_UNAVAILABLE: py-spy is not set up\nx: to fix: prepare the pinned collector: flameox-capture setup --provider py-spy\n"},
		{&evidence.Failure{Code: evidence.CodeProviderUnavailable, Message: "no",
			Retry: &evidence.Retry{Action: "run `flameox-capture setup --provider py-spy`", Argv: []string{"flameox-capture", "setup", "--provider", "py-spy"}}},
			"x: PROVIDER_UNAVAILABLE: no\nx: to fix: run `flameox-capture setup --provider py-spy`\n"},
		{&evidence.Failure{Code: evidence.CodeCaptureFailed, Message: "no",
			Retry: &evidence.Retry{Argv: []string{"pip", "install", "pytest>=7", "it's"}}},
			"x: CAPTURE_FAILED: no\nx: to fix: pip install 'pytest>=7' 'it'\\''s'\n"},
		{&evidence.Failure{Code: evidence.CodeIOFailure, Message: "gone", Location: evidence.Location{Path: "p", Offset: 9, Field: "f"}},
			"x: IO_FAILURE: gone (p, byte 9, field f)\n"},
		// The message names the argument as given: the field is not repeated.
		{&evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "--start-line: want an integer", Location: evidence.Location{Path: "p", Field: "start_line"}},
			"x: INVALID_ARGUMENT: --start-line: want an integer (p)\n"},
		{&evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "decoder option: --option max_lines: bad", Location: evidence.Location{Field: "options.max_lines"}},
			"x: INVALID_ARGUMENT: decoder option: --option max_lines: bad\n"},
		// Native text in a message (a function name, a path) cannot act on
		// the terminal: controls and bidi overrides are escaped (9.8).
		{&evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "bad name \x1b[2J\x1b]0;owned\a\u202eevil\r", Location: evidence.Location{Path: "/tmp/\x1b[31mx"}},
			"x: DECODE_FAILURE: bad name \\x1b[2J\\x1b]0;owned\\x07\\u202eevil (/tmp/\\x1b[31mx)\n"},
	} {
		if got := FailureText("x", tc.f); got != tc.want {
			t.Errorf("FailureText = %q, want %q", got, tc.want)
		}
	}
}

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-01T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionText("flameox-rank", bi), "flameox-rank (devel), commit 0123abcd (2026-12-01T12:00:00Z), modified, go1.26.0"; got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}}
	if got, want := versionText("flameox-rank", bi), "flameox-rank v1.2.3, commit unknown (not built from a git checkout), go1.26.0"; got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
}

// A failure about an argument names it as the command line spells it;
// the location keeps the request model's name for programs.
func TestRespell(t *testing.T) {
	for _, tc := range []struct {
		f     *evidence.Failure
		spell func(string) string
		want  string
	}{
		{&evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "summarize_cpu_hotspots: argument top: 0 is below the minimum 1", Location: evidence.Location{Field: "top"}},
			Flag, "summarize_cpu_hotspots: --top: 0 is below the minimum 1"},
		{&evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "argument start_line: want an integer", Location: evidence.Location{Field: "start_line"}},
			Flag, "--start-line: want an integer"},
		{&evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "format text: decoder option: argument max_lines: want an integer, got x", Location: evidence.Location{Field: "options.max_lines"}},
			Flag, "format text: decoder option: --option max_lines: want an integer, got x"},
		{&evidence.Failure{Code: evidence.CodeUnsupportedFormat, Message: "no known format matches this file; name one with argument format", Location: evidence.Location{Path: "x"}},
			Flag, "no known format matches this file; name one with --artifact-format"},
		{&evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "argument top: too small", Location: evidence.Location{Field: "top"}},
			func(f string) string { return f + " (in --request)" }, "top (in --request): too small"},
		// Not about arguments: left as it is.
		{&evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "argument top: x"}, Flag, "argument top: x"},
	} {
		got := evidence.AsFailure(Respell(tc.f, tc.spell), evidence.CodeInternal)
		if got.Message != tc.want || got.Location != tc.f.Location {
			t.Errorf("Respell(%q) = %q at %v, want %q", tc.f.Message, got.Message, got.Location, tc.want)
		}
	}
}

// TestGrowPipe: a pipe on stdout is grown to pipeBytes; a file is left
// as it is.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	growPipe(w)
	if n, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0); err != nil || n < pipeBytes {
		t.Errorf("pipe is %d bytes (%v), want %d", n, err, pipeBytes)
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	growPipe(f) // must not fail or change anything
	if _, err := f.WriteString("x"); err != nil {
		t.Error(err)
	}
}
