/* The alternatives a finding offers (alternatives.c) for the machine the shim sees: the PyTorch
 * build loaded, the driver the program asked about, the GPU the program or a failure asked for. */
#include <stdio.h>
#include <string.h>

#include "alternatives.h"
#include "internal.h"
#include "inventory.h"

/* Written into out (empty when there is nothing to offer): "What would work here: A; B". cc and
 * driver: what the caller knows (0: what the program's calls told). */
void cs_diagnose_alternatives(int cc, int driver, char *out, size_t cap)
{
    out[0] = 0;
    const struct cs_library *torch = NULL, *l;
    for (int i = 0; (l = cs_library_find_kind("framework", i)); i++)
        if (strstr(l->version_api, "(torch)")) torch = l;
    if (!driver) driver = cs_driver_version_seen();
    if (!cc) cc = cs_device_cc_seen();
    char text[1536];
    if (!torch) return;  /* only PyTorch's builds are tabled: a program without it gets no advice about them */
    if (cs_what_would_work(cc, driver, torch ? torch->version : NULL, torch ? torch->built_for_cuda : 0, text, sizeof text))
        snprintf(out, cap, "What would work here: %s.", text);
}
