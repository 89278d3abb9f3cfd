/* The shim's locks (locks_table.h): taken and released through these, so that each thread knows
 * which it holds (a fork from a signal handler must not wait for its own thread) and sanitizer
 * builds can check the order. Never on the hot path: failing, key and library calls only. */
#ifndef CS_LOCKS_H
#define CS_LOCKS_H

#include <time.h>

enum cs_lock_id {
#define CS_LOCK(id, kind, file, protects, drop) CS_LOCK_##id,
#include "locks_table.h"
#undef CS_LOCK
    CS_LOCK_COUNT
};

void cs_lock(enum cs_lock_id id);              /* a mutex, or a read-write lock for writing */
void cs_lock_read(enum cs_lock_id id);         /* a read-write lock for reading */
int cs_lock_try(enum cs_lock_id id);           /* 1 when taken */
int cs_lock_timed(enum cs_lock_id id, int ms); /* 1 when taken within ms milliseconds */
void cs_unlock(enum cs_lock_id id);
struct timespec cs_realtime_after_ms(long long ms);  /* the deadline of a timed pthread wait */

/* fork.c's: around a fork, every lock in the table's order: cs_locks_prepare takes all but the
 * last, FENCE, within total_ms in all; the fence's owner (loader/loader_lock.c) takes that one
 * with cs_locks_prepare_one (ms at most; 1 when taken or held by the forking thread itself),
 * since only it knows how long its holder may take. */
void cs_locks_prepare(int total_ms);
int cs_locks_prepare_one(enum cs_lock_id id, int ms);
void cs_locks_parent(void);
void cs_locks_child(unsigned char must_drop[CS_LOCK_COUNT]);

#endif
