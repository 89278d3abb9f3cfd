/* The GEMM census read once at exit and handed to the GEMM rules (rules/gemm.c), with what they
 * cannot see in the rows: cuBLASLt's version, NVIDIA_TF32_OVERRIDE, each algorithm's flags. */
#include <stdio.h>
#include <stdlib.h>

#include "../evidence/gemm_census.h"
#include "../evidence/inventory.h"
#include "../loader/loader.h"
#include "../rules/rules.h"
#include "diagnose.h"

static int version_code(const char *v)
{
    int a = 0, b = 0, c = 0;
    if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) < 2) return 0;
    return a * 10000 + b * 100 + c;
}

void cs_diagnose_gemm(void)
{
    static struct cs_gemm_row rows[CS_GEMM_SLOTS];
    static uint64_t flags[CS_GEMM_ALGOS + 1];
    static uint8_t known[CS_GEMM_ALGOS + 1];
    int n = cs_gemm_snapshot(rows, CS_GEMM_SLOTS);
    if (!n) return;
    for (int a = 1; a <= CS_GEMM_ALGOS; a++) {
        int k;
        flags[a] = cs_lt_algo_flags(a, &k);
        known[a] = (uint8_t)k;
    }
    struct cs_gemm_evidence g = { rows, n, cs_device_cc_seen(), 0, getenv("NVIDIA_TF32_OVERRIDE"), flags, known,
                                  cs_api_name };
    cs_inventory_rdlock();
    const struct cs_library *lt = cs_library_find_kind("cublasLt", 0);
    if (lt) g.cublaslt_version = version_code(lt->version[0] ? lt->version : lt->file_version);
    cs_inventory_unlock();
    cs_rule_gemm(&g);
}
