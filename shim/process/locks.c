/* The shim's locks, one table (locks_table.h), and what a fork does with them. Each thread counts
 * the locks it holds: a fork from a signal handler that interrupted the shim must not wait for
 * its own thread, and a lock the child made anew must not be released again by the code the
 * signal interrupted, when it resumes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "locks.h"

enum { MUTEX, RWLOCK };
static const struct { int kind; const char *name; } table[CS_LOCK_COUNT] = {
#define CS_LOCK(id, kind, file, protects, drop) [CS_LOCK_##id] = { kind, #id },
#include "locks_table.h"
#undef CS_LOCK
};

static struct { pthread_mutex_t m; pthread_rwlock_t rw; } lock_objects[CS_LOCK_COUNT] = {
    [0 ... CS_LOCK_COUNT - 1] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_RWLOCK_INITIALIZER }
};

/* count: this thread's holds. stale: holds from before a fork in a signal handler, of a lock the
 * child made anew; their releases (the interrupted code resuming) release nothing. */
static __thread struct { uint8_t count, stale; } held[CS_LOCK_COUNT] __attribute__((tls_model("initial-exec")));

/* Forks under way, in every thread. While one is, a thread that holds no lock waits (a bounded
 * time) before taking its first, so that a steady stream of readers (failing calls on several
 * threads take the inventory's lock for reading) cannot keep a fork from its write lock; a thread
 * that already holds one goes on, to release it. */
static uint32_t _Atomic forking;
static void wait_for_fork(void)
{
    if (!atomic_load_explicit(&forking, memory_order_acquire)) return;
    for (int j = 0; j < CS_LOCK_COUNT; j++)
        if (held[j].count) return;
    struct timespec slice = { 0, 50000000 };
    for (int i = 0; i < 10 && atomic_load(&forking); i++)
        syscall(SYS_futex, &forking, FUTEX_WAIT_PRIVATE, 1, &slice, NULL, 0);
}

/* A lock below one already held (table order): a fork could wait for this thread while it waits
 * for the fork (until its time runs out). Sanitizer builds stop there, so the suite finds it. */
static void check_order(enum cs_lock_id id)
{
    wait_for_fork();
#ifdef CS_LOCK_ORDER_CHECK
    if (held[id].count) return;  /* again, for reading */
    for (int j = id + 1; j < CS_LOCK_COUNT; j++)
        if (held[j].count) {
            char msg[160];
            int n = snprintf(msg, sizeof msg, "cudashim: lock %s taken while holding %s (locks_table.h order)\n",
                             table[id].name, table[j].name);
            (void)!write(2, msg, (size_t)n);
            abort();
        }
#else
    (void)id;
#endif
}

static void release(enum cs_lock_id id)
{
    if (table[id].kind == MUTEX) pthread_mutex_unlock(&lock_objects[id].m);
    else pthread_rwlock_unlock(&lock_objects[id].rw);
}

void cs_lock(enum cs_lock_id id)
{
    check_order(id);
    if (table[id].kind == MUTEX) pthread_mutex_lock(&lock_objects[id].m);
    else pthread_rwlock_wrlock(&lock_objects[id].rw);
    held[id].count++;
}

void cs_lock_read(enum cs_lock_id id)
{
    check_order(id);
    pthread_rwlock_rdlock(&lock_objects[id].rw);
    held[id].count++;
}

int cs_lock_try(enum cs_lock_id id)
{
    int ok = table[id].kind == MUTEX ? !pthread_mutex_trylock(&lock_objects[id].m) : !pthread_rwlock_trywrlock(&lock_objects[id].rw);
    if (ok) held[id].count++;
    return ok;
}

/* CLOCK_REALTIME ms from now: the deadline the timed pthread waits take. */
struct timespec cs_realtime_after_ms(long long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    t.tv_sec += (time_t)(ms / 1000) + t.tv_nsec / 1000000000L, t.tv_nsec %= 1000000000L;
    return t;
}

static int take_until(enum cs_lock_id id, const struct timespec *until)
{
    return table[id].kind == MUTEX ? !pthread_mutex_timedlock(&lock_objects[id].m, until)
                                   : !pthread_rwlock_timedwrlock(&lock_objects[id].rw, until);
}

int cs_lock_timed(enum cs_lock_id id, int ms)
{
    check_order(id);
    struct timespec until = cs_realtime_after_ms(ms);
    int ok = take_until(id, &until);
    if (ok) held[id].count++;
    return ok;
}

void cs_unlock(enum cs_lock_id id)
{
    if (!held[id].count) {
        if (held[id].stale) held[id].stale--;
        return;
    }
    held[id].count--;
    release(id);
}

/* --- fork: the prepare handler takes every lock, in order, within total_ms in all ------------ */

/* What this thread's fork took, to release in its parent handler. Per thread: two threads may
 * fork at once (two subprocess calls, or a timer's signal on two threads), and glibc runs their
 * handlers side by side; one's lock taken by the other, or a wait for it that ran out, is no
 * business of the first's release. depth: this thread's forks under way, more than one when a
 * signal handler forked inside its own fork handlers; the inner fork takes nothing, the outer's
 * locks being this thread's already. */
static __thread uint8_t fork_took[CS_LOCK_COUNT] __attribute__((tls_model("initial-exec")));
static __thread int fork_depth __attribute__((tls_model("initial-exec")));

_Static_assert(CS_LOCK_FENCE == CS_LOCK_COUNT - 1, "the fence is the last lock, waited for apart");

void cs_locks_prepare(int total_ms)
{
    atomic_fetch_add(&forking, 1);
    if (fork_depth++) return;
    struct timespec until = cs_realtime_after_ms(total_ms);
    for (int id = 0; id < CS_LOCK_FENCE; id++)  /* past the time, each is still tried once */
        fork_took[id] = !held[id].count && take_until(id, &until);
}

int cs_locks_prepare_one(enum cs_lock_id id, int ms)
{
    if (held[id].count || fork_depth > 1) return 1;  /* the forking thread's own: nothing to wait for */
    struct timespec until = cs_realtime_after_ms(ms);
    fork_took[id] = take_until(id, &until);
    return fork_took[id];
}

void cs_locks_parent(void)
{
    if (fork_depth == 1)
        for (int id = 0; id < CS_LOCK_COUNT; id++) {
            if (!fork_took[id]) continue;
            fork_took[id] = 0;
            release(id);
        }
    if (fork_depth > 0) fork_depth--;
    if (atomic_fetch_sub(&forking, 1) == 1)
        syscall(SYS_futex, &forking, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
}

static void make_anew(int id)
{
    if (table[id].kind == MUTEX) pthread_mutex_init(&lock_objects[id].m, NULL);
    else pthread_rwlock_init(&lock_objects[id].rw, NULL);
}

/* In the child, only the forking thread lives, and every lock is made anew, free. One fork took
 * protects whole data. One this thread held (a fork from a signal handler) is free for the
 * handler's own use in the child (its exit, say), and the interrupted code's releases, if the
 * handler returns, release nothing; its data is as the interrupted code left it, which finishes
 * it if the handler returns. One another thread held, or that fork could not take in time, may
 * protect half-written data: must_drop[id] says so. */
void cs_locks_child(unsigned char must_drop[CS_LOCK_COUNT])
{
    /* a child of an inner fork resumes, if its handler returns, inside the outer fork's handlers:
     * they see the outer fork under way, with nothing of its own to release */
    fork_depth = fork_depth > 1 ? fork_depth - 1 : 0;
    atomic_store(&forking, (uint32_t)fork_depth);
    for (int id = 0; id < CS_LOCK_COUNT; id++) {
        must_drop[id] = !fork_took[id] && !held[id].count;
        fork_took[id] = 0;
        held[id].stale += held[id].count;
        held[id].count = 0;
        make_anew(id);
    }
}
