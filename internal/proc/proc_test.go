package proc

import (
	"os"
	"os/exec"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses, as proc(5) allows.
	line := []byte("4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 1 0 0 0 3 1 0 0 20 0 1 0 987654 1000000 25 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0")
	p, ok := ParseStat(4242, line)
	if !ok || p.PPID != 1 || p.PGRP != 4242 || p.Start != 987654 || p.RSS != 25*pageSize || p.Zombie {
		t.Fatalf("%+v %v", p, ok)
	}
	if _, ok := ParseStat(1, []byte("1 (init) S 0")); ok {
		t.Fatal("short line accepted")
	}
}

func TestScanSeesSelfAndChild(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer cmd.Process.Kill()
	procs, err := Scan()
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	if procs[self].PID != self || procs[self].RSS <= 0 {
		t.Fatalf("self: %+v", procs[self])
	}
	in := map[int]bool{self: true}
	AddDescendants(procs, in)
	if !in[cmd.Process.Pid] {
		t.Fatal("child not found among descendants")
	}
}
