/* What a fork does with the shim: one set of handlers, registered when the shim is loaded. The
 * prepare handler takes every lock of locks_table.h in its order, waiting 250 ms at most in all,
 * so a child inherits them free and what they protect whole. The child makes anew what threads
 * that did not come along were doing (the scanner, the writer, the watchdog, a start under way),
 * drops what a lock it could not take protected, and starts its own trace. docs/HACKING.md
 * ("Fork") lists each lock and each other piece of shared state, and what the child does. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>

#include "../process/locks.h"
#include "../process/process.h"
#include "../loader/loader.h"
#include "../trace/findings.h"
#include "../evidence/inventory.h"
#include "../diagnose/diagnose.h"
#include "../hooks/devcode.h"
#include "../hooks/hooks_libs.h"
#include "lifecycle.h"

/* Long enough for any holder that is not waiting on the forking thread (a scan, a rule, a write
 * to a slow disk); short enough that a fork the holder waits on (a fork inside a dlopen the
 * scanner waits for) costs a quarter of a second, once. */
#define FORK_WAIT_MS 250

static void (*const drop[CS_LOCK_COUNT])(void) = {
#define CS_LOCK(id, kind, file, protects, drop_fn) [CS_LOCK_##id] = drop_fn,
#include "../process/locks_table.h"
#undef CS_LOCK
};

static void prepare(void)
{
    cs_locks_prepare(FORK_WAIT_MS);
    cs_loader_fence_prepare();
}
static void parent(void) { cs_locks_parent(); }

static void child(void)
{
    unsigned char must_drop[CS_LOCK_COUNT];
    cs_locks_child(must_drop);
    for (int id = 0; id < CS_LOCK_COUNT; id++)
        if (must_drop[id] && drop[id]) drop[id]();
    cs_loader_after_fork();
    cs_scanner_after_fork();
    cs_init_after_fork();
}

__attribute__((constructor)) static void fork_handlers(void)
{
    if (!cs_env_disabled()) pthread_atfork(prepare, parent, child);
}
