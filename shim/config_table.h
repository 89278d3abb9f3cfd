/* The one table of CUDASHIM_* variables: name, type, default, one-line doc.
 * docs/configuration.md is checked against this table by `make check`. */
/*    name                 type     default                  doc */
CS_VAR(DISABLE,            BOOL,    "0",                     "1: the shim stays out of the way entirely (every call passes straight through).")
CS_VAR(TRACE_FILE,         STRING,  "cudashim-%h-%p.jsonl",  "Trace file name template: %p pid, %h host, %r rank (norank when none), %R rank followed by a dash (nothing when none), %% a percent sign. Relative names go under CUDASHIM_TRACE_DIR.")
CS_VAR(TRACE_DIR,          STRING,  ".",                     "Directory for relative trace file names.")
CS_VAR(TRACE_ALL,          BOOL,    "0",                     "1: write every call, not only failing and key calls.")
CS_VAR(RING_SIZE,          COUNT,   "4096",                  "Calls kept per thread in the flight recorder (rounded up to a power of two; ALL mode uses at least 65536).")
CS_VAR(STDERR,             BOOL,    "1",                     "0: write nothing on stderr (no summary, findings or crash note); `cudashim run` sets it and prints the report itself.")
CS_VAR(SUMMARY,            BOOL,    "0",                     "1: print the human summary to stderr at exit even when nothing failed.")
CS_VAR(MAX_ERRORS_PER_API, COUNT,   "1000",                  "Failing calls written per API before the rest are only counted (the summary counts all).")
CS_VAR(CLOCK,              ENUM,    "auto",                  "Timestamp source: auto (TSC when invariant, else clock_gettime), tsc, or monotonic.")
CS_VAR(CRASH_HANDLER,      BOOL,    "1",                     "0: install no handlers for fatal signals, so a crash leaves no crash record.")
CS_VAR(UNWINDER,           ENUM,    "auto",                  "Crash backtraces: auto (libunwind.so.8 when it can be loaded, else glibc backtrace) or backtrace.")
CS_VAR(CRASH_SELFTEST,     BOOL,    "0",                     "Test only: fault inside the crash handler, to prove that a second fault ends the process instead of hanging it.")
CS_VAR(EXPECT_GPU,         BOOL,    "0",                     "1: the program is meant to use the GPU: at exit, report when no CUDA library was ever loaded (a CPU-only build). `cudashim run` sets it.")
CS_VAR(DRIVER_VERSION_FILE, STRING, "/proc/driver/nvidia/version", "Where the kernel module's version is read (tests point it at a file).")
CS_VAR(SYNC_LAUNCHES,      STRING,  "",                      "1: synchronise after every kernel launch (NCCL kernels excepted) to pin the kernel behind an asynchronous error; or a name pattern (fnmatch or substring) for some kernels. Slows the program; results are unchanged.")
CS_VAR(HANG_TIMEOUT,       STRING,  "",                      "Seconds (e.g. 300): a watchdog thread reports any call that has not returned after this long, with what every thread is inside, the last NCCL operations per communicator and the last launches. Off when unset.")
