# A small CPU model trained for a few steps under torch.profiler: the
# workload of torch-2.5.1-cpu.pt.trace.json (see regen.sh).
import sys
import torch
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for step in range(3):
        with record_function("train_step"):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
prof.export_chrome_trace(sys.argv[1])
