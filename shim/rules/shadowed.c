/* Copies put first by LD_LIBRARY_PATH where the object that asked for them ships its own (on its
 * RUNPATH, which the loader searches after LD_LIBRARY_PATH: a system cuDNN over a pip wheel's),
 * or where the system provides another (a toolkit's lib64 first on the path puts its NCCL in
 * place of the one the framework was packaged with). One cause per LD_LIBRARY_PATH entry, said
 * once with every library it put aside and every library of another CUDA major it brought. The
 * evidence is the inventory's (inventory.c, note_shadowing). */
#include <stdio.h>
#include <string.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "rules.h"

enum cs_copies cs_compare_copies(const char *in_use, int in_use_cuda, const char *other, int other_cuda, int framework_cuda,
                                 char *why, size_t cap)
{
    if (cap) why[0] = 0;
    if (!in_use_cuda) in_use_cuda = framework_cuda;
    if (!other_cuda) other_cuda = framework_cuda;
    if (in_use_cuda && other_cuda && in_use_cuda / 1000 != other_cuda / 1000) {
        snprintf(why, cap, "built for CUDA %d where the other copy is for CUDA %d", in_use_cuda / 1000, other_cuda / 1000);
        return CS_COPIES_OTHER_MAJOR;
    }
    if (!in_use || !*in_use || !other || !*other) {
        snprintf(why, cap, "the versions of both copies are not known");
        return CS_COPIES_UNKNOWN;
    }
    if (cs_version_order(in_use, other) < 0) {
        snprintf(why, cap, "%s is older than the %s it put aside", in_use, other);
        return CS_COPIES_OLDER;
    }
    return CS_COPIES_COMPATIBLE;
}

static const char *entry_of(const struct cs_library *l)
{
    return strncmp(l->found_via, "LD_LIBRARY_PATH entry ", 22) ? NULL : l->found_via + 22;
}

/* The entry that put a library aside: the cause of what else it brought. */
int cs_ev_entry_shadows(const struct cs_evidence *e, const char *entry)
{
    for (int i = 0; entry && i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        const char *en = entry_of(l);
        if (l->shadowed_copy[0] && strcmp(l->kind, "driver") && en && !strcmp(en, entry)) return 1;
    }
    return 0;
}

static void say_entry(const struct cs_evidence *e, const char *entry)
{
    char summary[4096], fix[2048], ev[6144], list[2048] = "", brought[1024] = "", one[1400], dir[1024] = "";
    const char *requester = NULL, *first_copy = NULL;
    int n = 0, system = 0, problems = 0;
    char reasons[1200] = "";
    const struct cs_library *fw = cs_ev_kind(e, "framework", 0);
    struct cs_buf jl = { ev, 0, sizeof ev - 1 };
    cs_put(&jl, "{\"ld_library_path_entry\":"); cs_put_str(&jl, entry);
    cs_put(&jl, ",\"libraries\":[");
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        const char *en = entry_of(l);
        if (!en || strcmp(en, entry)) continue;
        if (!l->shadowed_copy[0] || !strcmp(l->kind, "driver")) {
            /* brought by the same entry, built for another CUDA major than the process's runtime */
            const struct cs_library *rt = cs_ev_kind(e, "cudart", 0);
            if (rt && rt->code > 0 && l->code >= 11000 && l->code < 100000 && l->code / 1000 != rt->code / 1000 &&
                (!strcmp(l->kind, "nvJitLink") || !strcmp(l->kind, "nvrtc") || !strcmp(l->kind, "cublas") ||
                 !strcmp(l->kind, "cublasLt"))) {
                size_t k = strlen(brought);
                snprintf(brought + k, sizeof brought - k, "%s%s %s (CUDA %ld)", k ? ", " : "", l->name, l->version,
                         l->code / 1000);
            }
            continue;
        }
        /* the driver's library must match the kernel module: choosing it is never a shadowing */
        snprintf(one, sizeof one, "%s%s%s%s%s (instead of %s%s%s%s)", n ? "; " : "", l->name, l->version[0] ? " " : "",
                 l->version, "", l->shadowed_copy, l->shadowed_version[0] ? ", " : "", l->shadowed_version, "");
        size_t k = strlen(list);
        snprintf(list + k, sizeof list - k, "%s", one);
        if (!requester) requester = l->shadowed_for, first_copy = l->shadowed_copy;
        char why[300];
        enum cs_copies c = cs_compare_copies(l->version, l->built_for_cuda, l->shadowed_version, l->shadowed_built_for,
                                             fw ? fw->built_for_cuda : 0, why, sizeof why);
        if (c != CS_COPIES_COMPATIBLE) {
            size_t k = strlen(reasons);
            /* versions not known: a problem by caution, not a reason worth a line */
            if (c != CS_COPIES_UNKNOWN)
                snprintf(reasons + k, sizeof reasons - k, "%s%s: %s", k ? "; " : "", l->name, why);
            problems++;
        }
        system |= l->shadowed_system;
        cs_put(&jl, n ? ",{\"library\":" : "{\"library\":"); cs_put_str(&jl, l->path);
        cs_put(&jl, ",\"version\":"); if (l->version[0]) cs_put_str(&jl, l->version); else cs_put(&jl, "null");
        cs_put(&jl, ",\"requested_by\":"); cs_put_str(&jl, l->shadowed_for);
        cs_put(&jl, ",\"shadowed_copy\":"); cs_put_str(&jl, l->shadowed_copy);
        cs_put(&jl, ",\"shadowed_from\":"); cs_put_str(&jl, l->shadowed_system ? "system directory" : "RUNPATH");
        cs_put(&jl, ",\"shadowed_version\":");
        if (l->shadowed_version[0]) cs_put_str(&jl, l->shadowed_version); else cs_put(&jl, "null");
        cs_put(&jl, "}");
        n++;
    }
    if (!n) return;
    cs_put(&jl, "],\"also_brought\":");
    if (brought[0]) cs_put_str(&jl, brought); else cs_put(&jl, "null");
    cs_put(&jl, "}");
    ev[jl.len] = 0;
    snprintf(dir, sizeof dir, "%s", first_copy);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    char also[1100] = "";
    if (brought[0]) snprintf(also, sizeof also, "; it also brought %s, for another CUDA major than the process's runtime", brought);
    if (brought[0]) problems++;
    if (!problems) {
        /* Newer copies of the same ABI line for the same CUDA major, put first on purpose: the
         * usual way to take a fix. Said, not flagged. */
        snprintf(summary, sizeof summary,
                 "found the LD_LIBRARY_PATH entry %s putting %d librar%s first that %s %s: %s; %s the same "
                 "library, not older and built for the same CUDA major, so it works in their place",
                 entry, n, n == 1 ? "y" : "ies", cs_base_name(requester),
                 system ? "would otherwise get from the system" : "ships on its RUNPATH", list,
                 n == 1 ? "it is" : "each is");
        snprintf(fix, sizeof fix, "Nothing to do if that is on purpose; to go back to the copies %s %s, remove %s from "
                 "LD_LIBRARY_PATH for this program.", cs_base_name(requester), system ? "was installed with" : "ships",
                 entry);
        cs_finding(CS_F_LIBRARY_SHADOWED, CS_INFO, entry, summary, fix, ev);
        return;
    }
    char because[1300] = "";
    if (reasons[0]) snprintf(because, sizeof because, " (%s)", reasons);
    snprintf(summary, sizeof summary,
             "found the LD_LIBRARY_PATH entry %s putting %d librar%s first that %s %s: %s%s%s; run without that "
             "entry so %s gets %s",
             entry, n, n == 1 ? "y" : "ies", cs_base_name(requester),
             system ? "would otherwise get from the system (the copies it was installed with)" : "ships on its RUNPATH",
             list, because, also, cs_base_name(requester), system ? "the system's copies" : "the copies it ships");
    snprintf(fix, sizeof fix,
             "Remove %s from LD_LIBRARY_PATH for this program (or unset LD_LIBRARY_PATH): %s then loads %s%s. If "
             "another program needs that directory, set LD_LIBRARY_PATH for that program alone, or put %s before it.",
             entry, cs_base_name(requester), first_copy, n > 1 ? " and the others above" : "", dir);
    cs_finding(CS_F_LIBRARY_SHADOWED, CS_WARNING, entry, summary, fix, ev);
}

void cs_rule_shadowed(const struct cs_evidence *e)
{
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        const char *entry = entry_of(l);
        if (!l->shadowed_copy[0] || !strcmp(l->kind, "driver") || !entry) continue;
        int said = 0;  /* once per entry: the first library it shadows says it */
        for (int j = 0; j < i && !said; j++) {
            const char *other = entry_of(&e->libs[j]);
            said = e->libs[j].shadowed_copy[0] && strcmp(e->libs[j].kind, "driver") && other && !strcmp(other, entry);
        }
        if (!said) say_entry(e, entry);
    }
}
