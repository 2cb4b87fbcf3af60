package proc

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses, as proc(5) allows.
	line := []byte("4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 1 0 0 0 3 1 0 0 20 0 1 0 987654 1000000 25 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0")
	p, ok := ParseStat(4242, line)
	if !ok || p.PPID != 1 || p.PGRP != 4242 || p.Start != 987654 || p.RSS != 25*pageSize || p.Zombie || p.Comm != "a (weird) name" {
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

func TestLive(t *testing.T) {
	self := os.Getpid()
	const b = 1 << 23 // above any pid_max, so no fake pid is the test's own
	procs := map[int]Info{
		b + 10: {PID: b + 10, PPID: 1, PGRP: b + 10, Start: 100},                    // group leader
		b + 11: {PID: b + 11, PPID: b + 10, PGRP: b + 10, Start: 101},               // group member
		b + 12: {PID: b + 12, PPID: 1, PGRP: b + 12, Start: 102},                    // left the group, known
		b + 13: {PID: b + 13, PPID: b + 12, PGRP: b + 12, Start: 103},               // its child
		b + 14: {PID: b + 14, PPID: 1, PGRP: b + 14, Start: 999},                    // pid reused: known with start 104
		b + 15: {PID: b + 15, PPID: b + 10, PGRP: b + 10, Start: 105, Zombie: true}, // exited, not reaped
		b + 20: {PID: b + 20, PPID: 1, PGRP: b + 20, Start: 200},                    // unrelated
		self:   {PID: self, PPID: 1, PGRP: b + 10, Start: 1},
	}
	known := map[int]uint64{b + 12: 102, b + 14: 104}
	var got []int
	for _, p := range Live(procs, known, b+10) {
		got = append(got, p.PID)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{b + 10, b + 11, b + 12, b + 13}) {
		t.Fatalf("live %v", got)
	}
	if known[b+13] != 103 || known[b+14] != 104 {
		t.Fatalf("known %v", known)
	}
	if _, ok := known[b+15]; ok {
		t.Fatal("a zombie was remembered")
	}
	if _, ok := known[self]; ok {
		t.Fatal("the calling process was remembered")
	}
}
