# flameox's torch-profiler launcher: runs the workload (a script path or
# -m module, with its arguments) under torch.profiler in this interpreter
# and writes the Kineto trace into the output directory flameox owns.
# Usage: python launcher.py OUT_DIR OPTIONS_JSON (-m MODULE | SCRIPT) [ARGS...]
import json
import os
import runpy
import sys


def main():
    out, options = sys.argv[1], json.loads(sys.argv[2])
    rest = sys.argv[3:]
    module = rest[0] == "-m"
    target = rest[1] if module else rest[0]
    args = rest[2:] if module else rest[1:]

    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    # The workload sees the argv and sys.path it would see run directly.
    if module:
        sys.argv = [target] + args
        sys.path[0] = os.getcwd()
    else:
        sys.argv = [target] + args
        sys.path[0] = os.path.dirname(os.path.abspath(target))
    status = 0
    prof = profile(activities=activities, record_shapes=options["record_shapes"],
                   with_stack=options["with_stack"], profile_memory=options["profile_memory"])
    try:
        with prof:
            try:
                if module:
                    runpy.run_module(target, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(target, run_name="__main__")
            except SystemExit as e:
                status = e.code
    finally:
        # Each process (each rank of a distributed run) writes its own.
        rank = os.environ.get("RANK")
        name = ("rank%s." % rank if rank is not None else "") + "pid%d.pt.trace.json" % os.getpid()
        prof.export_chrome_trace(os.path.join(out, name))
    sys.exit(status)


main()
