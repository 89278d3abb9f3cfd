"""import torch, ask whether CUDA is available, initialise it: what a user tries first."""
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda)
print("available", torch.cuda.is_available())
try:
    torch.cuda.init()
    print("init ok, devices", torch.cuda.device_count())
except Exception as e:  # the message a user sees
    print("init failed:", type(e).__name__, str(e).splitlines()[0])
