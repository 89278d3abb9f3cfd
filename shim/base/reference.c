/* Lookups over the generated reference tables. */
#include <stddef.h>
#include <stdio.h>

#include "reference_data.h"

const struct cs_ref_driver *cs_ref_floor_for(int cuda)
{
    for (int i = 0; i < cs_ref_floor_count; i++)
        if (cs_ref_floor[i].cuda / 1000 == cuda / 1000) return &cs_ref_floor[i];
    return NULL;
}

const struct cs_ref_driver *cs_ref_toolkit_for(int cuda)
{
    for (int i = 0; i < cs_ref_toolkit_count; i++)
        if (cs_ref_toolkit[i].cuda == cuda) return &cs_ref_toolkit[i];
    return NULL;
}

int cs_ref_ptx_to_cuda(int isa)
{
    for (int i = 0; i < cs_ref_ptx_count; i++)
        if (cs_ref_ptx[i].isa == isa) return cs_ref_ptx[i].cuda;
    return 0;
}

const struct cs_ref_arch *cs_ref_arch_for(int cc)
{
    for (int i = 0; i < cs_ref_arch_count; i++)
        if (cs_ref_arch[i].cc == cc) return &cs_ref_arch[i];
    return NULL;
}

const struct cs_ref_torcharch *cs_ref_torcharch_for(int cuda, int release)
{
    const struct cs_ref_torcharch *widest = NULL;
    for (int i = 0; i < cs_ref_torcharch_count; i++) {
        const struct cs_ref_torcharch *r = &cs_ref_torcharch[i];
        if (r->cuda != cuda) continue;
        if (release && release >= r->first_release && release <= r->last_release) return r;
        if (!widest || r->lowest_cc < widest->lowest_cc) widest = r;
    }
    /* a release outside every range of this CUDA (newer than the tables): the widest too */
    return widest;
}

int cs_ref_torcharch_covers(const struct cs_ref_torcharch *row, int cc)
{
    return row && (!cc || (cc >= row->lowest_cc && cc / 10 <= row->highest_cc / 10));
}

int cs_torch_release_code(const char *version)
{
    int major = 0, minor = 0;
    if (!version || sscanf(version, "%d.%d", &major, &minor) != 2 || major < 0 || minor < 0 || minor > 99) return 0;
    return major * 100 + minor;
}
