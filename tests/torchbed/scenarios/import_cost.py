"""The time `import torch` takes, in seconds (the suite compares medians with and without the shim)."""
import time
t = time.perf_counter()
import torch  # noqa: E402
print(f"{time.perf_counter() - t:.4f}")
