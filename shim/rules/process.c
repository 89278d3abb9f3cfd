/* The process's own use of CUDA: a child forked after its parent initialised CUDA. */
#include <stdio.h>

#include "../trace/findings.h"
#include "rules.h"

void cs_rule_forked_child(const char *api, int parent_pid)
{
    char summary[1024], ev[512];
    snprintf(summary, sizeof summary,
             "found a CUDA call (%s) in a child forked after its parent initialised CUDA; a forked child cannot use "
             "the parent's CUDA state; start workers with 'spawn' or 'forkserver'", api);
    snprintf(ev, sizeof ev, "{\"api\":\"%s\",\"parent_pid\":%d}", api, parent_pid);
    cs_finding(CS_F_CUDA_IN_FORKED_CHILD, CS_ERROR, "fork", summary,
               "Create worker processes with multiprocessing.set_start_method('spawn') (or 'forkserver'), or do "
               "not touch CUDA in the parent before forking (e.g. DataLoader workers must not use CUDA).", ev);
}
