package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/wire"
)

// Options are a request's runtime choices, separate from the provider's
// typed arguments.
type Options struct {
	Budget Budget
	// Console is ConsoleBounded (the default when empty) or ConsoleFull.
	// A plan with FullConsole is always full.
	Console string
	// Preserve, when set, is a bundle store: the capture block and its
	// native outputs are published there at capture time.
	Preserve string
	// ScratchRoot overrides $FLAMEOX_SCRATCH and the default root.
	ScratchRoot string
	// Precheck runs after argument validation and before the collector is
	// resolved: a caller's compatibility checks (declared formats against
	// an operation, arguments that do not fit those formats).
	Precheck func(p *Provider, req *Request, given map[string]bool) error
	// Progress receives a progress line for long captures; nil for none.
	// Callers pass stderr only when it is a terminal.
	Progress io.Writer
	// Tee, when set, receives the workload's stdout and stderr (and its
	// post commands') as they arrive, besides the capture's own retention.
	// A failing Tee is dropped, never the capture. The CLI passes its
	// stderr when that is a terminal: its stdout carries blocks only.
	Tee io.Writer
}

// Run validates req against p, resolves the collector, executes the
// provider's plan in a fresh request-owned scratch directory and writes
// the capture block, one artifact block per staged output and, when
// preserving, the bundle block to w. A failure is returned as
// *evidence.Failure; the caller writes it. Failures before the workload
// starts write nothing; a started attempt always writes its capture block.
// The returned capture is nil only when nothing started.
func Run(ctx context.Context, p *Provider, req *Request, opt Options, w *wire.Writer) (*evidence.Capture, error) {
	rq, err := validate(p, req, opt)
	if err != nil {
		return nil, err
	}
	res, err := p.Resolve(ctx, rq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "capture: %s", p.Name)
		}
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "capture: %s", p.Name)
	}
	root, err := ScratchRoot(opt.ScratchRoot)
	if err != nil {
		return nil, err
	}
	dir, notes, err := newRequestDir(root)
	if err != nil {
		return nil, err
	}
	plan, err := p.Plan(rq, dir.path, res)
	if err == nil {
		err = checkPlan(plan, dir.path)
	}
	if err != nil {
		_ = dir.remove()
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "capture: %s", p.Name)
	}
	if len(rq.Limits) > 0 {
		notes = append(notes, "decoder limits "+formatObject(rq.Limits)+" travel with the request; capture does not apply them (flameox-decode does)")
	}
	r := &request{p: p, req: rq, opt: opt, res: res, plan: plan, dir: dir, notes: notes}
	return r.run(ctx, w)
}

// validate checks everything that can be checked before anything runs and
// returns the request with effective arguments.
func validate(p *Provider, req *Request, opt Options) (*Request, error) {
	bad := func(format string, args ...any) error {
		return evidence.Failf(evidence.CodeInvalidArgument, "capture %s: "+format, append([]any{p.Name}, args...)...)
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, bad("no workload command (give it after --)")
	}
	// The capture block records argv as text, and the workload must get
	// the bytes asked for: a word that is not UTF-8 can be neither
	// recorded exactly nor replaced silently.
	for i, a := range req.Argv {
		if !utf8.ValidString(a) {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("capture %s: workload argument %d is not valid UTF-8 (%q); evidence records the command as text", p.Name, i, a),
				Location: evidence.Location{Field: fmt.Sprintf("argv[%d]", i)}}
		}
	}
	if !filepath.IsAbs(req.Cwd) {
		return nil, bad("working directory %q is not absolute", req.Cwd)
	}
	if st, err := os.Stat(req.Cwd); err != nil || !st.IsDir() {
		return nil, bad("working directory %s is not a directory", req.Cwd)
	}
	switch opt.Console {
	case "", ConsoleBounded, ConsoleFull:
	default:
		return nil, bad("console output %q is not %s or %s", opt.Console, ConsoleBounded, ConsoleFull)
	}
	for _, r := range p.Artifacts {
		if r.Role == "" || r.Format == "" || r.Pattern == "" {
			return nil, evidence.Failf(evidence.CodeInternal, "provider %s declares an incomplete artifact role %+v", p.Name, r)
		}
		if _, err := filepath.Match(r.Pattern, ""); err != nil {
			return nil, evidence.Failf(evidence.CodeInternal, "provider %s role %s: bad pattern %q", p.Name, r.Role, r.Pattern)
		}
	}
	if p.Binding.Managed && p.Binding.Setup == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "managed provider %s has no setup pin", p.Name)
	}
	args, given, err := param.Validate(p.Params, req.Args)
	if err != nil {
		return nil, prefix(err, "capture "+p.Name)
	}
	rq := *req
	rq.Provider = p.Name
	rq.Args = args
	if opt.Precheck != nil {
		if err := opt.Precheck(p, &rq, given); err != nil {
			return nil, evidence.AsFailure(err, evidence.CodeInvalidArgument)
		}
	}
	return &rq, nil
}

// checkPlan rejects a plan the runtime cannot own.
func checkPlan(pl *Plan, scratch string) error {
	if len(pl.Command) == 0 {
		return errors.New("plan has no command")
	}
	if !filepath.IsAbs(pl.OutputDir) {
		return fmt.Errorf("plan output directory %q is not absolute", pl.OutputDir)
	}
	for _, s := range pl.Support {
		if !inside(scratch, s.Path) {
			return fmt.Errorf("support file %s is outside the request's scratch", s.Path)
		}
	}
	for i, c := range pl.Post {
		if len(c) == 0 {
			return fmt.Errorf("post command %d is empty", i)
		}
	}
	return nil
}

func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(p))
	return err == nil && filepath.IsAbs(p) && rel != "." && !strings.HasPrefix(rel, "..")
}

// request is one capture after validation, resolution and planning.
type request struct {
	p     *Provider
	req   *Request
	opt   Options
	res   *Resolved
	plan  *Plan
	dir   *requestDir
	notes []string
}

func (r *request) run(ctx context.Context, w *wire.Writer) (*evidence.Capture, error) {
	pl := r.plan
	c := &evidence.Capture{
		ID:       r.dir.id,
		Provider: evidence.Producer{Name: r.p.Name, Version: r.res.Version},
		Argv:     r.req.Argv,
		Command:  pl.Command,
		Cwd:      pl.Dir,
		Budget:   r.opt.Budget.Object(),
		Scratch:  r.dir.path,
	}
	if r.res.Executable != nil {
		exe := *r.res.Executable
		c.Executable = &exe
	}
	if c.Cwd == "" {
		c.Cwd = r.req.Cwd
	}
	mode := r.opt.Console
	if mode == "" {
		mode = ConsoleBounded
	}
	if pl.FullConsole {
		mode = ConsoleFull
	}
	failStart := func(err error) (*evidence.Capture, error) {
		c.Outcome = evidence.OutcomeStartFailed
		c.Notes = r.notes
		f := evidence.Wrap(evidence.CodeIOFailure, err, "capture %s: prepare", r.p.Name)
		return c, r.finish(ctx, w, c, nil, f)
	}
	if err := writeSupport(pl.Support); err != nil {
		return failStart(err)
	}
	if err := os.MkdirAll(pl.OutputDir, 0o700); err != nil {
		return failStart(err)
	}
	m := &monitor{budget: r.opt.Budget, outputDir: pl.OutputDir, progress: r.opt.Progress, label: r.p.Name}
	if m.budget.MaxOutputBytes > 0 {
		// Taken after the support files are written: they are flameox's,
		// not workload growth.
		base, err := treeSize(pl.OutputDir)
		if err != nil {
			return failStart(err)
		}
		m.baseline = base
	}
	stdout, err := newStream("stdout", mode, filepath.Join(r.dir.path, "console"))
	if err != nil {
		return failStart(err)
	}
	stderr, err := newStream("stderr", mode, filepath.Join(r.dir.path, "console"))
	if err != nil {
		return failStart(err)
	}
	if r.opt.Tee != nil {
		t := &tee{m: m, w: r.opt.Tee}
		stdout.tee, stderr.tee = t, t
	}
	env := append(os.Environ(), pl.Env...)
	accept := pl.AcceptExit
	if len(accept) == 0 {
		accept = []int{0}
	}

	m.started = time.Now()
	if t := r.opt.Budget.TimeoutSeconds; t > 0 {
		m.deadline = m.started.Add(time.Duration(t * float64(time.Second)))
	}
	c.StartedAt = m.started
	wl := m.run(ctx, pl.Command, env, c.Cwd, stdout, stderr)
	c.ExitCode, c.Signal = wl.exitCode, wl.signal
	last := wl
	if len(wl.ended) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("ended %d process(es) of the workload's tree still running after its main process exited: %s",
			len(wl.ended), describeEnded(wl.ended)))
	}
	if pl.AnyExit && wl.exitCode != nil && !wl.ok(accept) {
		accept = append(accept, *wl.exitCode)
	}
	if wl.exitCode != nil && *wl.exitCode != 0 && wl.ok(accept) {
		r.notes = append(r.notes, fmt.Sprintf("the workload exited with status %d, which this provider accepts: the status is provenance and its outputs are kept as evidence", *wl.exitCode))
	}
	var postFail string
	if wl.ok(accept) {
		for i, pc := range pl.Post {
			pr := m.run(ctx, pc, env, c.Cwd, stdout, stderr)
			last = pr
			if len(pr.ended) > 0 {
				r.notes = append(r.notes, fmt.Sprintf("post command %d: ended %d process(es) still running after it exited: %s",
					i+1, len(pr.ended), describeEnded(pr.ended)))
			}
			if !pr.ok([]int{0}) {
				postFail = fmt.Sprintf("post command %d (%s) failed: %s", i+1, strings.Join(pc, " "), describe(pr))
				break
			}
		}
	}
	c.EndedAt = time.Now()
	m.clear()
	if last.endErr != nil {
		r.notes = append(r.notes, last.endErr.Error())
	}

	var f *evidence.Failure
	switch {
	case last.cancelled:
		c.Outcome = evidence.OutcomeCancelled
		f = evidence.Failf(evidence.CodeCancelled, "capture %s: cancelled; the workload's process tree was ended and its scratch removed", r.p.Name)
	case wl.startErr != nil:
		c.Outcome = evidence.OutcomeStartFailed
		f = evidence.Wrap(evidence.CodeCaptureFailed, wl.startErr, "capture %s: start %s", r.p.Name, pl.Command[0])
	case last.limit != nil:
		c.Outcome = evidence.OutcomeLimitExceeded
		c.Limit = last.limit
		f = &evidence.Failure{Code: evidence.CodeLimitExceeded,
			Message: fmt.Sprintf("capture %s: workload budget %s=%v crossed (observed %v %s); its process tree was ended",
				r.p.Name, last.limit.Name, last.limit.Value, last.limit.Observed, last.limit.Unit),
			Details: evidence.Object{"limit": last.limit.Name, "value": last.limit.Value, "observed": last.limit.Observed, "unit": last.limit.Unit}}
	case !wl.ok(accept):
		c.Outcome = evidence.OutcomeWorkloadFailed
		f = &evidence.Failure{Code: evidence.CodeCaptureFailed,
			Message: fmt.Sprintf("capture %s: workload ended with %s (accepted exit statuses: %v)", r.p.Name, wl.status(), accept)}
	case postFail != "":
		c.Outcome = evidence.OutcomeWorkloadFailed
		r.notes = append(r.notes, postFail)
		f = evidence.Failf(evidence.CodeCaptureFailed, "capture %s: %s", r.p.Name, postFail)
	}

	if c.Outcome == evidence.OutcomeCancelled {
		stdout.finish()
		stderr.finish()
		if err := r.dir.remove(); err != nil {
			r.notes = append(r.notes, err.Error())
		} else {
			c.Scratch = ""
		}
		c.Console = map[string]*evidence.ConsoleStream{}
		for _, s := range []*stream{stdout, stderr} {
			c.Console[s.name] = r.boundedConsole(s)
		}
		c.Notes = r.notes
		if err := w.Write(c); err != nil {
			return c, err
		}
		return c, f
	}

	arts, missing, err := r.artifacts(c, stdout, stderr, mode)
	if err != nil && f == nil {
		f = evidence.AsFailure(err, evidence.CodeIOFailure)
	}
	if ended := endedBy(last, wl); ended != "" {
		for _, role := range r.p.Artifacts {
			if !slices.Contains(missing, role.Role) {
				continue
			}
			note := fmt.Sprintf("no %s output (%s): %s before it wrote one", role.Role, role.Pattern, ended)
			if role.Unflushed != "" {
				note += "; " + role.Unflushed
			}
			r.notes = append(r.notes, note)
		}
	}
	if f == nil && len(missing) > 0 {
		c.Outcome = evidence.OutcomeOutputsMissing
		f = &evidence.Failure{Code: evidence.CodeCaptureFailed,
			Message: fmt.Sprintf("capture %s: the workload exited with %s but wrote no %s output (expected %s in %s)",
				r.p.Name, wl.status(), strings.Join(missing, ", "), r.patterns(missing), pl.OutputDir),
			Details: evidence.Object{"missing_roles": missing}}
	}
	if c.Outcome == "" {
		c.Outcome = evidence.OutcomeCompleted
	}
	if f != nil && f.Details == nil {
		f.Details = evidence.Object{}
	}
	if f != nil {
		f.Details["capture_id"] = c.ID
		f.Details["outcome"] = c.Outcome
	}
	c.Notes = r.notes
	return c, r.finish(ctx, w, c, arts, f)
}

// artifacts hashes the declared outputs and, in full mode, the console
// files. It returns the roles that are required but absent.
func (r *request) artifacts(c *evidence.Capture, stdout, stderr *stream, mode string) ([]*evidence.Artifact, []string, error) {
	var arts []*evidence.Artifact
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
		r.notes = append(r.notes, err.Error())
	}
	producer := evidence.Producer{Name: r.p.Binding.Executable, Version: r.res.Version}
	found, missing, skipped, err := collect(r.plan.OutputDir, r.p.Artifacts, r.plan.Support)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range skipped {
		r.notes = append(r.notes, "skipped "+s+": not a regular file")
	}
	for _, s := range found {
		if mode == ConsoleFull && (s.path == stdout.path || s.path == stderr.path) {
			// A provider may declare the console files as its outputs
			// (process capture); they are emitted once, below, hashed
			// only up to their settled size.
			continue
		}
		a, err := artifactOf(s.path, s.role.Role, s.role.Format, producer, c.ID)
		if err != nil {
			keep(err)
			continue
		}
		arts = append(arts, a)
	}
	c.Console = map[string]*evidence.ConsoleStream{}
	for _, s := range []*stream{stdout, stderr} {
		size, err := s.finish()
		if err != nil {
			keep(err)
		}
		if mode != ConsoleFull {
			c.Console[s.name] = r.boundedConsole(s)
			if c.Console[s.name].Omitted > 0 {
				r.notes = append(r.notes, fmt.Sprintf("console %s: %d bytes omitted between the %d-byte head and %d-byte tail windows; they cannot be recovered",
					s.name, c.Console[s.name].Omitted, ConsoleHead, ConsoleTail))
			}
			continue
		}
		cs := &evidence.ConsoleStream{Mode: ConsoleFull, Observed: s.seen, Retained: size}
		c.Console[s.name] = cs
		if err != nil {
			continue
		}
		role := RoleConsoleStdout
		if s.name == "stderr" {
			role = RoleConsoleStderr
		}
		a, err := artifactSized(s.path, size, role, "text", evidence.Producer{Name: "flameox-capture"}, c.ID)
		if err != nil {
			keep(err)
			continue
		}
		cs.ArtifactID = a.ID
		arts = append(arts, a)
	}
	return arts, missing, firstErr
}

// boundedConsole is a stream's bounded record; it notes the replacement
// decoding only when some retained byte was replaced.
func (r *request) boundedConsole(s *stream) *evidence.ConsoleStream {
	cs, replaced := s.bounded()
	if replaced {
		r.notes = append(r.notes, "console "+s.name+": text is replacement-decoded: invalid UTF-8 (or a character cut by a window edge) became U+FFFD")
	}
	return cs
}

func (r *request) patterns(roles []string) string {
	var ps []string
	for _, a := range r.p.Artifacts {
		if slices.Contains(roles, a.Role) {
			ps = append(ps, a.Pattern)
		}
	}
	return strings.Join(ps, ", ")
}

// finish preserves when asked, writes the blocks and releases the
// scratch directory for eviction.
func (r *request) finish(ctx context.Context, w *wire.Writer, c *evidence.Capture, arts []*evidence.Artifact, f *evidence.Failure) error {
	var b *evidence.Bundle
	if r.opt.Preserve != "" {
		var err error
		b, err = preserve(ctx, r.opt.Preserve, c, arts, f)
		if err != nil {
			pf := evidence.AsFailure(err, evidence.CodeIOFailure)
			c.Notes = append(c.Notes, "preservation failed: "+pf.Message)
			if f == nil {
				f = pf
				if f.Details == nil {
					f.Details = evidence.Object{}
				}
				f.Details["capture_id"] = c.ID
				f.Details["outcome"] = c.Outcome
			}
		} else {
			c.BundleID = b.ID
		}
	}
	// Completed before the blocks go out: a reader that stops early (a
	// closed pipe ends this process with SIGPIPE) must not leave the
	// directory unevictable.
	cerr := r.dir.complete()
	var werr error
	write := func(blk evidence.Block) {
		if werr == nil {
			werr = w.Write(blk)
		}
	}
	write(c)
	for _, a := range arts {
		write(a)
	}
	if b != nil {
		write(b)
	}
	if f != nil {
		return f
	}
	if werr != nil {
		return werr
	}
	return cerr
}

// endedBy says how the workload was stopped short, when it was: by a
// budget (the capture's TERM) or by a signal.
func endedBy(last, wl *execResult) string {
	switch {
	case last.limit != nil:
		return "the workload's tree was ended (SIGTERM, then SIGKILL) when the budget " + last.limit.Name + " was crossed"
	case wl.signal != "":
		return "the workload was ended by " + wl.signal
	}
	return ""
}

func describe(r *execResult) string {
	switch {
	case r.startErr != nil:
		return r.startErr.Error()
	case r.limit != nil:
		return "budget " + r.limit.Name + " crossed"
	}
	return r.status()
}

// writeSupport materializes the collector's support files.
func writeSupport(files []SupportFile) error {
	for _, s := range files {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
			return err
		}
		mode := os.FileMode(s.Mode)
		if mode == 0 {
			mode = 0o600
		}
		if err := os.WriteFile(s.Path, s.Content, mode); err != nil {
			return err
		}
	}
	return nil
}

func formatObject(o evidence.Object) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, o[k]))
	}
	return strings.Join(parts, ",")
}
