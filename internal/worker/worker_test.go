package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// The test binary doubles as the worker: with FLAMEOX_WORKER_HELPER set it
// runs one of the behaviours below instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FLAMEOX_WORKER_HELPER"); mode != "" {
		helper(mode)
		return
	}
	os.Exit(m.Run())
}

func helper(mode string) {
	switch mode {
	case "cat3": // copy the first declared input to stdout
		f := os.NewFile(3, "input")
		io.Copy(os.Stdout, f)
	case "env":
		fmt.Print(strings.Join(os.Environ(), "\n"))
	case "fail":
		fmt.Fprint(os.Stderr, "bad input \xff\xfe here")
		os.Exit(3)
	case "flood": // more stderr than is retained, then fail
		os.Stderr.Write(bytes.Repeat([]byte("e"), 10000))
		os.Exit(1)
	case "abort":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	case "sleep":
		fmt.Println("started")
		time.Sleep(time.Minute)
	case "grandchild": // a descendant that would hold stdout open
		cmd := exec.Command("/bin/sleep", "60")
		cmd.Stdout = os.Stdout
		cmd.Start()
		fmt.Printf("%d\n", cmd.Process.Pid)
		time.Sleep(time.Minute)
	case "stderr-holder": // a descendant keeps stderr open after the leader exits
		cmd := exec.Command("/bin/sleep", "60")
		cmd.Stderr = os.Stderr
		cmd.Start()
		fmt.Printf("%d\n", cmd.Process.Pid)
	case "alloc", "alloc-slow": // grow resident memory until killed
		pause := 5 * time.Millisecond
		if mode == "alloc-slow" {
			pause = 50 * time.Millisecond
		}
		var keep [][]byte
		for range 200 {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
			time.Sleep(pause)
		}
		fmt.Println(len(keep))
	case "alloc-child": // a descendant in the same group grows
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "-test.run=none")
		cmd.Env = []string{"FLAMEOX_WORKER_HELPER=alloc-slow"}
		cmd.Run()
	case "lines":
		for i := range 100000 {
			fmt.Println(i)
		}
	}
	os.Exit(0)
}

func spec(mode string) *Spec {
	exe, _ := os.Executable()
	return &Spec{Name: "helper " + mode, Path: exe, Args: []string{"-test.run=none"}, Env: []string{"FLAMEOX_WORKER_HELPER=" + mode, "ONLY=this"}}
}

func readAll(out *bytes.Buffer) func(io.Reader) error {
	return func(r io.Reader) error { _, err := io.Copy(out, r); return err }
}

func wantFailure(t *testing.T, err error, code evidence.Code) *evidence.Failure {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	return f
}

func TestDeclaredInputAndEnvironment(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("native bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := spec("cat3")
	s.Inputs = []*os.File{f}
	var out bytes.Buffer
	if _, err := Run(context.Background(), s, readAll(&out)); err != nil {
		t.Fatal(err)
	}
	if out.String() != "native bytes\n" {
		t.Fatalf("stdout %q", out.String())
	}
	out.Reset()
	t.Setenv("SECRET_TOKEN", "leak")
	if _, err := Run(context.Background(), spec("env"), readAll(&out)); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "FLAMEOX_WORKER_HELPER=env\nONLY=this" {
		t.Fatalf("worker environment %q: only the declared one may pass", got)
	}
	if InputPath(0) != "/dev/fd/3" || InputPath(2) != "/dev/fd/5" {
		t.Fatal("InputPath")
	}
}

func TestNonzeroExit(t *testing.T) {
	res, err := Run(context.Background(), spec("fail"), readAll(&bytes.Buffer{}))
	f := wantFailure(t, err, evidence.CodeDecodeFailure)
	if f.Details["exit_code"] != int64(3) || res.ExitCode != 3 {
		t.Fatalf("details %v", f.Details)
	}
	if f.Details["stderr"] != "bad input \uFFFD\uFFFD here" || f.Details["stderr_retained_bytes"] != int64(17) || f.Details["stderr_omitted_bytes"] != int64(0) {
		t.Fatalf("stderr details %q %v %v", f.Details["stderr"], f.Details["stderr_retained_bytes"], f.Details["stderr_omitted_bytes"])
	}
}

func TestStderrBound(t *testing.T) {
	_, err := Run(context.Background(), spec("flood"), readAll(&bytes.Buffer{}))
	f := wantFailure(t, err, evidence.CodeDecodeFailure)
	if len(f.Details["stderr"].(string)) != StderrBytes || f.Details["stderr_retained_bytes"] != int64(StderrBytes) || f.Details["stderr_omitted_bytes"] != int64(10000-StderrBytes) {
		t.Fatalf("stderr bound: %v %v", f.Details["stderr_retained_bytes"], f.Details["stderr_omitted_bytes"])
	}
}

func TestSignal(t *testing.T) {
	res, err := Run(context.Background(), spec("abort"), readAll(&bytes.Buffer{}))
	f := wantFailure(t, err, evidence.CodeDecodeFailure)
	if res.Signal != "killed" || f.Details["signal"] != "killed" {
		t.Fatalf("signal %q, details %v", res.Signal, f.Details)
	}
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	s := spec("grandchild")
	s.Timeout = 500 * time.Millisecond
	var out bytes.Buffer
	res, err := Run(context.Background(), s, readAll(&out))
	f := wantFailure(t, err, evidence.CodeLimitExceeded)
	lim := f.Details["limit"].(evidence.Object)
	if lim["name"] != "timeout_seconds" || lim["value"] != 0.5 || lim["unit"] != "s" {
		t.Fatalf("receipt %v", lim)
	}
	if res.Signal != "killed" {
		t.Fatalf("termination %+v", res)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	deadline := time.Now().Add(5 * time.Second)
	for pid > 0 && alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 || alive(pid) {
		t.Fatalf("grandchild %d survived the group kill", pid)
	}
}

// TestLeaderExitEndsTheWorker: a descendant holding stderr open does not
// keep Run waiting once the leader has exited; it is killed.
func TestLeaderExitEndsTheWorker(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	res, err := Run(context.Background(), spec("stderr-holder"), readAll(&out))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v %+v", err, res)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("Run waited for the descendant")
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	deadline := time.Now().Add(5 * time.Second)
	for pid > 0 && alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 || alive(pid) {
		t.Fatalf("descendant %d survived", pid)
	}
}

func TestMemoryBudget(t *testing.T) {
	s := spec("alloc")
	s.MaxRSS = 100 << 20
	s.Poll = 5 * time.Millisecond
	res, err := Run(context.Background(), s, readAll(&bytes.Buffer{}))
	f := wantFailure(t, err, evidence.CodeLimitExceeded)
	lim := f.Details["limit"].(evidence.Object)
	if lim["name"] != "max_memory_bytes" || lim["value"] != int64(100<<20) || lim["unit"] != "bytes" {
		t.Fatalf("receipt %v", lim)
	}
	if obs, _ := lim["observed"].(int64); obs <= 100<<20 || res.PeakRSS != obs {
		t.Fatalf("observed %v, peak %d", lim["observed"], res.PeakRSS)
	}
}

// TestMemoryBudgetCountsDescendants: memory of the worker's children
// counts toward its budget.
func TestMemoryBudgetCountsDescendants(t *testing.T) {
	s := spec("alloc-child")
	s.MaxRSS = 100 << 20
	_, err := Run(context.Background(), s, readAll(&bytes.Buffer{}))
	f := wantFailure(t, err, evidence.CodeLimitExceeded)
	if lim := f.Details["limit"].(evidence.Object); lim["name"] != "max_memory_bytes" {
		t.Fatalf("receipt %v", lim)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Run(ctx, spec("sleep"), func(r io.Reader) error {
		buf := make([]byte, 8)
		r.Read(buf) // the worker has started
		cancel()
		_, err := io.Copy(io.Discard, r)
		return err
	})
	wantFailure(t, err, evidence.CodeCancelled)
}

// TestConsumerRefusal: a consumer that rejects the stream stops the worker
// and its own failure is what the caller sees.
func TestConsumerRefusal(t *testing.T) {
	refusal := evidence.Failf(evidence.CodeDecodeFailure, "line 3: not perf script")
	start := time.Now()
	_, err := Run(context.Background(), spec("sleep"), func(r io.Reader) error { return refusal })
	if err != refusal {
		t.Fatalf("want the consumer's failure, got %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("worker was not stopped")
	}
}

func TestStreaming(t *testing.T) {
	lines := 0
	res, err := Run(context.Background(), spec("lines"), func(r io.Reader) error {
		b, err := io.ReadAll(r)
		lines = bytes.Count(b, []byte("\n"))
		return err
	})
	if err != nil || lines != 100000 || res.ExitCode != 0 {
		t.Fatalf("lines %d, err %v", lines, err)
	}
}

func TestUnreadOutputIsAnError(t *testing.T) {
	_, err := Run(context.Background(), spec("lines"), func(r io.Reader) error { return nil })
	wantFailure(t, err, evidence.CodeInternal)
}

func TestStartFailure(t *testing.T) {
	_, err := Run(context.Background(), &Spec{Name: "missing", Path: "/nonexistent/perf"}, readAll(&bytes.Buffer{}))
	wantFailure(t, err, evidence.CodeProviderUnavailable)
	_, err = Run(context.Background(), &Spec{Name: "relative", Path: "perf"}, readAll(&bytes.Buffer{}))
	wantFailure(t, err, evidence.CodeInternal)
}
