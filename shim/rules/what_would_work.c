/* The alternatives a finding offers (alternatives.c) for the machine in the evidence: the
 * framework build loaded, the driver the program asked about, the GPU the program or a failure
 * asked for, and the CUDA the failing library needs. */
#include <stdio.h>
#include <string.h>

#include "../base/alternatives.h"
#include "../evidence/inventory.h"
#include "rules.h"

/* The wheel a framework's version came from: "its wheel (torch)" -> "torch". */
static int wheel_of(const struct cs_library *l, char *out, size_t cap)
{
    const char *open = strrchr(l->version_api, '(');
    if (!open) return 0;
    snprintf(out, cap, "%s", open + 1);
    char *close = strchr(out, ')');
    if (close) *close = 0;
    return out[0] != 0;
}

/* Written into out (empty when there is nothing to offer): "What would work here: A; B". cc,
 * driver and needs: what the caller knows (0: what the evidence says; needs 0: the framework's). */
void cs_rule_alternatives(const struct cs_evidence *e, int cc, int driver, int needs, char *out, size_t cap)
{
    out[0] = 0;
    char wheel[40] = "";
    const struct cs_library *fw = NULL, *l;
    /* The framework whose build says the CUDA it was made for; PyTorch's first (its tables are
     * the fullest), else the first that has a wheel. */
    for (int i = 0; (l = cs_ev_kind(e, "framework", i)); i++) {
        char w[40];
        if (!wheel_of(l, w, sizeof w)) continue;
        if (!fw || (!strcmp(w, "torch") && strcmp(wheel, "torch"))) fw = l, snprintf(wheel, sizeof wheel, "%s", w);
    }
    const struct cs_library *d = cs_ev_kind(e, "driver", 0);
    struct cs_machine m = {
        .cc = cc ? cc : e->device_cc,
        .driver_cuda = driver ? driver : e->driver_version,
        .driver_version = d && d->file_version[0] ? d->file_version : NULL,
        .gpu_name = e->gpu_name,
        .framework = fw ? wheel : NULL,
        .framework_version = fw ? fw->version : NULL,
        .framework_cuda = fw ? fw->built_for_cuda : 0,
        .needs_cuda = needs,
    };
    char text[1536];
    if (cs_what_would_work(&m, text, sizeof text)) snprintf(out, cap, "What would work here: %s.", text);
}
