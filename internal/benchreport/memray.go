package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// memrayCases are the Memray bench cases: a real capture of at least 500
// MB (memray run --no-compress --trace-python-allocators over
// memray_workload.py), ranked by summarize_memory_hotspots, beside
// `memray stats --json` on the same file.
func memrayCases() []benchCase {
	return []benchCase{
		{"memray decode+rank 500 MB", "memray-500MB.bin", 500e6, genMemray, rankArgv, 0, true, memrayStats},
	}
}

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
// capture (measured with CPython 3.11 and memray 1.20); it sizes the
// first attempt.
const memrayBytesPerRound = 380

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
		st, err := os.Stat(tmp)
		if err != nil {
			return err
		}
		if st.Size() >= size {
			return os.Rename(tmp, out)
		}
		n = n*size/st.Size() + 1
	}
	return fmt.Errorf("the capture stays under %d bytes", size)
}
