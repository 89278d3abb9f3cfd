"""`cudashim` and `python -m cudashim`: the command bundled in this package, with the same
arguments (python -m cudashim run -- python train.py). It finds libcudashim.so beside itself."""
import os
import stat
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "cudashim")
    mode = os.stat(exe).st_mode
    if not mode & stat.S_IXUSR:  # an installer that dropped the executable bit
        os.chmod(exe, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
