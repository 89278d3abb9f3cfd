"""A DataLoader-like parent: two threads keep calling the driver (through ctypes, as a framework's
extension does) while a fork-start pool of 40 workers each loads a CUDA runtime and asks the
driver its version. Prints what the workers saw; identical with and without the shim.

  python3 fork_pool.py LIBCUDA RUNTIME"""
import ctypes, multiprocessing as mp, sys, threading

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
        results = pool.map(work, range(40), chunksize=1)
    stop.set()
    for t in threads:
        t.join()
    print(sorted(set(results)), len(results))
