/* The Prometheus metrics, one row each: the shim's own file (shim/prometheus.c,
 * CUDASHIM_PROMETHEUS_DIR) and `cudashim export --prometheus` (tools/cli/prometheus.c) write the
 * same names, types and help. docs/prometheus.md lists them with their labels.
 *   CS_METRIC(ID, "name", "type", "help") */
CS_METRIC(PROCESS, "cudashim_process_info",       "gauge",   "Traced processes, by shim version and mode (the number of processes).")
CS_METRIC(FINDING, "cudashim_finding",            "gauge",   "Processes with this finding, by id and severity (docs/diagnoses.md explains each id).")
CS_METRIC(DRIVER,  "cudashim_driver_info",        "gauge",   "Processes on this NVIDIA driver, by its version and the CUDA version it supports.")
CS_METRIC(LIBRARY, "cudashim_library_info",       "gauge",   "Processes that loaded this CUDA library, by kind, soname and version.")
CS_METRIC(FAILED,  "cudashim_failed_calls_total", "counter", "Failing CUDA, cuDNN, NCCL and cuBLAS calls, by API and result (the result code, or any in a process's own file).")
CS_METRIC(CRASH,   "cudashim_crashes_total",      "counter", "Fatal signals recorded by the shim, by signal.")
CS_METRIC(HANG,    "cudashim_hangs_total",        "counter", "Hang reports written by the shim's watchdog.")
