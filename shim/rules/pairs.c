/* Libraries that come as a set and must be of one release: cuBLAS calls into cuBLASLt of its own
 * release, NVRTC loads the builtins of its own. An upgrade that replaces one (a toolkit's copy
 * put first on LD_LIBRARY_PATH, a wheel upgraded alone) leaves the other behind: "undefined
 * symbol" in libcublasLt, "failed to open libnvrtc-builtins", or wrong results. */
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"

static const struct pair { const char *a, *b; } pairs[] = {
    { "cublas", "cublasLt" },
    { "nvrtc", "nvrtc-builtins" },
};

/* "12.4" of "12.4.5.8": the release both must share. 0 when unknown. */
static int release_of(const struct cs_library *l, char *out, size_t cap)
{
    const char *v = l->version[0] ? l->version : l->file_version;
    int major = 0, minor = 0;
    if (sscanf(v, "%d.%d", &major, &minor) != 2 || major <= 0) return 0;
    snprintf(out, cap, "%d.%d", major, minor);
    return 1;
}

void cs_rule_pairs(const struct cs_evidence *e)
{
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        const struct cs_library *a = cs_ev_kind(e, pairs[p].a, 0), *b = cs_ev_kind(e, pairs[p].b, 0);
        char ra[16], rb[16];
        if (!a || !b || !release_of(a, ra, sizeof ra) || !release_of(b, rb, sizeof rb) || !strcmp(ra, rb)) continue;
        const char *va = a->version[0] ? a->version : a->file_version, *vb = b->version[0] ? b->version : b->file_version;
        char summary[4096], fix[2048], ev[4096], key[64];
        snprintf(summary, sizeof summary,
                 "found %s %s (%s, %s) with %s %s (%s, %s): %s works only with the %s of its own release; load "
                 "both from one install",
                 a->name, va, a->path, a->found_via, b->name, vb, b->path, b->found_via, a->name, b->name);
        const struct cs_library *odd = !strncmp(a->found_via, "LD_LIBRARY_PATH entry ", 22) ? a
                                     : !strncmp(b->found_via, "LD_LIBRARY_PATH entry ", 22) ? b : NULL;
        if (odd)
            snprintf(fix, sizeof fix, "Remove %s from LD_LIBRARY_PATH so that %s comes from the same install as %s; or "
                     "install %s and %s of one release (for pip, upgrade both packages together).",
                     odd->found_via + 22, odd->name, odd == a ? b->path : a->path, a->name, b->name);
        else
            snprintf(fix, sizeof fix, "Install %s and %s of one release (for pip, upgrade both packages together), so "
                     "that both load from one directory.", a->name, b->name);
        struct cs_buf jb = { ev, 0, sizeof ev - 1 };
        cs_put(&jb, "{\"first\":"); cs_put_str(&jb, a->path);
        cs_put(&jb, ",\"first_version\":"); cs_put_str(&jb, va);
        cs_put(&jb, ",\"first_found_via\":"); cs_put_str(&jb, a->found_via);
        cs_put(&jb, ",\"second\":"); cs_put_str(&jb, b->path);
        cs_put(&jb, ",\"second_version\":"); cs_put_str(&jb, vb);
        cs_put(&jb, ",\"second_found_via\":"); cs_put_str(&jb, b->found_via);
        cs_put(&jb, "}");
        ev[jb.len] = 0;
        snprintf(key, sizeof key, "%s+%s", pairs[p].a, pairs[p].b);
        cs_finding(CS_F_LIBRARY_SET_MISMATCH, CS_ERROR, key, summary, fix, ev);
    }
}
