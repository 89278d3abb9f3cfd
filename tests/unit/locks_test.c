/* The fork handlers' lock bookkeeping (shim/process/locks.c) when forks overlap: two threads
 * forking at once, and a fork from a signal handler inside this thread's own fork handlers. After
 * every fork's parent handler, every lock is free again and a thread's first lock does not wait. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../shim/process/locks.h"

#define FORK_WAIT_MS 50

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void prepare(void)
{
    cs_locks_prepare(FORK_WAIT_MS);
    cs_locks_prepare_one(CS_LOCK_FENCE, FORK_WAIT_MS);
}

/* Every lock can be taken by another thread, at once. */
static void *try_all(void *arg)
{
    int *free_count = arg;
    for (int id = 0; id < CS_LOCK_COUNT; id++)
        if (cs_lock_try(id)) { (*free_count)++; cs_unlock(id); }
    return NULL;
}

static int free_locks(void)
{
    int n = 0;
    pthread_t t;
    pthread_create(&t, NULL, try_all, &n);
    pthread_join(t, NULL);
    return n;
}

static pthread_barrier_t a_holds, b_done;

/* The second fork: it starts while the first holds every lock, runs out of time for each and
 * goes on (its child drops what they protect), and its parent handler runs first. */
static void *second_fork(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&a_holds);
    prepare();
    cs_locks_parent();
    pthread_barrier_wait(&b_done);
    return NULL;
}

static void two_forks_at_once(void)
{
    pthread_barrier_init(&a_holds, NULL, 2);
    pthread_barrier_init(&b_done, NULL, 2);
    pthread_t b;
    pthread_create(&b, NULL, second_fork, NULL);
    prepare();
    pthread_barrier_wait(&a_holds);
    pthread_barrier_wait(&b_done);
    cs_locks_parent();
    pthread_join(b, NULL);
    CHECK(free_locks() == CS_LOCK_COUNT, "two forks at once: %d of %d locks free after both", free_locks(), CS_LOCK_COUNT);
    double t0 = now_ms();
    if (cs_lock_timed(CS_LOCK_SCAN, 200)) cs_unlock(CS_LOCK_SCAN);
    CHECK(now_ms() - t0 < 40, "a first lock after both forks waited %.0f ms", now_ms() - t0);
}

/* A signal handler forks while this thread is inside its own prepare handler's work: the inner
 * fork waits for nothing (the locks are this thread's) and releases nothing. */
static void fork_inside_fork_handlers(void)
{
    prepare();
    double t0 = now_ms();
    prepare();
    CHECK(now_ms() - t0 < FORK_WAIT_MS / 2, "the inner fork waited %.0f ms for its own thread", now_ms() - t0);
    cs_locks_parent();
    CHECK(free_locks() == 0, "the inner fork released the outer's locks: %d free", free_locks());
    cs_locks_parent();
    CHECK(free_locks() == CS_LOCK_COUNT, "after both: %d of %d locks free", free_locks(), CS_LOCK_COUNT);
}

/* The inner fork's child, resuming in the outer fork's handlers: the outer's data is whole, and
 * its parent handler, run in that child, releases nothing twice. */
static void child_of_inner_fork(void)
{
    unsigned char must_drop[CS_LOCK_COUNT];
    prepare();
    prepare();
    cs_locks_child(must_drop);
    for (int id = 0; id < CS_LOCK_COUNT; id++) CHECK(!must_drop[id], "lock %d dropped in the inner child", id);
    CHECK(free_locks() == CS_LOCK_COUNT, "inner child: %d of %d locks free", free_locks(), CS_LOCK_COUNT);
    cs_locks_parent();  /* the outer fork, resumed in that child */
    CHECK(free_locks() == CS_LOCK_COUNT, "after the outer's parent handler: %d of %d free", free_locks(), CS_LOCK_COUNT);
    double t0 = now_ms();
    if (cs_lock_timed(CS_LOCK_SCAN, 200)) cs_unlock(CS_LOCK_SCAN);
    CHECK(now_ms() - t0 < 40, "a first lock waited %.0f ms", now_ms() - t0);
}

int main(void)
{
    two_forks_at_once();
    fork_inside_fork_handlers();
    child_of_inner_fork();
    if (failures) return 1;
    printf("locks_test: ok\n");
    return 0;
}
