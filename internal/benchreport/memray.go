package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// memrayCases are the Memray bench cases: a real capture holding at
// least 500 MB of records (memray run --no-compress
// --trace-python-allocators over memray_workload.py; the file's zero
// padding not counted), decoded, and ranked by summarize_memory_hotspots
// beside `memray stats --json` on the same file.
func memrayCases() []benchCase {
	return []benchCase{
		{"memray decode 500 MB", memrayInput, 500e6, genMemray, decodeArgv, 0, true, nil},
		{"memray decode+rank 500 MB", memrayInput, 500e6, genMemray, rankArgv, 0, true, memrayStats},
	}
}

const memrayInput = "memray-500MB-records.bin"

// memrayPython is the project venv's interpreter, which has the pinned
// memray (tools/requirements.txt).
func memrayPython() string {
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = ".venv"
	}
	return filepath.Join(venv, "bin", "python")
}

// memrayStats is memray's own summary of a capture, the command a user
// would run instead.
var memrayStats = &peer{name: "memray stats --json " + version(memrayPython(), "-m", "memray", "--version"), argv: func(in string) []string {
	// A file of its own, never a device: memray writes the JSON there.
	return []string{memrayPython(), "-m", "memray", "stats", "--json", "-f", "-o", filepath.Join(os.TempDir(), "flameox-bench-memray-stats.json"), in}
}}

// memrayBytesPerRound is what one round of the workload adds to the
// capture (records only, measured with CPython 3.11 and memray 1.20); it sizes the
// first attempt.
const memrayBytesPerRound = 340

// genMemray writes a real Memray capture of at least size bytes: it runs
// the workload under memray with a round count chosen for the size, and
// grows it until the capture is large enough. A 500 MB capture takes a
// few minutes.
func genMemray(out string, size int64) error {
	n := size/memrayBytesPerRound + 1
	for range 4 {
		tmp := out + ".tmp"
		cmd := exec.Command(memrayPython(), "-m", "memray", "run", "-q", "--force", "--no-compress",
			"--trace-python-allocators", "-o", tmp, "internal/benchreport/memray_workload.py", fmt.Sprint(n))
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("memray run: %w", err)
		}
		got, err := recordBytes(tmp)
		if err != nil {
			return err
		}
		if got >= size {
			return os.Rename(tmp, out)
		}
		n = n*size/max(got, 1) + 1
	}
	return fmt.Errorf("the capture stays under %d bytes", size)
}

// recordBytes is the size of a capture without the zero padding memray
// grows uncompressed files by: the bytes of its header and records.
func recordBytes(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	for end := st.Size(); end > 0; {
		start := max(end-int64(len(buf)), 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0 {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}
