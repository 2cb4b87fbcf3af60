package capture

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests run real processes: the test binary re-executes itself as a
// workload, selected by FLAMEOX_TEST_WORKLOAD.
const envWorkload = "FLAMEOX_TEST_WORKLOAD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envWorkload); mode != "" {
		os.Exit(workload(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// spawn starts the test binary as another workload mode.
func spawn(mode string, setsid bool, args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), envWorkload+"="+mode)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if setsid {
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(90)
	}
	return c
}

func workload(mode string, args []string) int {
	out := os.Getenv("FLAMEOX_TEST_OUT")
	switch mode {
	case "sleep":
		time.Sleep(time.Hour)
	case "sleep-tree":
		// A grandchild in the group and one that left it, their pids
		// published for the test, then sleep until ended.
		a := spawn("sleep", false)
		b := spawn("sleep", true)
		pids := fmt.Sprintf("%d\n%d\n", a.Process.Pid, b.Process.Pid)
		tmp := args[0] + ".tmp"
		if err := os.WriteFile(tmp, []byte(pids), 0o600); err != nil {
			return 91
		}
		if err := os.Rename(tmp, args[0]); err != nil {
			return 91
		}
		time.Sleep(time.Hour)
	case "alloc":
		n, _ := strconv.Atoi(args[0])
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("allocated")
		time.Sleep(time.Hour)
		b[0] = 2
	case "print":
		// print STDOUT STDERR writes its hex-encoded arguments' bytes.
		for i, f := range []*os.File{os.Stdout, os.Stderr} {
			b, err := hex.DecodeString(args[i])
			if err != nil {
				return 93
			}
			_, _ = f.Write(b)
		}
	case "spam":
		n, _ := strconv.Atoi(args[0])
		m, _ := strconv.Atoi(args[1])
		os.Stdout.WriteString("HEAD" + strings.Repeat("a", n-8) + "TAIL")
		os.Stderr.WriteString(strings.Repeat("e", m))
	case "detached-writer":
		// The child inherits stdout and keeps writing after this process
		// exits; with "setsid" it also leaves the process group.
		// detached-writer group|setsid PIDFILE
		w := spawn("writer", args[0] == "setsid")
		if err := os.WriteFile(args[1], []byte(strconv.Itoa(w.Process.Pid)), 0o600); err != nil {
			return 91
		}
		fmt.Println("parent exits")
	case "writer":
		for {
			if _, err := os.Stdout.WriteString("still writing\n"); err != nil {
				return 0
			}
			time.Sleep(10 * time.Millisecond)
		}
	case "outputs":
		// outputs CODE NAME=SIZE... writes files into the output dir, then
		// exits with CODE.
		code, _ := strconv.Atoi(args[0])
		for _, a := range args[1:] {
			name, size, _ := strings.Cut(a, "=")
			n, _ := strconv.Atoi(size)
			if err := os.WriteFile(filepath.Join(out, name), []byte(strings.Repeat("x", n)), 0o600); err != nil {
				return 92
			}
		}
		fmt.Println("wrote outputs")
		return code
	case "grow":
		// grow SIZE writes SIZE bytes, then waits to be ended.
		n, _ := strconv.Atoi(args[0])
		if err := os.WriteFile(filepath.Join(out, "big.out"), make([]byte, n), 0o600); err != nil {
			return 92
		}
		time.Sleep(time.Hour)
	default:
		fmt.Fprintln(os.Stderr, "unknown workload", mode)
		return 99
	}
	return 0
}
