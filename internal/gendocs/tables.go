package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// TablesVersion versions the table contract as a whole; each table's
// fingerprint changes with any of its columns.
const TablesVersion = "flameox-tables/1"

// fingerprint is a digest of what a consumer of a table's Parquet files
// depends on: column names, types, units and nullability, in order.
func fingerprint(s *table.Schema) string {
	var cols []any
	for _, c := range s.Columns {
		cols = append(cols, evidence.Object{"name": c.Name, "type": c.Type, "unit": c.Unit, "nullable": c.Nullable})
	}
	data, err := evidence.Canonical(cols)
	if err != nil {
		panic(err) // strings and booleans only
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// tablesMarkdown renders docs/tables.md from the table declarations and
// the Parquet mapping bundles use.
func tablesMarkdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from internal/table and internal/bundle by `go run ./internal/gendocs`. Do not edit. -->\n")
	fmt.Fprintf(&b, `# Table contract (%s)

Every derived table a bundle holds is one Parquet file at

    STORE/bundles/<bundle hex>/tables/<table name>/<n>.parquet

so one glob reads a table across every bundle of a store:
`+"`STORE/bundles/*/tables/cpu.frames/*.parquet`"+`. This page is generated from the
same declarations the decoders and projections use (package `+"`internal/table`"+`), and
a test checks every table's Parquet schema against it.

- **Leaves.** Every column is an OPTIONAL leaf (so null stays distinct from every
  value), of the physical and logical type below; a group's leaves are in column-name
  order. *null* says whether a column may actually hold null; the others always hold a
  value.
- **Units.** A column's unit is fixed here, or *per table* when each table states it
  (CPU weights are samples in one profile and seconds in another): in the table header
  in `+"`manifest.json`"+`, and in the file's key-value metadata `+"`%s`"+`
  (`+"`{\"column\": unit or null}`"+`). `+"`%s`"+` holds the whole header block.
- **Coordinates.** A line or column coordinate is native: *0-based* or *1-based* as
  fixed here, or *per table* when the header's column description states it.
- **Identity.** *identity* columns are opaque keys (digests, frame ids) to join on.
  `+"`artifact_id`"+` is the artifact's SHA-256 (`+"`sha256:<hex>`"+`) in every table that
  holds one artifact's rows.
- **Bundle id.** A bundle's id is the digest of a manifest that lists the digests of
  its table files, so a file cannot hold it; the path does. Every engine exposes the
  path: `+"`'sha256:' || regexp_extract(filename, 'bundles/([0-9a-f]{64})/', 1)`"+` in
  DuckDB (`+"`read_parquet(..., filename = true)`"+`), `+"`regexp_extract(input_file_name(), 'bundles/([0-9a-f]{64})/', 1)`"+`
  in Spark, `+"`\"$path\"`"+` in Trino. `+"`flameox-rank --bundles`"+` keeps each table apart by
  bundle. See [fleet.md](fleet.md) for the index of bundles and the queries.
- **Fingerprint.** A digest of a table's column names, types, units and nullability:
  a consumer can pin it. Adding a table leaves the others' fingerprints alone.

`, TablesVersion, bundle.MetaUnits, bundle.MetaTable)
	b.WriteString("| table | holds | one artifact per table | fingerprint |\n|---|---|---|---|\n")
	for _, s := range table.All() {
		one := "no"
		if s.FromArtifact {
			one = "yes"
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | `%s` |\n", s.Name, strings.ReplaceAll(s.Name, ".", ""), s.Doc, one, fingerprint(s))
	}
	for _, s := range table.All() {
		fmt.Fprintf(&b, "\n## %s\n\n%s. Files: `bundles/*/tables/%s/*.parquet`. Fingerprint `%s`.\n\n", s.Name, upper(s.Doc), s.Name, fingerprint(s))
		b.WriteString("| column | type | Parquet | unit | null | key | description |\n|---|---|---|---|---|---|---|\n")
		for _, c := range s.Columns {
			phys, logical, err := bundle.ParquetType(c.Type)
			if err != nil {
				panic(err) // package table declares only these types
			}
			pq := phys
			if logical != "" {
				pq += " (" + logical + ")"
			}
			unit := c.Unit
			switch unit {
			case table.PerTable:
				unit = "per table"
			case "":
				unit = "-"
			}
			null := "no"
			if c.Nullable {
				null = "yes"
			}
			var key []string
			if c.Identity {
				key = append(key, "identity")
			}
			switch c.Base {
			case table.PerTable:
				key = append(key, "base per table")
			case "0", "1":
				key = append(key, c.Base+"-based")
			}
			if len(key) == 0 {
				key = []string{"-"}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", c.Name, c.Type, pq, unit, null, strings.Join(key, ", "), cell(c.Description))
		}
	}
	return b.String()
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// cell keeps a description inside one Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}
