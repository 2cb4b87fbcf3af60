package main

import (
	"bufio"
	"os"
	"path/filepath"
)

// linesCases measure --group-by line (issue 15, source lines): a 100 MiB
// V8 profile's positionTicks, to read beside "v8 decode+rank 100 MiB",
// and 200 MB of perf script with srcline, to read beside
// "perf-script decode+rank 200 MB" (the same text without srcline).
func linesCases(v8 func(string, int64) error) []benchCase {
	byLine := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", "--group-by", "line", in}
	}
	return []benchCase{
		{"v8 lines 100 MiB", "v8-100MiB.cpuprofile", 100 << 20, v8, byLine, 0, true, nil},
		{"perf-script srcline lines 200 MB", "srcline-200mb.perf.txt", 200e6, genSrcline, byLine, 0, true, nil},
	}
}

// genSrcline writes perf script text with srcline of at least size
// bytes: the real perf script of testdata/perf/lines.perf.data (its
// samples and their source lines) repeated.
func genSrcline(out string, size int64) error {
	one, err := os.ReadFile("testdata/perf/lines.srcline.perf.txt")
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for n := int64(0); n < size; n += int64(len(one)) {
		if _, err := w.Write(one); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
