// Package preview holds what the generic preview decoders (JSON, JSONL,
// CSV, Parquet) share: the honest accounting of a bounded read (Region)
// and the writing of their preview.fields and preview.records tables with
// summaries that say what was read and what was left out (Result). The
// rows are the typed rows of package table.
//
// A preview never claims more than it read. Every decoder reads a bounded
// region of the artifact, counts the records it saw there, emits the first
// few, and says in its summary how far it read, what it left out, and that
// content past the region was not observed. The bounds of that read are
// options every preview declares the same way (Option).
//
// It imports evidence, formats, param and table.
package preview
