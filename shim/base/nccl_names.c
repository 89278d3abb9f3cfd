/* NCCL's enumerations by name (nccl.h's ncclDataType_t and ncclRedOp_t), for collective lines
 * and hang reports. */
#include <stddef.h>

#include "nccl_names.h"

const char *cs_nccl_dtype(int d)
{
    static const char *const n[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
                                     "float64", "bfloat16", "float8e4m3", "float8e5m2" };
    return d >= 0 && d < 12 ? n[d] : "?";
}

const char *cs_nccl_redop(int op)
{
    static const char *const n[] = { "sum", "prod", "max", "min", "avg" };
    return op >= 0 && op < 5 ? n[op] : op < 0 ? NULL : "custom";
}
