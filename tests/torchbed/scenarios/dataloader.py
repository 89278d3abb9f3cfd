"""A small model trained with a DataLoader of 4 fork workers, after the parent asked about CUDA
(what a training script does first): the workers are forked from a process whose CUDA libraries
and driver are loaded. Prints the losses (seeded: the same every run)."""
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
print("cuda available", torch.cuda.is_available())
x = torch.randn(512, 16)
y = (x.sum(dim=1, keepdim=True) > 0).float()
loader = DataLoader(TensorDataset(x, y), batch_size=64, num_workers=4,
                    multiprocessing_context="fork", shuffle=False)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total:.4f}")
