package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flameox/flameox/internal/projection/failures"
	"github.com/flameox/flameox/internal/registry"
)

// sanitizerSeed is the XML report the input grows from (schema-built:
// testdata/sanitizer/PROVENANCE.md).
const sanitizerSeed = "testdata/sanitizer/memcheck-demo.sanitizer.xml"

// sanitizerCases: a compute-sanitizer XML report grown to 50 MB by
// repeating the seed's records, decoded, and its failures summarized
// beside Python's xml.etree.ElementTree.iterparse counting the records by
// kind.
func sanitizerCases() []benchCase {
	var op string // the failures operation, found by its projection
	for _, o := range registry.Operations() {
		if o.Projection == failures.Spec {
			op = o.Name
		}
	}
	failuresArgv := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", "--operation", op, in}
	}
	const input = "sanitizer-50MB.sanitizer.xml"
	return []benchCase{
		{"compute-sanitizer XML decode 50 MB", input, 50e6, genSanitizerXML, decodeArgv, 0, true, nil},
		{"compute-sanitizer XML summarize failures 50 MB", input, 50e6, genSanitizerXML, failuresArgv, 0, true, pythonSanitizer},
	}
}

func genSanitizerXML(out string, size int64) error {
	seed, err := os.ReadFile(sanitizerSeed)
	if err != nil {
		return err
	}
	start, end := bytes.Index(seed, []byte("<record>")), bytes.LastIndex(seed, []byte("</record>"))
	if start < 0 || end < 0 {
		return fmt.Errorf("%s holds no record", sanitizerSeed)
	}
	body := seed[start : end+len("</record>")]
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	n, _ := w.Write(seed[:start])
	for written := int64(n); written < size; {
		m, err := w.Write(body)
		if err != nil {
			f.Close()
			return err
		}
		written += int64(m)
	}
	w.WriteString("\n</ComputeSanitizerOutput>\n")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pythonSanitizer is Python's ElementTree iterparse counting records by
// kind (internal/benchreport/peers/sanitizer-xml.py).
var pythonSanitizer = &peer{name: "python3 xml.etree " + version("python3", "--version"), argv: func(in string) []string {
	return []string{"python3", "internal/benchreport/peers/sanitizer-xml.py", in}
}}
