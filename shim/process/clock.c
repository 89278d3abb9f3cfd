/* Timestamps: the invariant TSC when the CPU has one (a few ns to read), else clock_gettime.
 * Ticks are converted to CLOCK_MONOTONIC nanoseconds when formatted, never on the hot path. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "process.h"
#include "state.h"

int cs_clock_is_tsc;
static uint64_t tsc0, ns0;
static _Atomic double ns_per_tick = 1.0;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t cs_ticks_slow(void) { return mono_ns(); }

static uint64_t rd(void)
{
    uint64_t t;
    cs_clock_is_tsc = 1;
    t = cs_ticks();
    return t;
}

static int invariant_tsc(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[4096];
    int ok = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

/* Refine the rate from the longest interval seen so far; called off the hot path. */
static void refine(void)
{
    if (!cs_clock_is_tsc) return;
    uint64_t t = cs_ticks(), n = mono_ns();
    if (n - ns0 > 1000000 && t > tsc0)
        atomic_store(&ns_per_tick, (double)(n - ns0) / (double)(t - tsc0));
}

void cs_clock_init(const char *mode)
{
    int want_tsc = !strcmp(mode, "tsc") || (!strcmp(mode, "auto") && invariant_tsc());
#if !defined(__x86_64__)
    want_tsc = 0;
#endif
    if (!want_tsc) {
        cs_clock_is_tsc = 0;
        atomic_store(&ns_per_tick, 1.0);
        return;
    }
    tsc0 = rd();
    ns0 = mono_ns();
    /* A first estimate over ~1 ms; refined every time events are formatted. */
    while (mono_ns() - ns0 < 1000000)
        ;
    refine();
}

uint64_t cs_ticks_to_ns(uint64_t ticks)
{
    if (!cs_clock_is_tsc) return ticks;
    refine();
    double d = (double)(int64_t)(ticks - tsc0) * atomic_load(&ns_per_tick);
    return ns0 + (uint64_t)(int64_t)d;
}

uint64_t cs_dur_to_ns(uint64_t ticks)
{
    return cs_clock_is_tsc ? (uint64_t)((double)ticks * atomic_load(&ns_per_tick)) : ticks;
}

void cs_clock_mapping(uint64_t *ticks0, uint64_t *ns_0, double *ns_per_tick_out)
{
    if (!cs_clock_is_tsc) { *ticks0 = 0, *ns_0 = 0, *ns_per_tick_out = 1.0; return; }
    refine();
    *ticks0 = tsc0, *ns_0 = ns0, *ns_per_tick_out = atomic_load(&ns_per_tick);
}

const char *cs_clock_name(void) { return cs_clock_is_tsc ? "tsc" : "clock_gettime"; }
