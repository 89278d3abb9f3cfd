"""A DataLoader-like parent: two threads keep calling the driver (through ctypes, as a framework's
extension does) while a fork-start pool of 40 workers each loads a CUDA runtime and asks the
driver its version. Prints what the workers saw; identical with and without the shim. Workers
that have not answered after FORK_CHILD_WAIT_S seconds (60) have hung: FORK_HANG_REPORT, when
set, is run with each one's pid before the pool is torn down, and the exit status is 1.

  python3 fork_pool.py LIBCUDA RUNTIME"""
import ctypes, multiprocessing as mp, os, subprocess, sys, threading

libcuda, runtime = sys.argv[1], sys.argv[2]
cuda = ctypes.CDLL(libcuda)
stop = threading.Event()


def caller():
    v, n = ctypes.c_int(), ctypes.c_int()
    while not stop.is_set():
        cuda.cuInit(0)                        # fails without a GPU: a failing call each time
        cuda.cuDriverGetVersion(ctypes.byref(v))
        cuda.cuDeviceGetCount(ctypes.byref(n))


def work(i):
    rt = ctypes.CDLL(runtime)                 # the worker's own dlopen of a CUDA library
    v = ctypes.c_int()
    r = rt.cudaDriverGetVersion(ctypes.byref(v))
    return r, v.value > 0


if __name__ == "__main__":
    threads = [threading.Thread(target=caller) for _ in range(2)]
    for t in threads:
        t.start()
    with mp.get_context("fork").Pool(40) as pool:
        pending = pool.map_async(work, range(40), chunksize=1)
        try:
            results = pending.get(int(os.environ.get("FORK_CHILD_WAIT_S") or 60))
        except mp.TimeoutError:
            print("pool workers hung", file=sys.stderr)
            report = os.environ.get("FORK_HANG_REPORT")
            for p in pool._pool if report else []:
                subprocess.run([report, str(p.pid)], stdout=sys.stderr)
            os._exit(1)
    stop.set()
    for t in threads:
        t.join()
    print(sorted(set(results)), len(results))
