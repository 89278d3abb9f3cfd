/* Lookups over the generated reference tables. */
#include <stddef.h>

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
