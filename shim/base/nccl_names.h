/* NCCL's enumerations by name (nccl_names.c): pure. */
#ifndef CS_NCCL_NAMES_H
#define CS_NCCL_NAMES_H

const char *cs_nccl_dtype(int d);
const char *cs_nccl_redop(int op);  /* NULL when the call has no reduction */

#endif
