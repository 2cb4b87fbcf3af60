package speedscope

import "slices"

// stacks holds one profile's distinct stacks as a trie: node 0 is the
// root, every other node is a frame under its parent. Memory grows with
// distinct stacks, never with samples or events.
type stacks struct {
	nodes []node
	child map[uint64]int32 // parent<<32 | frame → node
	max   int64
	top   int32 // largest frame index seen
}

type node struct {
	parent int32
	frame  int32
	own    float64 // native weight with this node on top of the stack
	opens  int64   // evented: times this node was opened
}

func newStacks(limit int64) *stacks {
	return &stacks{nodes: []node{{parent: -1, frame: -1}}, child: map[uint64]int32{}, max: limit, top: -1}
}

// push returns the node for frame under parent, creating it if needed.
// ok is false when the profile would exceed its distinct-stack limit.
func (s *stacks) push(parent int32, frame int32) (n int32, ok bool) {
	k := uint64(uint32(parent))<<32 | uint64(uint32(frame))
	if n, found := s.child[k]; found {
		return n, true
	}
	if int64(len(s.nodes)) > s.max {
		return 0, false
	}
	n = int32(len(s.nodes))
	s.nodes = append(s.nodes, node{parent: parent, frame: frame})
	s.child[k] = n
	s.top = max(s.top, frame)
	return n, true
}

// frameAgg is one frame's totals in one profile, in native units.
type frameAgg struct {
	frame           int32
	self, inclusive float64
	calls, prim     int64 // evented only
}

type edgeKey struct{ caller, callee int32 }

type edgeAgg struct {
	edgeKey
	weight, self float64
	calls        int64 // evented only
	active       int32 // occurrences on the current walk's path
}

// profileAgg is what a profile contributes to the output tables.
type profileAgg struct {
	frames []frameAgg // by frame index
	edges  []edgeAgg  // by (caller, callee)
	stacks []stackAgg // distinct stacks with weight on top, in trie order
}

// stackAgg is one distinct stack: frame indexes root first, and the
// native weight with it on top.
type stackAgg struct {
	frames []int32
	weight float64
}

// scratch is reused across profiles: dense per-frame state, all zero
// between uses.
type scratch struct {
	active []int32 // occurrences of each frame on the current path
	slot   []int32 // frame → index in the profile's frames, plus one
}

// aggregate folds the trie into per-frame and per-edge totals.
//
// A frame's inclusive weight counts each stack once even when the frame
// recurs in it (only its outermost occurrence counts), and likewise an
// edge's weight counts each caller→callee pair once per stack. Subtree
// totals are summed bottom-up (a child always has a larger index than its
// parent), then one depth-first walk tracks which frames and edges are
// already on the path. Edges are left out unless withEdges.
func (s *stacks) aggregate(sc *scratch, withEdges, withStacks bool) *profileAgg {
	if need := int(s.top) + 1; len(sc.active) < need {
		sc.active = make([]int32, need)
		sc.slot = make([]int32, need)
	}
	n := len(s.nodes)
	total := make([]float64, n)
	first := make([]int32, n) // first child
	next := make([]int32, n)  // next sibling
	var edgeOf []int32
	if withEdges {
		edgeOf = make([]int32, n)
	}
	for i := range first {
		first[i], next[i] = -1, -1
	}
	for i := n - 1; i >= 1; i-- {
		nd := &s.nodes[i]
		total[i] += nd.own
		total[nd.parent] += total[i]
		next[i] = first[nd.parent]
		first[nd.parent] = int32(i)
	}
	agg := &profileAgg{}
	edgeIx := map[edgeKey]int32{}
	// Iterative depth-first walk; a negative entry leaves node ^entry.
	stack := []int32{}
	for c := first[0]; c >= 0; c = next[c] {
		stack = append(stack, c)
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i < 0 {
			nd := &s.nodes[^i]
			sc.active[nd.frame]--
			if withEdges && nd.parent > 0 {
				agg.edges[edgeOf[^i]].active--
			}
			continue
		}
		nd := &s.nodes[i]
		slot := sc.slot[nd.frame]
		if slot == 0 {
			agg.frames = append(agg.frames, frameAgg{frame: nd.frame})
			slot = int32(len(agg.frames))
			sc.slot[nd.frame] = slot
		}
		f := &agg.frames[slot-1]
		f.self += nd.own
		f.calls += nd.opens
		if sc.active[nd.frame] == 0 {
			f.inclusive += total[i]
			f.prim += nd.opens
		}
		sc.active[nd.frame]++
		if withEdges && nd.parent > 0 {
			k := edgeKey{s.nodes[nd.parent].frame, nd.frame}
			ei, ok := edgeIx[k]
			if !ok {
				ei = int32(len(agg.edges))
				edgeIx[k] = ei
				agg.edges = append(agg.edges, edgeAgg{edgeKey: k})
			}
			edgeOf[i] = ei
			e := &agg.edges[ei]
			e.self += nd.own
			e.calls += nd.opens
			if e.active == 0 {
				e.weight += total[i]
			}
			e.active++
		}
		stack = append(stack, ^i)
		for c := first[i]; c >= 0; c = next[c] {
			stack = append(stack, c)
		}
	}
	for _, f := range agg.frames {
		sc.slot[f.frame] = 0
	}
	if withStacks {
		for i := 1; i < n; i++ {
			if s.nodes[i].own == 0 {
				continue
			}
			var fs []int32
			for j := int32(i); j > 0; j = s.nodes[j].parent {
				fs = append(fs, s.nodes[j].frame)
			}
			slices.Reverse(fs)
			agg.stacks = append(agg.stacks, stackAgg{frames: fs, weight: s.nodes[i].own})
		}
	}
	slices.SortFunc(agg.frames, func(a, b frameAgg) int { return int(a.frame - b.frame) })
	slices.SortFunc(agg.edges, func(a, b edgeAgg) int {
		if a.caller != b.caller {
			return int(a.caller - b.caller)
		}
		return int(a.callee - b.callee)
	})
	return agg
}
