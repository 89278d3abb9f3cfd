/* The binary companion of an ALL-mode trace (NAME.calls): its layout, shared by the shim that
 * writes it (calls_file.c) and the cudashim command that reads it (tools/cli/calls.c).
 * docs/trace-format.md describes it; a change raises CS_CALLS_VERSION. Little-endian, as the
 * machines that write it. */
#ifndef CS_CALLS_FORMAT_H
#define CS_CALLS_FORMAT_H
#include <stdint.h>

#define CS_CALLS_MAGIC "CSCALLS"   /* 8 bytes with its NUL */
#define CS_CALLS_VERSION 1
#define CS_CALLS_EVENT_BYTES 64

struct cs_calls_file_header {
    char magic[8];
    uint32_t version;
    uint32_t header_bytes;      /* this header's size: chunks start after it */
    uint32_t event_bytes;       /* CS_CALLS_EVENT_BYTES */
    uint32_t reserved;
};

enum { CS_CALLS_EVENTS = 1, CS_CALLS_NAMES = 2 };
struct cs_calls_chunk {
    uint32_t type;              /* CS_CALLS_* */
    uint32_t tid;               /* the thread whose events follow */
    uint32_t count;             /* events */
    uint32_t bytes;             /* what follows this header */
    uint64_t reserved;
    uint64_t ref_ticks, ref_ns; /* ns = ref_ns + (ticks - ref_ticks) * ns_per_tick */
    double ns_per_tick;
};

/* An event as it lies in the file: the ring's struct cs_event (shim/process/state.h), byte for byte. */
struct cs_calls_event {
    uint64_t ts;
    uint16_t api;
    uint8_t via, flags;
    int32_t result;
    uint32_t seq, shmem;
    uint64_t arg, stream;
    uint16_t inside;
    uint8_t kind, spare;
    uint32_t dur;
    union {
        struct { uint32_t gx; uint16_t gy, gz, bx, by, bz, pad; } k;
        struct { uint64_t count; int32_t peer; uint8_t dtype; int8_t op; uint16_t pad; } n;
    };
};
_Static_assert(sizeof(struct cs_calls_event) == CS_CALLS_EVENT_BYTES, "one event, 64 bytes");

#endif
