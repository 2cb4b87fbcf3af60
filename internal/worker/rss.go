package worker

import (
	"time"

	"github.com/flameox/flameox/internal/proc"
)

// groupWatch samples the resident memory of a process group. Finding the
// group's members means reading every /proc/<pid>/stat, which costs
// milliseconds on a busy host, so it does that at most once per rescan and
// otherwise reads only the members it knows. A member started since the
// last rescan is missed until the next one; the kernel's maxrss at exit
// still covers the leader.
type groupWatch struct {
	pgid    int
	members []int
	rescan  time.Duration
	last    time.Time
}

func newGroupWatch(pgid int) *groupWatch {
	return &groupWatch{pgid: pgid, members: []int{pgid}, rescan: time.Second}
}

// rss returns the group's resident bytes, 0 when /proc cannot tell.
func (g *groupWatch) rss() int64 {
	if time.Since(g.last) >= g.rescan {
		g.last = time.Now()
		if procs, err := proc.Scan(); err == nil {
			g.members = g.members[:0]
			for pid, p := range procs {
				if p.PGRP == g.pgid {
					g.members = append(g.members, pid)
				}
			}
		}
	}
	var total int64
	kept := g.members[:0]
	for _, pid := range g.members {
		if p, ok := proc.Read(pid); ok && p.PGRP == g.pgid {
			total += p.RSS
			kept = append(kept, pid)
		}
	}
	g.members = kept
	return total
}
