/* cuDNN, NCCL and cuBLAS context (hooks_libs.c): NCCL communicators for the trace and the hang
 * watchdog, and the libraries' own error strings. */
#ifndef CS_HOOKS_LIBS_H
#define CS_HOOKS_LIBS_H

#include <stdint.h>
#include "../process/state.h"

#define CS_MAX_COMMS 64
#define CS_COMM_OPS 16

struct cs_blob_128_1 { unsigned char b[128]; } __attribute__((aligned(1)));  /* ncclUniqueId, by value */

struct cs_comm_op { int api; int32_t dtype, op, peer; uint64_t count, ts; void *stream; };
struct cs_comm {
    void *_Atomic comm;
    int rank, nranks, device, version, ended;
    uint64_t id_hash;
    uint32_t _Atomic nops;
    struct cs_comm_op ops[CS_COMM_OPS];   /* the last operations, a ring */
};

struct cs_comm *cs_comm_at(int i);        /* NULL past the last one */
/* Adds the library's own words to a failing call; returns NCCL's last error message (NULL: none). */
const char *cs_library_error_string(struct cs_thread *t, struct cs_api *api, struct cs_event *ev);
int cs_nccl_version_if_loaded(void);
void cs_comms_drop(void);  /* a forked child whose COMMS lock was held elsewhere */

#endif
