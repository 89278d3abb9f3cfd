/* An allocation that failed for lack of device memory: how much was asked, how much the driver
 * says is free, how much this process holds. */
#include <stdio.h>

#include "../base/json.h"
#include "../trace/findings.h"
#include "rules.h"

static void gib(char *out, size_t cap, uint64_t b)
{
    if (b >= (1ull << 30)) snprintf(out, cap, "%.2f GiB", (double)b / (1024.0 * 1024 * 1024));
    else snprintf(out, cap, "%.1f MiB", (double)b / (1024.0 * 1024));
}

void cs_rule_out_of_memory(const struct cs_oom *m)
{
    char a[32], f[32], tt[32], l[32], summary[1024], ev_json[512], n1[24], n2[24], n3[24], n4[24];
    gib(a, sizeof a, m->requested), gib(f, sizeof f, m->free), gib(tt, sizeof tt, m->total), gib(l, sizeof l, m->live);
    snprintf(summary, sizeof summary,
             "found %s asking for %s with %s free of %s on the device; this process holds %s in %llu allocations the "
             "shim saw (the rest is other processes, the CUDA context, or allocations made before the shim)",
             m->api, a, m->have_info ? f : "?", m->have_info ? tt : "?", l, (unsigned long long)m->count);
    snprintf(ev_json, sizeof ev_json,
             "{\"api\":\"%s\",\"requested\":%s,\"free\":%s,\"total\":%s,\"process_live_bytes\":%s}",
             m->api, cs_num(n1, m->requested), cs_num(n2, m->free), cs_num(n3, m->total), cs_num(n4, m->live));
    cs_finding(CS_F_OUT_OF_MEMORY, CS_WARNING, "oom", summary,
               "Reduce the batch size or model size, free cached memory (PyTorch: torch.cuda.empty_cache(); "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation), or stop the other processes "
               "on this GPU (nvidia-smi lists them). An upgrade can raise memory use: compare with the old stack's "
               "trace.", ev_json);
}
