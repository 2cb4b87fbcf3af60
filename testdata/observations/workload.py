"""A Python workload recording observations with flameox_observe (see regen.sh)."""

import os

import flameox_observe as fo

with fo.phase("setup"):
    fo.observe("config", {"optimizer": "adam", "lr": 0.001, "layers": [128, 64], "débit": "élevé"})
    fo.observe("dataset_rows", 2**70)  # integers keep their exact value

with fo.phase("train"):
    for epoch in range(3):
        with fo.phase("epoch"):
            fo.observe("loss", 1.0 / (epoch + 1))
            fo.observe("step_time", 12.0 + epoch, unit="ms")
    fo.observe("step_time", 0.011, unit="s")  # another unit of the same dimension

pid = os.fork()
if pid == 0:
    # A child process appends to the same file.
    fo.observe("child_rows", 42, phase=None)
    os._exit(0)
os.waitpid(pid, 0)

fo.observe("note", None, ts=1_700_000_000_000_000_000)
fo.start_phase("shutdown")  # never ended: the workload forgot
fo.observe("status", "done")
