/* Where evidence arrives (diagnose.c, diagnose_libs.c): each hook hands over what it saw; these
 * take a view of everything known (struct cs_evidence) and run the rules (rules/) that read it. */
#ifndef CS_DIAGNOSE_H
#define CS_DIAGNOSE_H

#include <stdint.h>

#include "../process/state.h"

void cs_diagnose_libraries(void);
void cs_diagnose_driver_version(int version);
void cs_diagnose_init_result(int result);
void cs_diagnose_device_count(int count);
void cs_diagnose_procaddr(void *return_address, const char *symbol, int cuda_version, int status, int result);
void cs_diagnose_dlsym_miss(void *handle, const char *name);
void cs_diagnose_dlerror(const char *message);
void cs_diagnose_forked_child_call(const char *api);
void cs_diagnose_runtime_no_driver(const char *api, int result);  /* 35/100 from a runtime call */
void cs_diagnose_exit(void);
void cs_diagnose_gemm(void);  /* diagnose_gemm.c: the GEMM census, at exit */
void cs_diagnose_result(const char *api, int result);  /* 221, 802, 999: causes checked (rules/results.c) */
struct cs_evidence;
void cs_diagnose_cudnn_status(const struct cs_evidence *e);  /* diagnose_libs.c: a cuDNN sub-library status, explained */
void cs_evidence_take(struct cs_evidence *e);  /* everything known, for a rule (inventory read-locked) */
void cs_diagnose_unbound(const char *needer, const char *symbol);  /* a lazy reference its library lacks */
extern int cs_cuda_initialised;    /* cuInit succeeded in this process */
extern int cs_forked_after_init;   /* this process is a child forked after the parent's cuInit */
void cs_diagnose_drop(void);       /* a forked child whose DIAGNOSE lock was held elsewhere */
/* diagnose_libs.c: a failing library call whose cause the shim can name */
void cs_diagnose_library_failure(struct cs_thread *t, struct cs_api *api, const struct cs_event *ev, const char *library_said);
/* The lookups of driver functions this driver lacks that a library (file name prefix "libnccl")
 * made: taken as its failure's cause (not said again at exit); names holds the first few. */
struct cs_driver_gap;
int cs_diagnose_driver_gap(const char *library_prefix, struct cs_driver_gap *gap, char *names, size_t cap);
/* Under the DIAGNOSE lock: a lookup above the driver within its major, kept for such a failure;
 * at exit, those no failure took said as missing-symbol info; a forked child drops them. */
struct cs_evidence;
void cs_diagnose_keep_miss(const char *caller, const char *symbol, int cuda, int status);
void cs_diagnose_say_misses(const struct cs_evidence *e);
void cs_diagnose_drop_misses(void);

#endif
