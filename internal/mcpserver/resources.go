package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
)

// Evidence resources: each preserved bundle the session knows (in a store
// it was given or published to) is a resource flameox://bundle/<hex id>,
// read as a safe projection of its manifest: members, digests, sizes,
// formats, the capture outcome and the limit receipts. Never a path, an
// argv, an environment or diagnostic text (console excerpts, failure
// messages): those stay in the bundle for whoever opens it.

const (
	bundleTemplate = bundleScheme + "{bundle_id}"
	resourceMIME   = "application/json"
	// maxStoreListing bounds the bundles listed from one store at start.
	maxStoreListing = 256
)

// addResources registers the template and the bundles already in the
// configured stores.
func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(bundleTemplate, "evidence bundle",
		mcp.WithTemplateDescription("a preserved bundle by its 64-hex id: members, digests, sizes, formats, capture outcome, limit receipts"),
		mcp.WithTemplateMIMEType(resourceMIME)), s.readBundle)
	for _, st := range s.opts.Stores {
		ents, err := os.ReadDir(filepath.Join(st, "bundles"))
		if err != nil {
			continue
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for i, e := range ents {
			if i == maxStoreListing {
				break
			}
			if _, err := bundle.ParseID(e.Name()); err == nil && e.IsDir() {
				s.addBundleResource("sha256:" + e.Name())
			}
		}
	}
}

func (s *Server) addBundleResource(id string) {
	hex := strings.TrimPrefix(id, "sha256:")
	s.mcp.AddResource(mcp.NewResource(bundleURI(id), "bundle "+hex[:minShortID],
		mcp.WithResourceDescription("preserved evidence bundle "+id),
		mcp.WithMIMEType(resourceMIME)), s.readBundle)
}

// registerBundles makes the bundles a request published resources, and
// links them from its result.
func (s *Server) registerBundles(j *job, c *collector) {
	if j.store != "" {
		s.sess.addStore(j.store)
	}
	c.mu.Lock()
	var ids []string
	for _, b := range c.bundles {
		if id, ok := b["bundle_id"].(string); ok {
			ids = append(ids, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		s.addBundleResource(id)
		if j.handle != "" {
			s.sess.preserved(j.handle, id)
		}
		j.links = append(j.links, mcp.NewResourceLink(bundleURI(id), "bundle "+strings.TrimPrefix(id, "sha256:")[:minShortID],
			"preserved evidence bundle "+id, resourceMIME))
	}
}

// readBundle serves resources/read of a bundle URI.
func (s *Server) readBundle(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	hex, ok := strings.CutPrefix(uri, bundleScheme)
	if !ok {
		return nil, fmt.Errorf("not a bundle resource: %s", uri)
	}
	if _, err := bundle.ParseID(hex); err != nil {
		return nil, fmt.Errorf("%s: not a bundle id (64 hex)", uri)
	}
	var last error = fmt.Errorf("bundle %s is in none of this session's evidence stores", hex)
	for _, st := range s.sess.storeList() {
		r, err := bundle.OpenID(st, hex)
		if err != nil {
			if !os.IsNotExist(err) && evidence.CodeOf(err) != evidence.CodeIOFailure {
				last = err
			}
			continue
		}
		b, err := evidence.Canonical(bundleProjection(r))
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: resourceMIME, Text: string(b)}}, nil
	}
	// The failure's code and message only: its location may be a path.
	if f := evidence.AsFailure(last, evidence.CodeInternal); f != nil {
		return nil, fmt.Errorf("%s: %s", f.Code, f.Message)
	}
	return nil, last
}

// bundleProjection is what a resource shows of a bundle.
func bundleProjection(r *bundle.Reader) evidence.Object {
	m := r.Manifest
	members := make([]any, len(m.Members))
	for i, mb := range m.Members {
		// A member's name is its place inside the bundle (native/<hex>,
		// tables/<n>-<name>.parquet), not a host path.
		members[i] = evidence.Object{"member": mb.Path, "sha256": mb.SHA256, "size": mb.Size, "role": mb.Role}
	}
	arts := make([]any, len(m.Artifacts))
	for i, a := range m.Artifacts {
		arts[i] = evidence.Object{"artifact_id": a.ID, "name": a.Name, "format": a.Format, "role": a.Role,
			"size": a.Size, "capture_id": nullString(a.CaptureID)}
	}
	var receipts []any
	caps := make([]any, len(m.Captures))
	for i, c := range m.Captures {
		p := evidence.Object{}
		for _, k := range []string{"capture_id", "provider", "outcome", "exit", "duration_seconds", "started_at", "ended_at", "budget", "limit"} {
			p[k] = c[k]
		}
		if cons, ok := c["console"].(evidence.Object); ok {
			counts := evidence.Object{}
			for name, v := range cons {
				if st, ok := v.(evidence.Object); ok {
					counts[name] = evidence.Object{"mode": st["mode"], "observed_bytes": st["observed_bytes"],
						"retained_bytes": st["retained_bytes"], "omitted_bytes": st["omitted_bytes"]}
				}
			}
			p["console"] = counts
		}
		if l, ok := c["limit"].(evidence.Object); ok {
			receipts = append(receipts, evidence.Object{"source": "capture", "limit": l})
		}
		caps[i] = p
	}
	tables := make([]any, len(m.Tables))
	for i, t := range m.Tables {
		complete := false
		if t.Summary != nil {
			complete = t.Summary.Complete
		}
		tables[i] = evidence.Object{"name": t.Header.Name, "operation": t.Header.Operation, "format": t.Header.Format,
			"rows": t.Rows, "complete": complete, "ended": t.Summary != nil}
	}
	fails := make([]any, len(m.Failures))
	for i, f := range m.Failures {
		fails[i] = evidence.Object{"code": string(f.Failure.Code)}
		if l, ok := f.Failure.Details["limit"].(evidence.Object); ok {
			fails[i].(evidence.Object)["limit"] = l
			receipts = append(receipts, evidence.Object{"source": "failure", "limit": l})
		}
	}
	return evidence.Object{
		"bundle_id": r.ID.String(), "uri": bundleURI(r.ID.String()), "layout": m.Layout,
		"members": members, "artifacts": arts, "captures": caps, "tables": tables, "failures": fails,
		"limit_receipts": orEmpty(receipts),
	}
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
