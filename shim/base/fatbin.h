/* Device-code images (fatbin containers, cubins, PTX): what they hold, read from headers only,
 * bounds-checked, never decompressed (the layouts are documented with each reader). Shared by the
 * shim and the cudashim command; no allocation, no I/O. */
#ifndef CS_FATBIN_H
#define CS_FATBIN_H

#include <stddef.h>
#include <stdint.h>

enum cs_image { CS_IMG_UNKNOWN, CS_IMG_CONTAINER, CS_IMG_WRAPPER, CS_IMG_CUBIN, CS_IMG_PTX, CS_IMG_LEGACY };
enum cs_entry_kind { CS_ENTRY_PTX = 1, CS_ENTRY_ELF = 2, CS_ENTRY_LTO = 8 };
enum cs_codec { CS_CODEC_NONE, CS_CODEC_LZ4, CS_CODEC_ZSTD, CS_CODEC_OTHER };

#define CS_FATBIN_MAGIC 0xBA55ED50u
#define CS_WRAPPER_MAGIC 0x466243B1u
#define CS_LEGACY_MAGIC 0x1EE55A01u

struct cs_entry {
    unsigned kind;          /* cs_entry_kind, or anything else (unknown: reported, skipped) */
    unsigned arch;          /* CC x 10: 90 for sm_90 / compute_90 */
    char suffix;            /* 0, 'a' (arch-specific) or 'f' (family) */
    unsigned ver_major, ver_minor;  /* PTX: ISA version; ELF: cubin ABI */
    enum cs_codec codec;
    uint64_t flags;
    int bad_compressed_size;        /* header kept, compressedSize out of range */
};

/* Parse one container at buf (len bytes available). Calls cb for each entry (cb returns non-zero
 * to stop). Returns the number of entries, or -1 with *err set; *size gets the container's
 * total size (header + entries) when it is valid. */
typedef int (*cs_entry_cb)(const struct cs_entry *e, void *arg);
int cs_fatbin_parse(const void *buf, size_t len, cs_entry_cb cb, void *arg, size_t *size, const char **err);

enum cs_image cs_image_kind(const void *p, size_t len);
/* A cubin's SM and ABI (suffix unknown: 0). Returns 0 on success. */
int cs_cubin_entry(const void *p, size_t len, struct cs_entry *e);
/* A PTX text's .version and .target (scans at most len bytes or the first NUL). 0 on success. */
int cs_ptx_entry(const char *text, size_t len, struct cs_entry *e);

/* "sm_90a", "compute_100f", "lto_90" */
void cs_entry_name(const struct cs_entry *e, char *out, size_t cap);

/* Would this set of entries (one module) run on a device of compute capability cc (x10) with a
 * driver of CUDA version `driver` (12080 is 12.8)? Implements fatbin-format.md section 9.1. */
enum cs_outcome { CS_RUNS_SASS, CS_RUNS_JIT, CS_NO_IMAGE = 209, CS_PTX_TOO_NEW = 222, CS_INVALID_IMAGE = 200 };
struct cs_prediction {
    enum cs_outcome outcome;
    int chosen;             /* index of the entry the driver would use, -1 when none */
    int too_new_ptx;        /* index of a target-compatible PTX that is too new (222), -1 */
    unsigned max_ptx;       /* the newest PTX ISA this driver reads, x10 (87 = 8.7); 0 unknown */
};
void cs_predict(const struct cs_entry *e, int n, unsigned cc, int driver, struct cs_prediction *p);
/* The first CUDA version (12040) whose driver reads PTX ISA major.minor; 0 when unknown. */
int cs_ptx_min_cuda(unsigned major, unsigned minor);

#endif
