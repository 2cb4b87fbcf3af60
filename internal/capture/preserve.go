package capture

import (
	"context"
	"os"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	index "github.com/flameox/flameox/internal/store"
)

// preserve publishes a capture's provenance, native outputs and failure
// (if any) as one bundle in store, independently of any later analysis.
// The bundled capture block has no bundle_id (a bundle cannot name
// itself); the block written to stdout carries it.
func preserve(ctx context.Context, store string, c *evidence.Capture, arts []*evidence.Artifact, f *evidence.Failure) (*evidence.Bundle, error) {
	b, err := bundle.NewBuilder(store)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "preserve in %s", store)
	}
	published := false
	defer func() {
		if !published {
			b.Abort()
		}
	}()
	snapshot := *c
	if err := b.AddCapture(&snapshot); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "preserve capture %s", c.ID)
	}
	for _, a := range arts {
		if err := b.AddArtifact(a); err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "preserve %s", a.Path)
		}
	}
	if f != nil {
		if err := b.AddFailure(f); err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "preserve failure")
		}
	}
	out, err := b.Publish(ctx)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "publish bundle in %s", store)
	}
	published = true
	// The store's index lists every bundle published into it, so that
	// flameox-rank --bundles --where host=… finds captures too.
	id, err := bundle.ParseID(out.ID)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	if err := index.Record(store, index.EntryOf(id, b.Manifest(), nil, time.Now(), host)); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "index bundle %s in %s", out.ID, store)
	}
	return out, nil
}
