package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
)

// pstatsCases are the pstats bench cases: real cProfile output of about
// 8.5, 34 and 85 MB (the sizes issue 7 measured), ranked by hotspots (the
// edge table is declined) and by caller edges (it is built).
func pstatsCases() []benchCase {
	hot := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", in}
	}
	// The operation that ranks caller edges, by the table it reads.
	edgeOp := registry.OperationsForTables([]string{table.CPUEdges.Name})[0].Name
	edges := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20",
			"--operation", edgeOp, in}
	}
	var cases []benchCase
	for _, s := range []struct {
		label string
		size  int64
	}{{"8.5 MB", 8_500_000}, {"34 MB", 34_000_000}, {"85 MB", 85_000_000}} {
		input := "pstats-" + strings.ReplaceAll(s.label, " ", "") + ".pstats"
		cases = append(cases,
			benchCase{"pstats rank " + s.label, input, s.size, genPstats, hot, 0, false, nil},
			benchCase{"pstats rank edges " + s.label, input, s.size, genPstats, edges, 0, false, nil})
	}
	return cases
}

// pstatsBytesPerFunction is what one function of the generated workload
// adds to the file (its entry and its callers' entries), measured on
// CPython 3.11; it sizes the first attempt.
const pstatsBytesPerFunction = 240

// genPstats writes real cProfile statistics of at least size bytes: it runs
// CPython's cProfile over a generated program (pstatsWorkload) whose
// function count is chosen for the size, and grows the program until the
// file is large enough. The program, the profiler's clock and the order of
// the dicts are deterministic, so the same size gives the same bytes. The
// run takes about a minute and 1.5 GB of memory for the 85 MB file.
func genPstats(out string, size int64) error {
	py := os.Getenv("PYTHON")
	if py == "" {
		py = "python3"
	}
	n := size/pstatsBytesPerFunction + 1
	for range 4 {
		tmp := out + ".tmp"
		cmd := exec.Command(py, "-c", pstatsWorkload, tmp, strconv.FormatInt(n, 10), "7")
		cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v: %s", py, err, stderr.Bytes())
		}
		st, err := os.Stat(tmp)
		if err != nil {
			return err
		}
		if st.Size() >= size {
			return os.Rename(tmp, out)
		}
		// Grow by the shortfall, and a little more, rather than guess.
		n = n*size/st.Size() + n/100 + 1
	}
	return fmt.Errorf("pstats generator: %d functions still give less than %d bytes", n, size)
}

// pstatsWorkload is the profiled program and the profiler run, for
// `python3 -c SCRIPT OUT FUNCTIONS SEED`. The program has FUNCTIONS
// distinct Python functions (distinct code objects, spread over modules
// of about 40 functions) in layers: each calls a few functions of the next
// layers and, more often, shared utility functions, some call built-ins,
// and some recurse. Every function runs its body on its first call only,
// so the run is linear in the number of call edges, and every function
// is reached. cProfile times it with a deterministic clock (an irregular
// tick sequence), so the file does not depend on the machine; the stats
// dict is then written as Profile.dump_stats writes it (marshal.dump),
// after a seeded shuffle of its entries and of each callers dict: cProfile
// orders them by memory address, which differs between runs.
const pstatsWorkload = `
import cProfile, itertools, marshal, random, sys, types

out, nfuncs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
sys.setrecursionlimit(20000)


def node(plan=(), state=[False]):
    if state[0]:
        return
    state[0] = True
    for fn, args, times in plan:
        for _ in range(times):
            fn(*args)


def rec(n=None, plan=(), state=[False], me=[None]):
    if n is None:
        if state[0]:
            return
        state[0] = True
        n = 3
    if n > 0:
        me[0](n - 1)
        return
    for fn, args, times in plan:
        for _ in range(times):
            fn(*args)


verbs = ["get", "set", "load", "save", "parse", "render", "handle", "build", "check", "update",
         "resolve", "fetch", "compute", "emit", "read", "write", "merge", "split", "format", "visit"]
nouns = ["config", "request", "response", "user", "session", "token", "record", "node", "tree",
         "item", "value", "field", "schema", "query", "result", "event", "frame", "path", "block", "row"]
common = ["__init__", "__call__", "__enter__", "__exit__", "__repr__", "get", "run", "close", "<lambda>",
          "<genexpr>", "<listcomp>", "wrapper", "inner", "main"]
packages = ["api", "core", "db", "util", "web", "auth", "cache", "jobs", "models", "views"]

funcs = []
file, line = None, 0
for i in range(nfuncs):
    if i % 40 == 0:
        k = i // 40
        file = "/srv/app/src/%s/%s/%s_%d.py" % (rng.choice(packages), rng.choice(packages), rng.choice(nouns), k)
        line = 1
    line += rng.randint(3, 40)
    if rng.random() < 0.15:
        name = rng.choice(common)
    else:
        name = "%s_%s_%d" % (rng.choice(verbs), rng.choice(nouns), i)
    base = rec if rng.random() < 0.02 else node
    code = base.__code__.replace(co_name=name, co_qualname=name, co_filename=file, co_firstlineno=line)
    if base is rec:
        funcs.append(types.FunctionType(code, {}, name, (None, (), [False], [None])))
    else:
        funcs.append(types.FunctionType(code, {}, name, ((), [False])))

# Layers keep the first-call chains short (the depth is the layer count);
# the last 1% are utilities that anyone may call, and that call nothing.
nutil = max(1, nfuncs // 100)
ninner = nfuncs - nutil
layer = max(1, ninner // 40)
builtins_ = [(len, ((1, 2, 3),)), (isinstance, (1, int)), (sorted, ((3, 1, 2),)), ("".join, (("a", "b"),)),
             ({}.get, (1,)), (max, (1, 2)), (getattr, (1, "real")), ([].append, (1,))]
called = [False] * nfuncs
for i, fn in enumerate(funcs):
    plan = {}
    if i < ninner:
        lo = (i // layer + 1) * layer
        k = min(int(rng.expovariate(1 / 4.0)) + 1, 60)
        for _ in range(k):
            if lo < ninner and rng.random() < 0.6:
                j = rng.randrange(lo, min(ninner, lo + 3 * layer))
            else:
                # utilities: a few very popular, most rarely called
                j = ninner + min(int(rng.paretovariate(1.2)) - 1, nutil - 1)
            plan[j] = plan.get(j, 0) + 1 + (rng.random() < 0.2) * rng.randint(1, 5)
    steps = []
    for j, times in plan.items():
        called[j] = True
        steps.append((funcs[j], (), times))
    for _ in range(int(rng.random() < 0.6) + int(rng.random() < 0.3)):
        b, args = rng.choice(builtins_)
        steps.append((b, args, 1 + (rng.random() < 0.1) * rng.randint(1, 9)))
    if fn.__defaults__[0] is None:
        fn.__defaults__ = (None, tuple(steps), [False], [fn])
    else:
        fn.__defaults__ = (tuple(steps), [False])
roots = [fn for i, fn in enumerate(funcs) if not called[i]]


def run():
    for fn in roots:
        fn()


ticks = itertools.accumulate(itertools.cycle([3, 7, 1, 12, 5, 2, 9, 4, 30, 1, 6]))
prof = cProfile.Profile(ticks.__next__, 1e-7)
prof.runcall(run)
prof.create_stats()
items = sorted(prof.stats.items())
del prof
shuffle = random.Random(seed + 1)
shuffle.shuffle(items)
stats = {}
for key, (cc, nc, tt, ct, callers) in items:
    cl = sorted(callers.items())
    shuffle.shuffle(cl)
    stats[key] = (cc, nc, tt, ct, dict(cl))
del items, key, cc, nc, tt, ct, callers, cl
with open(out, "wb") as f:
    marshal.dump(stats, f)
`
