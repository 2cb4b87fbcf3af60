# Three SGD steps of a small CPU model, with no profiler of its own: the
# workload the torch-profiler provider's pipeline test captures.
import torch
from torch.profiler import record_function

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
for step in range(3):
    with record_function("train_step"):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
print("loss", float(loss))
