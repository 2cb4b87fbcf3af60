package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
)

// inferenceCases measure the AIPerf per-request reader at 100 MB and 1 GB
// (RSS must stay flat between them) and summarize_inference at 1 GB,
// beside the Python a user would write instead (json + numpy-style
// percentiles, internal/benchreport/peers/aiperf-latency.py).
func inferenceCases() []benchCase {
	const small, big = "aiperf-100MB.jsonl", "aiperf-1GB.jsonl"
	rank := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", in}
	}
	return []benchCase{
		{"aiperf records decode 100 MB", small, 100e6, genAIPerf, decodeArgv, 0, true, nil},
		{"aiperf records decode 1 GB", big, 1e9, genAIPerf, decodeArgv, 0, true, nil},
		{"aiperf records summarize 1 GB", big, 1e9, genAIPerf, rank, 0, true, aiperfPeer},
	}
}

var aiperfPeer = &peer{name: "python json " + version("python3", "--version"), argv: func(in string) []string {
	return []string{"python3", "internal/benchreport/peers/aiperf-latency.py", in}
}}

// genAIPerf writes at least size bytes of AIPerf per-request records: the
// real records aiperf 0.13.0 wrote (testdata/aiperf/mock-0.13), repeated
// whole, line by line.
func genAIPerf(out string, size int64) error {
	src, err := os.ReadFile("testdata/aiperf/mock-0.13/profile_export.jsonl")
	if err != nil {
		return err
	}
	if !bytes.HasSuffix(src, []byte("\n")) {
		src = append(src, '\n')
	}
	f, err := os.Create(out + ".tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for n := int64(0); n < size; n += int64(len(src)) {
		if _, err := w.Write(src); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}
