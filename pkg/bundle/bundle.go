// Package bundle writes and reads immutable, content-addressed evidence
// bundles. (API fixed; the implementation is being written.)
package bundle

import (
	"context"
	"errors"

	"github.com/flameox/flameox/pkg/evidence"
)

var errTODO = errors.New("bundle: not implemented yet")

// Builder collects one bundle's members and publishes them atomically.
type Builder struct{}

// NewBuilder starts a bundle in store (created if absent).
func NewBuilder(store string) (*Builder, error) { return nil, errTODO }

// AddCapture records execution provenance.
func (b *Builder) AddCapture(c *evidence.Capture) error { return errTODO }

// AddArtifact copies a native file byte-for-byte, verifying its digest.
func (b *Builder) AddArtifact(a *evidence.Artifact) error { return errTODO }

// AddFailure records a typed analysis failure beside the native bytes.
func (b *Builder) AddFailure(f *evidence.Failure) error { return errTODO }

// BeginTable starts a derived table, streamed to Parquet.
func (b *Builder) BeginTable(t *evidence.Table) (*TableWriter, error) { return nil, errTODO }

// TableWriter streams one table's rows.
type TableWriter struct{}

// Row appends a row.
func (w *TableWriter) Row(values evidence.Object) error { return errTODO }

// End closes the table with its summary.
func (w *TableWriter) End(s *evidence.Summary) error { return errTODO }

// Publish writes the manifest and publishes the bundle atomically. The same
// evidence gives the same bundle id; publishing an existing id is a no-op.
func (b *Builder) Publish(ctx context.Context) (*evidence.Bundle, error) { return nil, errTODO }

// Abort removes the builder's temporary files.
func (b *Builder) Abort() {}
