package mcpserver

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/registry"
)

// The service tools: what an agent does with evidence besides capturing
// and analyzing it.
const (
	ToolReanalyze = "reanalyze"
	ToolPreserve  = "preserve"
	ToolPrepare   = "prepare_providers"
	binPreserve   = "flameox-preserve"
)

// ServiceTools names the tools that are neither an operation nor a
// provider.
func ServiceTools() []string { return []string{ToolReanalyze, ToolPreserve, ToolPrepare} }

// reanalyzeSchema does not list the operations (every analysis tool's
// name is one; the server names those that read the artifacts when one
// does not), so it does not grow with the registry.
func reanalyzeSchema() evidence.Object {
	return evidence.Object{
		"type": "object",
		"properties": evidence.Object{
			"handle":   evidence.Object{"type": "string", "description": "a capture's handle"},
			"bundle":   evidence.Object{"type": "string", "description": "or a preserved bundle id"},
			"store":    evidence.Object{"type": "string", "description": "the bundle's store (default: those of this session)"},
			"analysis": evidence.Object{"type": "object", "description": "operation (any analysis tool; default the capture's) and its arguments"},
			"detail":   detailSchema,
		},
		"additionalProperties": false,
	}
}

const reanalyzeDescription = "Run an operation again on a capture's staged outputs (handle) or a preserved bundle " +
	"(its native bytes verified first), with corrected arguments, without running the workload again: after a failed " +
	"analysis (a limit set too low), or for another operation. Returns what the operation's tool returns.\n" +
	`Example: {"handle":"h-0123456789abcdef","analysis":{"limits":{"max_nodes":10000000},"top":20}}`

func preserveSchema() evidence.Object {
	return evidence.Object{
		"type": "object",
		"properties": evidence.Object{
			"store":  evidence.Object{"type": "string", "description": "absolute evidence store dir"},
			"handle": evidence.Object{"type": "string", "description": "a capture's handle"},
			"paths":  evidence.Object{"type": "array", "items": evidence.Object{"type": "string"}, "minItems": 1, "maxItems": MaxPaths, "description": "or absolute artifact paths"},
			"detail": detailSchema,
		},
		"required":             []string{"store"},
		"additionalProperties": false,
	}
}

const preserveDescription = "Publish a capture (handle) or explicit artifacts (paths, decoded too) as an immutable, " +
	"content-addressed bundle in an evidence store (the same evidence, the same bundle id). " +
	"Returns the bundle id and its resource (flameox://bundle/{id}), which reanalyze reads after the session.\n" +
	`Example: {"handle":"h-0123456789abcdef","store":"/abs/evidence"}`

// prepareSchema names providers as capture tools do, less "capture_";
// an unknown one fails naming every provider. It does not list them, so
// it does not grow with the registry.
func prepareSchema() evidence.Object {
	return evidence.Object{
		"type": "object",
		"properties": evidence.Object{
			"providers": evidence.Object{"type": "array", "items": evidence.Object{"type": "string"}, "minItems": 1,
				"description": "the complete list of provider names, e.g. py-spy"},
		},
		"required":             []string{"providers"},
		"additionalProperties": false,
	}
}

const prepareDescription = "Install each managed collector's pinned version, one after another, and check host " +
	"collectors on PATH: use when a capture fails with PROVIDER_UNAVAILABLE (analysis tools need no setup). " +
	"Returns one line per provider: status, executable, version and the launcher (the setup command).\n" +
	`Example: {"providers":["py-spy"]}`

// stringArg reads an optional string argument.
func stringArg(args evidence.Object, name string) (string, bool, error) {
	v, ok := args[name]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr || s == "" {
		return "", false, invalid(name, "%s: want a non-empty string, got %s", name, jsonType(v))
	}
	return s, true, nil
}

// bundleSource finds a bundle by id in the given store or the session's.
func (s *Server) bundleSource(args evidence.Object) (*bundle.Reader, error) {
	id, _, err := stringArg(args, "bundle")
	if err != nil {
		return nil, err
	}
	stores := s.sess.storeList()
	if st, ok, err := stringArg(args, "store"); err != nil {
		return nil, err
	} else if ok {
		if _, err := absPath("store", st); err != nil {
			return nil, err
		}
		stores = []string{st}
	}
	id = strings.TrimPrefix(id, bundleScheme)
	if _, err := bundle.ParseID(id); err != nil {
		return nil, invalid("bundle", "bundle: %q is not a bundle id (sha256:<64 hex>)", id)
	}
	if len(stores) == 0 {
		return nil, invalid("store", "bundle %s: no evidence store is known to this session; give store", id)
	}
	var last error
	for _, st := range stores {
		r, err := bundle.OpenID(st, id)
		if err == nil {
			return r, nil
		}
		last = err
	}
	return nil, last
}

// prepareReanalyze validates a reanalyze call.
func (s *Server) prepareReanalyze(args evidence.Object) (*job, error) {
	if err := checkUnknown(args, []string{"handle", "bundle", "store", "analysis", "detail"}, ""); err != nil {
		return nil, err
	}
	detail, err := detailArg(args)
	if err != nil {
		return nil, err
	}
	hid, hasHandle, err := stringArg(args, "handle")
	if err != nil {
		return nil, err
	}
	_, hasBundle := args["bundle"]
	if hasHandle == hasBundle {
		return nil, invalid("handle", "give exactly one of handle (a capture of this session) and bundle (a preserved bundle id)")
	}
	a := evidence.Object{}
	if v, ok := args["analysis"]; ok {
		if a, err = objectArg("analysis", v); err != nil {
			return nil, err
		}
	}
	j := &job{detail: detail, nested: "analysis."}
	var fmts []string
	var first []string // the operations to prefer as the default
	var decode []string
	what := ""
	if hasHandle {
		h, release, err := s.sess.acquire(hid)
		if err != nil {
			return nil, err
		}
		j.release = release
		fmts, j.stdin, what = h.formats, h.sources, "handle "+h.id
		if p, ok := registry.Provider(h.provider); ok {
			first = p.Operations
		}
		j.extra = evidence.Object{"handle": h.value()}
	} else {
		r, err := s.bundleSource(args)
		if err != nil {
			return nil, err
		}
		for _, art := range r.Manifest.Artifacts {
			if !slices.Contains(fmts, art.Format) && art.Format != "" {
				fmts = append(fmts, art.Format)
			}
		}
		decode, what = []string{"--bundle", r.Dir}, "bundle "+r.ID.String()
		j.extra = evidence.Object{"bundle": evidence.Object{"bundle_id": r.ID.String(), "uri": bundleURI(r.ID.String())}}
	}
	fail := func(err error) (*job, error) {
		if j.release != nil {
			j.release()
		}
		return nil, err
	}
	ops := s.operationsFor(fmts, first)
	if len(ops) == 0 {
		return fail(invalid("handle", "%s holds %s artifacts, which no operation reads", what, strings.Join(fmts, ", ")))
	}
	feedsOf := func(op *registry.Operation) []string {
		var out []string
		for _, f := range fmts {
			if slices.Contains(op.Formats(), f) {
				out = append(out, f)
			}
		}
		return out
	}
	an, err := nestedAnalysis(ops, nestedFields, a, fmts, feedsOf, what)
	if err != nil {
		return fail(err)
	}
	an.stages[0].args = append(decode, an.stages[0].args...)
	j.operation, j.stages = an.operation, an.stages
	return j, nil
}

// operationsFor lists the operations that read any of fmts, those named
// in first leading (a provider's default analysis first).
func (s *Server) operationsFor(fmts, first []string) []*registry.Operation {
	var out []*registry.Operation
	reads := func(op *registry.Operation) bool {
		return slices.ContainsFunc(fmts, func(f string) bool { return slices.Contains(op.Formats(), f) })
	}
	for _, name := range first {
		if i := indexOp(s.opts.Operations, name); i >= 0 && reads(s.opts.Operations[i]) {
			out = append(out, s.opts.Operations[i])
		}
	}
	for _, op := range s.opts.Operations {
		if !slices.Contains(out, op) && reads(op) {
			out = append(out, op)
		}
	}
	return out
}

// preparePreserve validates a preserve call.
func (s *Server) preparePreserve(args evidence.Object) (*job, error) {
	if err := checkUnknown(args, []string{"store", "handle", "paths", "detail"}, ""); err != nil {
		return nil, err
	}
	detail, err := detailArg(args)
	if err != nil {
		return nil, err
	}
	sv, ok := args["store"]
	if !ok {
		return nil, invalid("store", "missing required argument store")
	}
	store, err := absPath("store", sv)
	if err != nil {
		return nil, err
	}
	hid, hasHandle, err := stringArg(args, "handle")
	if err != nil {
		return nil, err
	}
	pv, hasPaths := args["paths"]
	if hasHandle == hasPaths {
		return nil, invalid("handle", "give exactly one of handle (a capture of this session) and paths (artifacts to preserve)")
	}
	j := &job{detail: detail, store: store}
	pres := stageSpec{bin: binPreserve, args: []string{"--store", store}}
	if hasHandle {
		h, release, err := s.sess.acquire(hid)
		if err != nil {
			return nil, err
		}
		j.release = release
		j.stdin, j.handle, j.replayed = slices.Clone(h.sources), h.id, h.failures
		for _, f := range h.failures {
			b, err := evidence.Canonical(f)
			if err != nil {
				release()
				return nil, evidence.Wrap(evidence.CodeInternal, err, "encode failure")
			}
			j.stdin = append(append(j.stdin, b...), '\n')
		}
		j.stages = []stageSpec{pres}
		return j, nil
	}
	paths, err := pathList(pv)
	if err != nil {
		return nil, err
	}
	j.stages = []stageSpec{{bin: binDecode, args: append([]string{"--"}, paths...)}, pres}
	return j, nil
}

// prepareProviders validates a prepare_providers call: the provider list,
// complete and without repeats.
func (s *Server) prepareProviders(args evidence.Object) ([]*capture.Provider, error) {
	if err := checkUnknown(args, []string{"providers"}, ""); err != nil {
		return nil, err
	}
	v, ok := args["providers"]
	if !ok {
		return nil, invalid("providers", "missing required argument providers")
	}
	arr, isArr := v.([]any)
	if !isArr || len(arr) == 0 {
		return nil, invalid("providers", "providers: want a non-empty array of provider names, got %s", jsonType(v))
	}
	var out []*capture.Provider
	for i, e := range arr {
		name, _ := e.(string)
		i0 := slices.IndexFunc(s.opts.Providers, func(p *capture.Provider) bool { return p.Name == name })
		if i0 < 0 {
			var names []string
			for _, p := range s.opts.Providers {
				names = append(names, p.Name)
			}
			return nil, invalid(fmt.Sprintf("providers[%d]", i), "providers[%d]: unknown provider %v (known: %s)", i, e, strings.Join(names, ", "))
		}
		if slices.Contains(out, s.opts.Providers[i0]) {
			return nil, invalid(fmt.Sprintf("providers[%d]", i), "providers[%d]: %s is listed twice", i, name)
		}
		out = append(out, s.opts.Providers[i0])
	}
	return out, nil
}

// launcher is the command that prepares a provider outside MCP.
func launcher(p *capture.Provider) []string {
	if p.Binding.Managed {
		return []string{binCapture, "setup", "--provider", p.Name}
	}
	return nil
}

// hostStatus checks a provider whose collector is not managed: one from
// PATH is looked up; one the workload imports can only be checked by the
// capture, in the workload's interpreter.
func hostStatus(p *capture.Provider) evidence.Object {
	row := evidence.Object{"provider": p.Name, "launcher": nil, "version": nil}
	switch {
	case p.Binding.InWorkload:
		row["binding"], row["status"], row["executable"] = "in-workload", "checked-at-capture", nil
		row["guidance"] = fmt.Sprintf("install %s in the workload's own interpreter; the capture checks it there", p.Binding.Executable)
	default:
		row["binding"] = "path"
		if path, err := exec.LookPath(p.Binding.Executable); err == nil {
			row["status"], row["executable"] = "ready", filepath.Clean(path)
			row["guidance"] = nil
		} else {
			row["status"], row["executable"] = "unavailable", nil
			g := p.Binding.Guidance
			if g == "" {
				g = fmt.Sprintf("install %s on this host (flameox does not install it)", p.Binding.Executable)
			}
			row["guidance"] = g
		}
	}
	return row
}

// setupLine reads the executable and version from flameox-capture
// setup's last stderr line: "NAME ready: PACKAGE VERSION at PATH (sha256 X)".
func setupLine(line string) (version, path string) {
	_, rest, ok := strings.Cut(line, " ready: ")
	if !ok {
		return "", ""
	}
	head, tail, ok := strings.Cut(rest, " at ")
	if !ok {
		return "", ""
	}
	if f := strings.Fields(head); len(f) == 2 {
		version = f[1]
	}
	path, _, _ = strings.Cut(tail, " (sha256 ")
	return version, path
}

// addServiceTools registers reanalyze, preserve and prepare_providers.
func (s *Server) addServiceTools() error {
	t, err := newTool(ToolReanalyze, "Reanalyze without recapturing", reanalyzeDescription, reanalyzeSchema(), true)
	if err != nil {
		return err
	}
	s.add(t, &job{}, s.prepareReanalyze, nil)
	t, err = newTool(ToolPreserve, "Preserve evidence", preserveDescription, preserveSchema(), false)
	if err != nil {
		return err
	}
	t.Annotations = mcp.ToolAnnotation{DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	s.add(t, &job{}, func(args evidence.Object) (*job, error) {
		j, err := s.preparePreserve(args)
		if err == nil {
			j.dropTables = true
		}
		return j, err
	}, func(j *job, c *collector, o *outcome) {
		s.registerBundles(j, c)
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.bundles) > 0 {
			j.extra = evidence.Object{}
			if j.handle != "" {
				if h, err := s.sess.get(j.handle); err == nil {
					j.extra["handle"] = h.value()
				}
			}
		}
	})
	t, err = newTool(ToolPrepare, "Prepare capture providers", prepareDescription, prepareSchema(), false)
	if err != nil {
		return err
	}
	t.Annotations = mcp.ToolAnnotation{DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true)}
	s.tools = append(s.tools, t)
	s.mcp.AddTool(t, s.handlePrepare)
	return nil
}

// handlePrepare runs prepare_providers: each managed collector's setup in
// turn (the request's serialized phases), each host collector checked.
func (s *Server) handlePrepare(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	fail := func(err error) *mcp.CallToolResult {
		o := &outcome{start: evidence.AsFailure(err, evidence.CodeInvalidArgument)}
		return newCollector(s.opts.ResultBound).result(&job{}, o, s.opts.TextBound)
	}
	args, err := parseArguments(req)
	if err != nil {
		return fail(err), nil
	}
	ps, err := s.prepareProviders(args)
	if err != nil {
		return fail(err), nil
	}
	var rows []any
	var lines []string
	failed := 0
	for _, p := range ps {
		row := hostStatus(p)
		if p.Binding.Managed {
			row = evidence.Object{"provider": p.Name, "binding": "managed", "launcher": launcher(p), "guidance": nil}
			c := newCollector(s.opts.ResultBound)
			o := s.run.run(ctx, &job{stages: []stageSpec{{bin: binCapture, args: []string{"setup", "--provider", p.Name}}}}, c)
			switch f := c.failure(&job{}, o); {
			case f != nil:
				row["status"], row["executable"], row["version"] = "failed", nil, nil
				row["failure"] = evidence.Object{"code": f["code"], "message": f["message"], "retry": f["retry"]}
			default:
				version, path := "", ""
				if len(o.stages) > 0 {
					version, path = setupLine(o.stages[0].stderr.lastLine())
				}
				row["status"], row["executable"], row["version"] = "prepared", nullString(path), nullString(version)
			}
		}
		if row["status"] == "failed" || row["status"] == "unavailable" {
			failed++
		}
		rows = append(rows, row)
		line := fmt.Sprintf("%s\t%v\t%v", p.Name, row["binding"], row["status"])
		for _, k := range []string{"executable", "version"} {
			if v, ok := row[k].(string); ok {
				line += "\t" + v
			}
		}
		if l, ok := row["launcher"].([]string); ok {
			line += "\tlauncher: " + strings.Join(l, " ")
		}
		if g, ok := row["guidance"].(string); ok {
			line += "\t" + g
		}
		if f, ok := row["failure"].(evidence.Object); ok {
			line += fmt.Sprintf("\t%v: %v", f["code"], f["message"])
		}
		lines = append(lines, line)
		if ctx.Err() != nil {
			break
		}
	}
	sc := evidence.Object{"ok": failed == 0 && ctx.Err() == nil, "operation": nil, "providers": rows}
	if failed > 0 {
		sc["failure"] = evidence.Object{"code": string(evidence.CodeProviderUnavailable),
			"message": fmt.Sprintf("%d of %d providers are not ready", failed, len(ps)), "location": evidence.Object{},
			"retry": nil, "details": evidence.Object{}}
	}
	if ctx.Err() != nil {
		sc["failure"] = evidence.Object{"code": string(evidence.CodeCancelled), "message": "the request was cancelled; setup was stopped",
			"location": evidence.Object{}, "retry": nil, "details": evidence.Object{}}
	}
	raw, err := evidence.Canonical(sc)
	if err != nil {
		return mcp.NewToolResultError("flameox-mcp: encode result: " + err.Error()), nil
	}
	text := "provider\tbinding\tstatus\tdetails\n" + strings.Join(lines, "\n") + "\n"
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, RawStructuredContent: raw,
		StructuredContent: sc, IsError: sc["ok"] == false}, nil
}
