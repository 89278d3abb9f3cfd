/* Every kind of line a trace holds, and the keys each may carry at its top level:
 *   CS_RECORD(type, "key key ...")
 * docs/trace-format.md explains each (tests/t_16_docs.sh checks that every type has its
 * section and every key is named there); every trace the test suite reads is checked against
 * this table (tests/trace_query.py), so a key the shim writes and the table lacks fails the
 * suite; the cudashim command reads lines by this table (tools/cli/trace.c). A new key within
 * the version is added here and to the docs; removing or redefining one raises the version.
 * Included with CS_RECORD defined by the includer: no include guard. */
CS_RECORD(header, "format version pid ppid forked_from host rank argv argv_truncated truncated system shim_version "
                  "clock clock_source mode ring_size calls_file nccl_version start_unix_ns start_mono_ns env")
CS_RECORD(call, "api lib via result result_name tid ts_ns dur_ns seq inside truncated "
                "driver_version driver_cuda device name bytes count compute_capability attribute value uuid "
                "symbol cuda_version flags status resolved caller note "
                "image image_from file diagnosis loading_mode kernel grid block shared_mem stream graph reason synced suspects "
                "requested free total process_live_bytes process_allocations "
                "error_string last_error library_path library_version nranks rank comm nccl_version unique_id_hash plugins "
                "datatype op peer async_error async_error_name async_error_string operation descriptor_type math_mode")
CS_RECORD(library, "kind name path soname build_id version version_code version_api file_version built_for_cuda "
                   "built_for_source compat found_via shadowed_copy shadowed_from")
CS_RECORD(runtime, "caller cuda_version static")
CS_RECORD(gemm, "api atype btype ctype compute math precision transa transb aligned compute_capability m n k batch "
                "shapes_merged impl_flags tensor_cores fast_accum count failed flops")
CS_RECORD(system, "kernel_module")
CS_RECORD(process, "nccl_version")
CS_RECORD(continued, "part previous")
CS_RECORD(finding, "id key severity summary fix evidence")
CS_RECORD(hang, "tid inside seconds ts_ns threads nccl launches")
CS_RECORD(crash, "signal signal_name code code_name addr tid mono_ns inside_call unwinder frames python python_error "
                 "this_thread other_threads truncated")
CS_RECORD(signal_handlers, "replaced survived_crash_records")
CS_RECORD(summary, "calls own_calls errors total_calls total_errors dropped suppressed lines threads findings")
