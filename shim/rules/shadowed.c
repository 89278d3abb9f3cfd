/* A copy put first by LD_LIBRARY_PATH where the object that asked for it ships its own: the
 * loader searches LD_LIBRARY_PATH before a RUNPATH, so a system cuDNN, NCCL or cuBLAS on
 * LD_LIBRARY_PATH wins over the one a pip wheel carries beside the framework. The evidence is
 * the inventory's (inventory.c, note_shadowing): which copy was loaded, through which entry,
 * and the copy on the requester's RUNPATH with its version from its files. */
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "rules.h"

void cs_rule_shadowed(const struct cs_evidence *e)
{
    for (int i = 0; i < e->nlibs; i++) {
        const struct cs_library *l = &e->libs[i];
        /* The driver's library must match the kernel module, not what a library's RUNPATH names:
         * no framework ships it, so choosing it on LD_LIBRARY_PATH is never a shadowing. */
        if (!l->shadowed_copy[0] || !strcmp(l->kind, "driver")) continue;
        const char *entry = strncmp(l->found_via, "LD_LIBRARY_PATH entry ", 22) ? l->found_via : l->found_via + 22;
        char loaded_v[48] = "", other_v[48] = "", summary[4096], fix[2048], ev[4096], dir[1024];
        snprintf(dir, sizeof dir, "%s", l->shadowed_copy);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        if (l->version[0]) snprintf(loaded_v, sizeof loaded_v, " (%s)", l->version);
        if (l->shadowed_version[0]) snprintf(other_v, sizeof other_v, " (%s)", l->shadowed_version);
        snprintf(summary, sizeof summary,
                 "found %s%s loaded from %s, put first by the LD_LIBRARY_PATH entry %s, although %s has its own copy "
                 "on its RUNPATH, %s%s, which the loader searches after LD_LIBRARY_PATH; run without that entry so "
                 "%s gets the copy it ships",
                 l->name, loaded_v, l->path, entry, cs_base_name(l->shadowed_for), l->shadowed_copy, other_v,
                 cs_base_name(l->shadowed_for));
        snprintf(fix, sizeof fix,
                 "Remove %s from LD_LIBRARY_PATH for this program (or unset LD_LIBRARY_PATH): %s then loads %s. If "
                 "another library of the program needs that directory, put %s before it instead.",
                 entry, cs_base_name(l->shadowed_for), l->shadowed_copy, dir);
        struct cs_buf b = { ev, 0, sizeof ev - 1 };
        cs_put(&b, "{\"library\":"); cs_put_str(&b, l->path);
        cs_put(&b, ",\"version\":"); if (l->version[0]) cs_put_str(&b, l->version); else cs_put(&b, "null");
        cs_put(&b, ",\"ld_library_path_entry\":"); cs_put_str(&b, entry);
        cs_put(&b, ",\"requested_by\":"); cs_put_str(&b, l->shadowed_for);
        cs_put(&b, ",\"shadowed_copy\":"); cs_put_str(&b, l->shadowed_copy);
        cs_put(&b, ",\"shadowed_version\":");
        if (l->shadowed_version[0]) cs_put_str(&b, l->shadowed_version); else cs_put(&b, "null");
        cs_put(&b, "}");
        ev[b.len] = 0;
        cs_finding(CS_F_LIBRARY_SHADOWED, CS_WARNING, l->path, summary, fix, ev);
    }
}
