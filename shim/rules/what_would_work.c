/* The alternatives a finding offers (alternatives.c) for the machine in the evidence: the PyTorch
 * build loaded, the driver the program asked about, the GPU the program or a failure asked for. */
#include <stdio.h>
#include <string.h>

#include "../alternatives.h"
#include "rules.h"

/* Written into out (empty when there is nothing to offer): "What would work here: A; B". cc and
 * driver: what the caller knows (0: what the evidence says). */
void cs_rule_alternatives(const struct cs_evidence *e, int cc, int driver, char *out, size_t cap)
{
    out[0] = 0;
    const struct cs_library *torch = NULL, *l;
    for (int i = 0; (l = cs_ev_kind(e, "framework", i)); i++)
        if (strstr(l->version_api, "(torch)")) torch = l;
    if (!driver) driver = e->driver_version;
    if (!cc) cc = e->device_cc;
    if (!torch) return;  /* only PyTorch's builds are tabled: a program without it gets no advice about them */
    char text[1536];
    if (cs_what_would_work(cc, driver, torch->version, torch->built_for_cuda, text, sizeof text))
        snprintf(out, cap, "What would work here: %s.", text);
}
