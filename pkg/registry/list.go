package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/providers/process"
	"github.com/flameox/flameox/pkg/evidence"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/csvpreview"
	"github.com/flameox/flameox/pkg/formats/jsonpreview"
	"github.com/flameox/flameox/pkg/formats/parquetpreview"
	"github.com/flameox/flameox/pkg/formats/text"
	"github.com/flameox/flameox/pkg/projection/preview"
	fragment "github.com/flameox/flameox/pkg/projection/text-fragment"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	jsonpreview.JSON,
	jsonpreview.JSONL,
	csvpreview.Spec,
	text.Spec,
	parquetpreview.Spec,
}

// operationList is every analysis operation.
var operationList = []*Operation{
	{
		Name:       preview.Operation,
		Title:      "Preview a data or text artifact",
		Family:     "Generic previews",
		Projection: preview.Spec,
		Formats:    []string{"json", "jsonl", "csv", "text", "parquet"},
		Guidance: "Look inside a JSON, JSONL, CSV, Parquet or text artifact that no specific format covers: its " +
			"schema (CSV header, Parquet columns with physical and logical types, JSON keys and outline) and its " +
			"first records with their native line and byte locations. Bounded by rows and bytes; it says how far " +
			"it read and never claims counts for what it did not read. Not a substitute for a specific decoder: " +
			"a speedscope, SARIF or coverage file is previewed only when asked for with --format.",
		Examples: []Example{
			{Title: "first 10 records and the schema", Args: evidence.Object{"rows": 10}},
			{Title: "only the records that failed to parse", Args: evidence.Object{"status": "problems"}},
			{Title: "two columns of a wide table", Args: evidence.Object{"fields": []string{"id", "name"}, "rows": 50}},
		},
		Overhead: "reads a bounded prefix (decoder max_bytes, default 8 MiB; Parquet: the footer and the first row groups)",
		Limitations: []string{
			"a preview shows a bounded prefix; counts describe the bytes read, and the summary says where reading stopped",
			"CSV values are text; Parquet values stay native (timestamps as integers in their declared unit)",
		},
	},
	{
		Name:       fragment.Operation,
		Title:      "Read a bounded fragment of a text artifact",
		Family:     "Generic previews",
		Projection: fragment.Spec,
		Formats:    []string{"text"},
		Guidance: "Read an exact byte window (offset, length) or line window (start_line, lines) of a text " +
			"artifact, such as a captured stdout/stderr or a log. The window is recorded in the result; lines cut " +
			"by bounds, invalid UTF-8 (shown escaped) and windows the decoded text does not cover are stated.",
		Examples: []Example{
			{Title: "lines 100-149", Args: evidence.Object{"start_line": 100, "lines": 50}},
			{Title: "4 KiB from byte 1048576", Args: evidence.Object{"offset": 1048576, "length": 4096}},
		},
		Overhead: "scans the artifact up to the window for line numbers; reads the window only",
		Limitations: []string{
			"windows beyond the text decoder's defaults (1 MiB, 1000 lines) need decoder options offset/start_line, max_bytes/max_lines",
		},
		Check: func(_ []string, given map[string]bool, args evidence.Object) error {
			_, err := fragment.WindowFrom(args, given)
			return err
		},
	},
}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	process.Provider,
}
