package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/proc"
)

// Every workload runs under a shepherd: this same executable, re-executed
// with envShepherd set, which the package's init turns into the shepherd
// before any main runs. The shepherd is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every process the workload starts, however
// it detaches (setsid, double fork, Node's detached spawn), stays its
// descendant: orphans re-parent to it, not to init. It forks the workload
// (with PR_SET_PDEATHSIG SIGKILL), reports its pid and wait status, and
// reaps every orphan. Its lifeline is a pipe whose only writer is the
// capture: when the capture closes it, or dies (even by SIGKILL), the
// shepherd kills every descendant left, reaps them and exits. So no
// process of the workload outlives the capture, whatever ends it.
//
// The capture's own tree logic (TERM, grace, KILL, the record of what was
// ended) works on the shepherd's descendants; the shepherd only guarantees
// the end when the capture cannot.
const envShepherd = "FLAMEOX_CAPTURE_SHEPHERD"

// Descriptors the shepherd inherits.
const (
	shepherdLifeline = 3 // read end; EOF means the capture is done or gone
	shepherdStatus   = 4 // write end: "started PID", "exit STATUS", "failed MESSAGE"
)

func init() {
	if os.Getenv(envShepherd) == "" {
		return
	}
	// During init the main goroutine is locked to the main thread, which
	// lives as long as the process: the workload's PDEATHSIG, tied by the
	// kernel to the forking thread, fires only when the shepherd dies.
	os.Exit(shepherd(os.Args[1:]))
}

// shepherd runs argv = [path, argv0, args...] and never returns before
// every descendant has exited.
func shepherd(argv []string) int {
	syscall.CloseOnExec(shepherdLifeline)
	syscall.CloseOnExec(shepherdStatus)
	status := os.NewFile(shepherdStatus, "status")
	report := func(format string, a ...any) { _, _ = fmt.Fprintf(status, format+"\n", a...) }
	if len(argv) < 2 {
		report("failed shepherd: no command")
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report("failed shepherd: PR_SET_CHILD_SUBREAPER: %v", err)
		return 2
	}
	// Signals aimed at the shepherd (a workload that signals its parent
	// or group) must not end it while the tree lives. Caught, not
	// ignored: an ignored disposition would be inherited by the workload.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, envShepherd+"=") {
			env = append(env, e)
		}
	}
	pid, err := syscall.ForkExec(argv[0], argv[1:], &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		report("failed fork/exec %s: %v", argv[0], err)
		return 127
	}
	report("started %d", pid)
	// Let go of the console pipes: they must reach end-of-file when the
	// workload's tree is done with them, not when the shepherd exits.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = unix.Dup3(int(null.Fd()), fd, 0)
		}
		null.Close()
	}
	go func() {
		// Blocks until the capture closes its end or dies.
		_, _ = io.Copy(io.Discard, os.NewFile(shepherdLifeline, "lifeline"))
		killDescendants(os.Getpid())
	}()
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: as a subreaper it has no descendant left at all.
			return 0
		}
		if wpid == pid {
			report("exit %d", uint32(ws))
		}
	}
}

// killDescendants SIGKILLs every live descendant of root until none is
// left; the shepherd's wait loop reaps them.
func killDescendants(root int) {
	for {
		procs, err := proc.Scan()
		if err != nil {
			return
		}
		in := map[int]bool{root: true}
		proc.AddDescendants(procs, in)
		n := 0
		for pid := range in {
			if pid != root && !procs[pid].Zombie {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shepherded is one workload started under a shepherd.
type shepherded struct {
	cmd      *exec.Cmd
	pid      int           // the workload's main process (and process group)
	lifeline *os.File      // write end; closing it releases the shepherd
	exited   chan struct{} // closed when the main process's status is known
	status   *syscall.WaitStatus
	lost     string // why no status came, when none did
}

// startShepherded starts argv under a shepherd with the given console
// pipes. argv[0] is looked up in this process's PATH, as os/exec does.
func startShepherded(argv, env []string, dir string, stdout, stderr *os.File) (*shepherded, error) {
	path := argv[0]
	if !strings.ContainsRune(path, '/') {
		p, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = p
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       append([]string{"flameox-shepherd", path}, argv...),
		Env:        append(append([]string(nil), env...), envShepherd+"=1"),
		Dir:        dir,
		Stdout:     stdout,
		Stderr:     stderr,
		ExtraFiles: []*os.File{lifeR, statW},
		// Its own group: a terminal's ^C reaches the capture, which ends
		// the tree in order, not the shepherd.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	lifeR.Close()
	statW.Close()
	if err != nil {
		lifeW.Close()
		statR.Close()
		return nil, err
	}
	s := &shepherded{cmd: cmd, lifeline: lifeW, exited: make(chan struct{})}
	lines := bufio.NewScanner(statR)
	first := ""
	if lines.Scan() {
		first = lines.Text()
	}
	if pid, ok := strings.CutPrefix(first, "started "); ok {
		s.pid, _ = strconv.Atoi(pid)
	}
	if s.pid <= 0 {
		statR.Close()
		lifeW.Close()
		_ = cmd.Wait()
		if msg, ok := strings.CutPrefix(first, "failed "); ok {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("capture: the shepherd ended (%s) before starting %s", cmd.ProcessState, path)
	}
	go func() {
		defer statR.Close()
		defer close(s.exited)
		for lines.Scan() {
			if st, ok := strings.CutPrefix(lines.Text(), "exit "); ok {
				n, err := strconv.ParseUint(st, 10, 32)
				if err == nil {
					ws := syscall.WaitStatus(n)
					s.status = &ws
					return
				}
			}
		}
		_ = cmd.Wait()
		s.lost = fmt.Sprintf("capture: the shepherd of process %d ended (%s) before reporting its exit status", s.pid, cmd.ProcessState)
	}()
	return s, nil
}

// release closes the lifeline and waits for the shepherd, which kills
// whatever is left of the tree (nothing, after the capture's own end).
func (s *shepherded) release() {
	s.lifeline.Close()
	<-s.exited
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Wait()
	}
}
