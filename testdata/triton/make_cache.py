"""Writes Triton autotune cache files the way Triton 3.7's
Autotuner.check_disk_cache writes them (triton/runtime/autotuner.py):
json.dumps({"key": tuning_key, "configs_timings": [(config.__dict__, timings)]})
through Triton's own FileCacheManager into TRITON_CACHE_DIR/<key hash>/,
with Triton's own Config class. No GPU runs: the tuning keys and timings are
*invented* (schema-built fixtures), in the shape Triton's default benchmarker
returns (ms at quantiles 0.5, 0.2, 0.8; [inf, inf, inf] for a config that
failed to compile or ran out of resources)."""
import hashlib
import json

from triton.runtime.autotuner import Config
from triton.runtime.cache import get_cache_manager

INF = float("inf")


def put(fn_name, tuning_key, configs_timings):
    # Triton hashes its version key, the backend, the kernel source and the
    # configs; a stand-in hash of the same parts keeps the layout.
    parts = ["triton-3.7.0", "cuda:90", fn_name, str(tuning_key)] + [str(c) for c, _ in configs_timings]
    cache = get_cache_manager(hashlib.sha256("-".join(parts).encode("utf-8")).hexdigest())
    cache.put(json.dumps({
        "key": tuning_key,
        "configs_timings": [(c.__dict__, t) for c, t in configs_timings if not c.pre_hook],
    }), f"{fn_name[:150]}.autotune.json", binary=False)


add = [Config({"BLOCK": b}, num_warps=w) for b in (256, 1024) for w in (2, 4)]
put("add_kernel", (1048576, "torch.float32", "torch.float32", "torch.float32"),
    list(zip(add, [[0.0123, 0.0119, 0.0131], [0.0117, 0.0115, 0.0124], [0.0096, 0.0094, 0.0101], [0.0101, 0.0098, 0.0107]])))
put("add_kernel", (16777216, "torch.float32", "torch.float32", "torch.float32"),
    list(zip(add, [[0.1552, 0.1540, 0.1571], [0.1547, 0.1539, 0.1560], [0.1541, 0.1533, 0.1552], [0.1541, 0.1530, 0.1550]])))
mm = [Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
      Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=4, maxnreg=128),
      Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=5, num_ctas=2),
      Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}, num_warps=8, num_stages=6)]
put("matmul_kernel", (4096, 4096, 4096, "torch.float16", "torch.float16", "torch.float16"),
    list(zip(mm, [[0.5210, 0.5188, 0.5243], [0.4980, 0.4962, 0.5011], [0.7325, 0.7290, 0.7381], [INF, INF, INF]])))
