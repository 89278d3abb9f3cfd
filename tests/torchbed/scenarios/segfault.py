"""A segfault after `import torch`: `before` any CUDA call (as a crash in a library's constructor
or an extension's import looks), or `after` torch asked about CUDA."""
import ctypes, sys
import torch

if sys.argv[1:] == ["after"]:
    print("cuda available", torch.cuda.is_available(), flush=True)
print("crashing", flush=True)
ctypes.string_at(0)
