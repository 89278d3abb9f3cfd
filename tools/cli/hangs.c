/* A hang report in words, for report (wrapped text) and bugreport (Markdown): the stuck call, what
 * every thread is doing, each NCCL communicator's last operation, and what a thread stuck where
 * it should not block says. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void add(json_t *lines, int level, const char *text)
{
    json_array_append_new(lines, json_pack("{s:i, s:s}", "level", level, "text", text));
}

static double seconds_of(json_t *o)
{
    json_t *s = json_object_get(o, "seconds");
    return json_is_number(s) ? json_number_value(s) : 0.0;
}

/* A launch returns at once, unless it first loads its kernel's module: lazy loading, the default
 * since CUDA 12.2, loads it at the first launch and waits for the device, which a kernel still
 * running (a persistent kernel, an NCCL collective) never lets go. */
static int blocks_only_when_lazy(const char *api)
{
    static const char *const prefixes[] = { "cuLaunchKernel", "cuLaunchCooperativeKernel", "cudaLaunchKernel",
                                            "cuModuleLoad", "cuLibraryLoad", "cuLibraryGetKernel", "cuModuleGetFunction",
                                            "cuKernelGetFunction" };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(api, prefixes[i], strlen(prefixes[i]))) return 1;
    return 0;
}

json_t *hang_lines(const struct trace *t, json_t *hang)
{
    json_t *lines = json_array(), *x;
    char text[1024];
    size_t j;
    snprintf(text, sizeof text, "thread %lld inside %s for %.0f s", jint(hang, "tid", 0), jstr(hang, "inside"),
             seconds_of(hang));
    add(lines, 0, text);
    const char *lazy = NULL;
    long long lazy_tid = 0;
    json_array_foreach(json_object_get(hang, "threads"), j, x) {
        if (*jstr(x, "inside")) {
            if (json_is_number(json_object_get(x, "seconds")))
                snprintf(text, sizeof text, "thread %lld: inside %s (%.0f s)", jint(x, "tid", 0), jstr(x, "inside"),
                         seconds_of(x));
            else
                snprintf(text, sizeof text, "thread %lld: inside %s", jint(x, "tid", 0), jstr(x, "inside"));
            if (!lazy && blocks_only_when_lazy(jstr(x, "inside"))) lazy = jstr(x, "inside"), lazy_tid = jint(x, "tid", 0);
        } else {
            snprintf(text, sizeof text, "thread %lld: idle, last call %s", jint(x, "tid", 0),
                     *jstr(x, "last_call") ? jstr(x, "last_call") : "-");
        }
        add(lines, 1, text);
    }
    json_array_foreach(json_object_get(hang, "nccl"), j, x) {
        json_t *ops = json_object_get(x, "last_ops");
        json_t *last = json_array_size(ops) ? json_array_get(ops, json_array_size(ops) - 1) : NULL;
        snprintf(text, sizeof text, "NCCL communicator %s: rank %lld of %lld, %lld operations%s%s", jstr(x, "comm"),
                 jint(x, "rank", -1), jint(x, "nranks", -1), jint(x, "ops_total", 0), last ? ", the last " : "",
                 last ? jstr(last, "api") : "");
        add(lines, 1, text);
        if (last) {
            json_t *ago = json_object_get(last, "seconds_ago");
            snprintf(text, sizeof text, "(%lld x %s, %.0f s ago): compare with the other ranks' traces; the rank that did "
                     "not get this far is the one to look at", jint(last, "count", 0), jstr(last, "datatype"),
                     json_is_number(ago) ? json_number_value(ago) : 0.0);
            add(lines, 2, text);
        }
    }
    const char *loading = jstr(json_object_get(t->header, "env"), "CUDA_MODULE_LOADING");
    if (lazy && !strcmp(loading, "EAGER")) {
        snprintf(text, sizeof text,
                 "thread %lld is still inside %s while the others wait; modules load at start here "
                 "(CUDA_MODULE_LOADING=EAGER), so the launch waits on the driver itself: its queue is full behind "
                 "work that does not finish (the kernels in flight, the other ranks of a collective).", lazy_tid, lazy);
        add(lines, 1, text);
    } else if (lazy) {
        snprintf(text, sizeof text,
                 "thread %lld is still inside %s while the others wait: a launch returns at once unless it first loads "
                 "its kernel's module (lazy loading, the default since CUDA 12.2), which waits for the GPU; with a "
                 "kernel still running (a persistent kernel, an NCCL collective) that never ends. CUDA_MODULE_LOADING=EAGER "
                 "loads every module at start and rules it out.", lazy_tid, lazy);
        add(lines, 1, text);
    }
    return lines;
}
