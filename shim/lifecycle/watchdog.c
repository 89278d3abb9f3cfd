/* CUDASHIM_HANG_TIMEOUT=<seconds>: a thread that watches for calls that do not return in time
 * (a synchronize, ncclCommInitRank, a collective's completion: the driver's synchronising and
 * key calls, and every cuDNN, NCCL and cuBLAS call) and writes, for
 * a stuck one, what every thread is inside, the last NCCL operations per communicator, and the
 * last launches. It reads the per-thread state and rings and nothing else: it never calls the
 * driver or a library, and never touches the program's state. A stuck call is reported again
 * no more often than once per timeout period. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/json.h"
#include "../base/nccl_names.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "../hooks/devcode.h"
#include "../hooks/hooks_libs.h"
#include "lifecycle.h"

static double timeout_s;
static pthread_t watcher;
static int _Atomic running;

static double ticks_to_s(uint64_t ticks) { return (double)cs_dur_to_ns(ticks) / 1e9; }

/* Only these wrappers record their entry time (the others are the hot path). */
static int watched(int idx)
{
    struct cs_api *api = cs_api_of(idx);
    return api && (api != &cs_api_cuda || (api->classes[idx - api->base] & (CS_CLASS_SYNC | CS_CLASS_KEY)));
}

static void put_threads(struct cs_buf *b, uint64_t now)
{
    cs_put(b, "[");
    int first = 1;
    for (struct cs_thread *t = cs_thread_list(); t; t = t->next) {
        if (atomic_load(&t->dead)) continue;
        if (!first) cs_put(b, ",");
        first = 0;
        cs_put(b, "{\"tid\":"); cs_put_u64(b, (uint64_t)t->tid);
        int depth = __atomic_load_n(&t->depth, __ATOMIC_RELAXED), current = __atomic_load_n(&t->current, __ATOMIC_RELAXED);
        uint64_t entered = __atomic_load_n(&t->enter_ts, __ATOMIC_ACQUIRE);
        if (depth && watched(current)) {
            char secs[32];
            snprintf(secs, sizeof secs, "%.1f", now > entered ? ticks_to_s(now - entered) : 0.0);
            cs_put(b, ",\"inside\":"); cs_put_str(b, cs_api_name(current));
            cs_put(b, ",\"seconds\":"); cs_put(b, secs);
        } else if (depth) {
            cs_put(b, ",\"inside\":"); cs_put_str(b, cs_api_name(current));
        } else {
            uint64_t h = atomic_load(&t->head);
            if (h) { cs_put(b, ",\"last_call\":"); cs_put_str(b, cs_api_name(t->ring->ev[(h - 1) & t->ring->mask].api)); }
        }
        cs_put(b, "}");
    }
    cs_put(b, "]");
}

static void put_comms(struct cs_buf *b, uint64_t now)
{
    cs_put(b, "[");
    for (int i = 0; cs_comm_at(i); i++) {
        struct cs_comm *c = cs_comm_at(i);
        if (i) cs_put(b, ",");
        cs_put(b, "{\"comm\":"); cs_put_hex(b, (uint64_t)(uintptr_t)atomic_load(&c->comm));
        cs_put(b, ",\"rank\":"); cs_put_i64(b, c->rank);
        cs_put(b, ",\"nranks\":"); cs_put_i64(b, c->nranks);
        cs_put(b, ",\"nccl_version\":"); cs_put_i64(b, c->version);
        if (c->id_hash) {  /* the same in every rank of the communicator: readers match ranks by it */
            char hash[24];
            snprintf(hash, sizeof hash, "%016llx", (unsigned long long)c->id_hash);
            cs_put(b, ",\"unique_id_hash\":"); cs_put_str(b, hash);
        }
        cs_put(b, ",\"ops_total\":"); cs_put_u64(b, atomic_load(&c->nops));
        cs_put(b, ",\"last_ops\":[");
        uint32_t n = atomic_load(&c->nops), k = n < CS_COMM_OPS ? n : CS_COMM_OPS;
        for (uint32_t j = n - k; j < n; j++) {
            const struct cs_comm_op *o = &c->ops[j % CS_COMM_OPS];
            char secs[32];
            snprintf(secs, sizeof secs, "%.1f", ticks_to_s(now - o->ts));
            if (j != n - k) cs_put(b, ",");
            cs_put(b, "{\"api\":"); cs_put_str(b, cs_api_name(o->api));
            cs_put(b, ",\"count\":"); cs_put_u64(b, o->count);
            cs_put(b, ",\"datatype\":"); cs_put_str(b, cs_nccl_dtype(o->dtype));
            if (o->peer >= 0) { cs_put(b, ",\"peer\":"); cs_put_i64(b, o->peer); }
            cs_put(b, ",\"seconds_ago\":"); cs_put(b, secs);
            cs_put(b, "}");
        }
        cs_put(b, "]}");
    }
    cs_put(b, "]");
}

/* The last kernel launches of every thread, newest first (names from the map only). */
struct launch_list { struct cs_buf *b; int n; };

static int put_launch(const struct cs_thread *t, const struct cs_event *l, void *arg)
{
    struct launch_list *ll = arg;
    if (l->kind == CS_LAUNCH_NCCL) return 0;
    char name[256];
    if (l->kind == CS_LAUNCH_GRAPH) snprintf(name, sizeof name, "graph %p", (void *)(uintptr_t)l->arg);
    else cs_kernel_name_cached((void *)(uintptr_t)l->arg, name, sizeof name);
    if (ll->n) cs_put(ll->b, ",");
    cs_put(ll->b, "{\"tid\":"); cs_put_u64(ll->b, (uint64_t)t->tid);
    cs_put(ll->b, ",\"kernel\":"); cs_put_str(ll->b, name);
    cs_put(ll->b, ",\"stream\":"); cs_put_hex(ll->b, l->stream);
    cs_put(ll->b, "}");
    return ++ll->n >= 8;
}

static void put_launches(struct cs_buf *b)
{
    struct launch_list ll = { b, 0 };
    cs_put(b, "[");
    cs_recent_launches(put_launch, &ll);
    cs_put(b, "]");
}

static void report(struct cs_thread *stuck, uint64_t now)
{
    static char line[1 << 16];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    uint64_t entered = __atomic_load_n(&stuck->enter_ts, __ATOMIC_ACQUIRE);
    int current = __atomic_load_n(&stuck->current, __ATOMIC_RELAXED);
    double secs = now > entered ? ticks_to_s(now - entered) : 0.0;
    char s[32];
    snprintf(s, sizeof s, "%.1f", secs);
    cs_put(&b, "{\"type\":\"hang\",\"tid\":"); cs_put_u64(&b, (uint64_t)stuck->tid);
    cs_put(&b, ",\"inside\":"); cs_put_str(&b, cs_api_name(current));
    cs_put(&b, ",\"seconds\":"); cs_put(&b, s);
    cs_put(&b, ",\"ts_ns\":"); cs_put_u64(&b, cs_ticks_to_ns(now));
    cs_put(&b, ",\"threads\":"); put_threads(&b, now);
    cs_put(&b, ",\"nccl\":"); put_comms(&b, now);
    cs_put(&b, ",\"launches\":"); put_launches(&b);
    cs_put(&b, "}\n");
    if (b.len >= sizeof line - 2) {
        b.len = 0;
        cs_put(&b, "{\"type\":\"hang\",\"truncated\":true,\"tid\":"); cs_put_u64(&b, (uint64_t)stuck->tid);
        cs_put(&b, ",\"inside\":"); cs_put_str(&b, cs_api_name(current)); cs_put(&b, "}\n");
    }
    cs_write_line(line, b.len);
    char msg[512];
    int n = snprintf(msg, sizeof msg, "cudashim: thread %d has been inside %s for %.0f s (CUDASHIM_HANG_TIMEOUT=%g); "
                     "what every thread is doing is in %s\n", stuck->tid, cs_api_name(current), secs, timeout_s,
                     cs_trace_path());
    if (cs_cfg.stderr_on && n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static void *watch(void *arg)
{
    (void)arg;
    double tick = timeout_s / 4 < 1.0 ? timeout_s / 4 : 1.0;
    struct timespec ts = { (time_t)tick, (long)((tick - (double)(time_t)tick) * 1e9) };
    uint64_t timeout_ns = (uint64_t)(timeout_s * 1e9);
    while (atomic_load(&running)) {
        nanosleep(&ts, NULL);
        for (struct cs_thread *t = cs_thread_list(); t; t = t->next) {
            /* When the call started, then the clock: sampled the other way round, a call that
             * began in between looks as if it had run for ever (the difference wraps). */
            uint64_t entered = __atomic_load_n(&t->enter_ts, __ATOMIC_ACQUIRE);
            uint64_t now = cs_ticks();
            if (atomic_load(&t->dead) || !__atomic_load_n(&t->depth, __ATOMIC_RELAXED) ||
                !watched(__atomic_load_n(&t->current, __ATOMIC_RELAXED)))
                continue;
            if (!entered || now < entered || cs_dur_to_ns(now - entered) < timeout_ns) continue;
            if (__atomic_load_n(&t->enter_ts, __ATOMIC_ACQUIRE) != entered) continue;  /* it returned meanwhile */
            /* once per stuck call, then again only after another full timeout */
            if (t->hang_reported && t->hang_reported >= entered &&
                cs_dur_to_ns(now - t->hang_reported) < timeout_ns) continue;
            t->hang_reported = now;
            report(t, now);
        }
    }
    return NULL;
}

void cs_watchdog_start(void)
{
    if (!cs_cfg.hang_timeout || cs_cfg.hang_timeout_s <= 0) return;
    timeout_s = cs_cfg.hang_timeout_s;
    int zero = 0;
    if (!atomic_compare_exchange_strong(&running, &zero, 1)) return;
    if (cs_thread_spawn(&watcher, 0, watch)) atomic_store(&running, 0);
    else pthread_detach(watcher);
}

void cs_watchdog_after_fork(void)
{
    atomic_store(&running, 0);  /* the thread did not survive the fork */
    cs_watchdog_start();
}
