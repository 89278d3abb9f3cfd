/* The reference tables (data/cuda-reference.txt), as C. Versions are CUDA codes: 12040 is 12.4. */
#ifndef CS_REFERENCE_DATA_H
#define CS_REFERENCE_DATA_H

#include <stddef.h>

struct cs_ref_driver { int cuda; const char *linux_min, *windows_min; };  /* NULL: none / not known */
struct cs_ref_ptx { int isa; int cuda; };                                   /* isa 84 is PTX 8.4 */
struct cs_ref_arch { int cc; const char *name, *examples; int first_cuda; int last_major; };  /* cc 90 is 9.0 */
struct cs_ref_build { const char *version, *cuda_majors; int lowest_cc; };  /* lowest_cc 0: not known */
#define CS_REF_TORCH_CUDAS 4
struct cs_ref_torch { const char *release; int cuda[CS_REF_TORCH_CUDAS]; };  /* 0 after the last */
/* The releases a row holds for: first..last as 210 for 2.10; 0..9999 for every release. */
struct cs_ref_torcharch { int cuda, first_release, last_release, lowest_cc, highest_cc; };
struct cs_ref_tensorflow { const char *release; int cuda; const char *cudnn; };
struct cs_ref_jax { int cuda_major; const char *linux_min; int lowest_cc; };  /* cuda_major 12000 */

extern const struct cs_ref_driver cs_ref_floor[], cs_ref_toolkit[];
extern const struct cs_ref_ptx cs_ref_ptx[];
extern const struct cs_ref_arch cs_ref_arch[];
extern const struct cs_ref_build cs_ref_cudnn[], cs_ref_nccl[];
extern const struct cs_ref_torch cs_ref_torch[];
extern const struct cs_ref_torcharch cs_ref_torcharch[];
extern const struct cs_ref_tensorflow cs_ref_tensorflow[];
extern const struct cs_ref_jax cs_ref_jax[];
extern const int cs_ref_floor_count, cs_ref_toolkit_count, cs_ref_ptx_count, cs_ref_arch_count, cs_ref_cudnn_count,
    cs_ref_nccl_count, cs_ref_torch_count, cs_ref_torcharch_count, cs_ref_tensorflow_count, cs_ref_jax_count;

/* Lookups (reference.c) */
const struct cs_ref_driver *cs_ref_floor_for(int cuda);     /* the major's floor, or NULL */
const struct cs_ref_driver *cs_ref_toolkit_for(int cuda);   /* exact toolkit row, or NULL */
int cs_ref_ptx_to_cuda(int isa);                            /* 0 when unknown */
const struct cs_ref_arch *cs_ref_arch_for(int cc);
/* The architectures torch's wheels for this CUDA carry in this release (210: 2.10); release 0
 * (not known): the row that covers the most GPUs, so that nothing is called uncovered on a guess. */
const struct cs_ref_torcharch *cs_ref_torcharch_for(int cuda, int release);
int cs_ref_torcharch_covers(const struct cs_ref_torcharch *row, int cc);  /* cc 0: covered */
int cs_torch_release_code(const char *version);             /* "2.10.1+cu128" -> 210; 0 when not a version */

#endif
