/* ALL mode: every call's event goes to the trace's binary companion (NAME.calls, beside the
 * trace), copied raw from its thread's ring in chunks; the cudashim command turns the events
 * into the call lines it prints and exports (docs/trace-format.md says the layout).
 *
 * Nothing is dropped for want of room: a thread whose ring is full writes its own waiting events
 * (one write() per ring's worth of calls) before it records the next one. A writer thread
 * writes what waits in every ring every 100 ms, and the exit path the rest. A ring is written by
 * one of them at a time (its flushing flag); the file takes whole chunks (one write() each, on
 * an O_APPEND descriptor), so chunks of different threads never interleave.
 *
 * Names travel in the file, so that a trace reads the same with any later cudashim: a chunk of
 * events is preceded by the names of the APIs it mentions that no earlier chunk named. A
 * kernel's name is looked up off the program's threads (demangling may load and allocate): a
 * program thread only notes the function, and the writer thread names it in a chunk of its own
 * (the reader takes names from anywhere in the file). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "calls_format.h"
#include "../base/json.h"
#include "../process/locks.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "trace.h"

struct cs_calls_hooks cs_calls_hooks;

static int fd = -1;
static dev_t file_dev;
static ino_t file_ino;
static char file_path[4200];
static int _Atomic state;            /* 0 closed, 2 open, 3 failed or stopped */
static uint64_t _Atomic written_events, lost_events;

/* What has been named in this file: one bit per API; kernels in a small open-addressing set
 * (a function with its low bit set is noted, its name not yet written). */
static uint64_t _Atomic api_named[(CS_API_TOTAL + 63) / 64];
#define KERNEL_SLOTS 16384
static uintptr_t _Atomic kernel_named[KERNEL_SLOTS];

static void forget_names(void)
{
    for (size_t i = 0; i < sizeof api_named / sizeof *api_named; i++) atomic_store(&api_named[i], 0);
    for (size_t i = 0; i < KERNEL_SLOTS; i++) atomic_store(&kernel_named[i], 0);
}

static int high_fd(int f)
{
    int high = fcntl(f, F_DUPFD_CLOEXEC, 100);  /* away from the numbers programs assume are theirs */
    if (high >= 0) { close(f); return high; }
    return f;
}

static int put_file_header(int f)
{
    struct cs_calls_file_header h = { CS_CALLS_MAGIC, CS_CALLS_VERSION, sizeof h, sizeof(struct cs_event), 0 };
    _Static_assert(sizeof(struct cs_event) == CS_CALLS_EVENT_BYTES, "the file's events are the ring's");
    return write(f, &h, sizeof h) == (ssize_t)sizeof h;
}

/* Beside the trace: NAME.jsonl -> NAME.calls (NAME.calls.1 ... when taken). Created once
 * (cs_create_file: never through a link, never an existing file). */
int cs_calls_open(const char *trace_path, char *name, size_t cap)
{
    char base[sizeof file_path - 16];
    size_t n = strlen(trace_path);
    if (n >= sizeof base - 8) return 0;
    memcpy(base, trace_path, n + 1);
    if (n > 6 && !strcmp(base + n - 6, ".jsonl")) base[n - 6] = 0;
    strcat(base, ".calls");
    int f = -1;
    const char *why;
    for (int i = 0; i < 100 && f < 0; i++) {
        if (i) snprintf(file_path, sizeof file_path, "%s.%d", base, i); else snprintf(file_path, sizeof file_path, "%s", base);
        f = cs_create_file(file_path, O_APPEND, &why);
        if (f < 0 && errno != EEXIST) break;
    }
    if (f < 0) { atomic_store(&state, 3); return 0; }
    f = high_fd(f);
    struct stat st;
    if (fstat(f, &st) || !put_file_header(f)) { close(f); atomic_store(&state, 3); return 0; }
    fd = f, file_dev = st.st_dev, file_ino = st.st_ino;
    forget_names();
    atomic_store(&state, 2);
    const char *slash = strrchr(file_path, '/');
    snprintf(name, cap, "%s", slash ? slash + 1 : file_path);
    return 1;
}

/* Once, on stderr: the file stopped taking calls, and why. */
static void say_loss(const char *why)
{
    static int _Atomic said;
    int zero = 0;
    if (!cs_cfg.stderr_on || !atomic_compare_exchange_strong(&said, &zero, 1)) return;
    char msg[4600];
    int n = snprintf(msg, sizeof msg, "cudashim: the calls file %s is incomplete: %s; calls that could not be written "
                     "are counted as dropped in the trace's summary\n", file_path, why);
    (void)!write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

/* Our descriptor still names our file (the program may have closed it and reused the number);
 * else reopen ours by name, or stop. With the CALLS lock held. */
static int still_ours(struct stat *st)
{
    if (fstat(fd, st) == 0 && st->st_dev == file_dev && st->st_ino == file_ino) return 1;
    int f = open(file_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (f >= 0) {
        f = high_fd(f);
        if (fstat(f, st) == 0 && st->st_dev == file_dev && st->st_ino == file_ino) { fd = f; return 1; }
        close(f);
    }
    say_loss("its descriptor was closed and the file is gone or replaced");
    atomic_store(&state, 3);
    return 0;
}

/* CUDASHIM_TRACE_MAX: the file becomes NAME.calls.prev (an older one goes) and a new one starts;
 * names are given again in it. With the CALLS lock held. */
static void rotate(void)
{
    char prev[sizeof file_path + 8];
    snprintf(prev, sizeof prev, "%s.prev", file_path);
    if (rename(file_path, prev)) { atomic_store(&state, 3); return; }
    const char *why;
    int f = cs_create_file(file_path, O_APPEND, &why);
    struct stat st;
    if (f < 0 || fstat(f = high_fd(f), &st) || !put_file_header(f)) {
        if (f >= 0) close(f);
        atomic_store(&state, 3);
        return;
    }
    close(fd);
    fd = f, file_dev = st.st_dev, file_ino = st.st_ino;
    forget_names();
}

/* One chunk: its pieces in one write() under the lock. 0 when it could not be written. */
static int write_chunk(struct iovec *iov, int n, size_t len)
{
    if (atomic_load(&state) != 2) return 0;
    int locked = atomic_load(&cs_crash_active) ? cs_lock_try(CS_LOCK_CALLS) : (cs_lock(CS_LOCK_CALLS), 1);
    int ok = 0;
    struct stat st;
    if (atomic_load(&state) == 2 && still_ours(&st)) {
        struct rlimit rl;  /* crossing a file-size limit would send SIGXFSZ, which kills the program */
        if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (uint64_t)st.st_size + len > (uint64_t)rl.rlim_cur) {
            say_loss("the file-size limit (ulimit -f) is reached");
            atomic_store(&state, 3);
        } else {
            if (locked && cs_cfg.trace_max && (uint64_t)st.st_size + len > cs_cfg.trace_max &&
                (uint64_t)st.st_size > sizeof(struct cs_calls_file_header) && !atomic_load(&cs_crash_active))
                rotate();
            ssize_t w;
            do w = writev(fd, iov, n); while (w < 0 && errno == EINTR);
            ok = w == (ssize_t)len;
            if (!ok) {  /* a short write leaves a cut chunk: readers stop there */
                char why[160];
                snprintf(why, sizeof why, "a write failed (%s)", w < 0 ? strerror(errno) : "short write");
                say_loss(why);
                atomic_store(&state, 3);
            }
        }
    }
    if (locked) cs_unlock(CS_LOCK_CALLS);
    return ok;
}

static void put_kernel(struct cs_buf *b, uintptr_t k, const char *name)
{
    cs_put(b, "k\t"); cs_put_hex(b, k); cs_put(b, "\t");
    for (const char *p = name; *p; p++) cs_putn(b, (*p == '\n' || *p == '\t') ? " " : p, 1);
    cs_put(b, "\n");
}

/* A kernel's name, when it may be asked for here and it is known. */
static int kernel_name(uintptr_t k, int may_name, char *name, size_t cap)
{
    return may_name && !atomic_load(&cs_crash_active) && cs_calls_hooks.kernel_name &&
           cs_calls_hooks.kernel_name((void *)k, name, cap);
}

/* The names the events need that this file has not had yet. */
static size_t new_names(const struct cs_event *evs, size_t n, int may_name, char *out, size_t cap)
{
    struct cs_buf b = { out, 0, cap };
    for (size_t i = 0; i < n && b.len + 1200 < cap; i++) {
        const struct cs_event *ev = &evs[i];
        unsigned a = ev->api;
        uint64_t bit = 1ull << (a % 64);
        if (a < CS_API_TOTAL && !(atomic_fetch_or(&api_named[a / 64], bit) & bit)) {
            struct cs_api *api = cs_api_of((int)a);
            cs_put(&b, "a\t"); cs_put_u64(&b, a); cs_put(&b, "\t"); cs_put(&b, api ? api->name : "?");
            cs_put(&b, "\t"); cs_put(&b, cs_api_name((int)a)); cs_put(&b, "\n");
        }
        if (ev->kind != CS_LAUNCH_KERNEL || !ev->arg || (ev->arg & 1)) continue;
        uintptr_t k = (uintptr_t)ev->arg;
        for (unsigned s = (unsigned)((k >> 4) % KERNEL_SLOTS), tries = 0; tries < 64; s = (s + 1) % KERNEL_SLOTS, tries++) {
            uintptr_t cur = atomic_load(&kernel_named[s]);
            if (cur == k) break;
            char name[512];
            if (cur == (k | 1)) {  /* noted earlier: named now if it can be */
                if (kernel_name(k, may_name, name, sizeof name) && atomic_compare_exchange_strong(&kernel_named[s], &cur, k))
                    put_kernel(&b, k, name);
                break;
            }
            if (cur) continue;
            int named = kernel_name(k, may_name, name, sizeof name);
            if (!atomic_compare_exchange_strong(&kernel_named[s], &cur, named ? k : k | 1)) {
                if ((cur & ~(uintptr_t)1) == k) break;
                continue;
            }
            if (named) put_kernel(&b, k, name);
            break;
        }
    }
    return b.len;
}

/* The writer thread: the kernels program threads noted, named (one chunk). */
static void name_noted(void)
{
    static char buf[1 << 16];
    struct cs_buf b = { buf, 0, sizeof buf };
    for (size_t s = 0; s < KERNEL_SLOTS && b.len + 600 < sizeof buf; s++) {
        uintptr_t cur = atomic_load(&kernel_named[s]);
        char name[512];
        if (!(cur & 1) || !kernel_name(cur & ~(uintptr_t)1, 1, name, sizeof name)) continue;
        if (atomic_compare_exchange_strong(&kernel_named[s], &cur, cur & ~(uintptr_t)1)) put_kernel(&b, cur & ~(uintptr_t)1, name);
    }
    if (!b.len) return;
    struct cs_calls_chunk h = { CS_CALLS_NAMES, 0, 0, (uint32_t)b.len, 0, 0, 0, 0 };
    struct iovec iov[2] = { { &h, sizeof h }, { buf, b.len } };
    write_chunk(iov, 2, sizeof h + b.len);
}

/* Write t's waiting events (may_name: kernel names may be looked up here). Events a line of the
 * trace already holds (failing and key calls) are left out. Another writer of the same ring is
 * waited for when wait is set, else it is left to finish. 1 when the ring has room afterwards. */
#define CHUNK_EVENTS 1024
struct flush_buf { char names[1 << 16]; struct cs_event ev[CHUNK_EVENTS]; };

static int flush(struct cs_thread *t, int wait, int may_name)
{
    int zero = 0;
    while (!atomic_compare_exchange_weak(&t->flushing, &zero, 1)) {
        zero = 0;
        if (!wait) return 0;
        sched_yield();
    }
    int e = errno;
    struct cs_ring *r = t->ring;
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    struct flush_buf *fb = t->flush_buf;
    if (!fb) {  /* made here, not at thread start: only threads whose rings are written need one */
        void *p = mmap(NULL, sizeof *fb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        t->flush_buf = fb = p == MAP_FAILED ? NULL : p;
    }
    while (fb && tail < head) {
        size_t n = 0;
        uint64_t i = tail;
        for (; i < head && n < CHUNK_EVENTS; i++) {
            const struct cs_event *ev = &r->ev[i & r->mask];
            if (!(ev->flags & (CS_EV_WRITTEN | CS_EV_PENDING))) fb->ev[n++] = *ev;
        }
        size_t nl = new_names(fb->ev, n, may_name, fb->names, sizeof fb->names);
        uint64_t ticks0, ns0;
        double rate;
        cs_clock_mapping(&ticks0, &ns0, &rate);
        struct cs_calls_chunk names_h = { CS_CALLS_NAMES, (uint32_t)t->tid, 0, (uint32_t)nl, 0, 0, 0, 0 };
        struct cs_calls_chunk ev_h = { CS_CALLS_EVENTS, (uint32_t)t->tid, (uint32_t)n,
                                       (uint32_t)(n * sizeof(struct cs_event)), 0, ticks0, ns0, rate };
        struct iovec iov[4];
        int k = 0;
        size_t len = 0;
        if (nl) {
            iov[k++] = (struct iovec){ &names_h, sizeof names_h };
            iov[k++] = (struct iovec){ fb->names, nl };
            len += sizeof names_h + nl;
        }
        if (n) {
            iov[k++] = (struct iovec){ &ev_h, sizeof ev_h };
            iov[k++] = (struct iovec){ fb->ev, ev_h.bytes };
            len += sizeof ev_h + ev_h.bytes;
        }
        if (k && !write_chunk(iov, k, len)) break;
        atomic_fetch_add(&written_events, n);
        tail = i;
    }
    if (tail < head) {  /* the file failed: what it could not take is counted as dropped */
        atomic_fetch_add(&lost_events, head - tail);
        t->dropped += head - tail;
        tail = head;
    }
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    atomic_store(&t->flushing, 0);
    errno = e;
    return 1;
}

/* The ring of the calling thread is full: make room by writing it (never dropping while the file
 * takes what it is given). */
int cs_calls_make_room(struct cs_thread *t)
{
    if (atomic_load(&state) == 0 && cs_calls_hooks.open_trace) cs_calls_hooks.open_trace();
    if (atomic_load(&state) != 2) return 0;
    return flush(t, 1, 0);
}

/* The writer thread, the exit path (wait) and the crash handler: every ring's waiting events. */
void cs_calls_flush_all(int wait)
{
    if (atomic_load(&state) != 2) return;
    for (struct cs_thread *t = cs_thread_list(); t; t = t->next)
        if (atomic_load_explicit(&t->ring->tail, memory_order_relaxed) !=
            atomic_load_explicit(&t->head, memory_order_acquire))
            flush(t, wait, 1);
    if (!atomic_load(&cs_crash_active)) name_noted();
}

int cs_calls_open_ok(void) { return atomic_load(&state) == 2; }
uint64_t cs_calls_lost(void) { return atomic_load(&lost_events); }

void cs_calls_after_fork(void)
{
    if (fd >= 0) close(fd);
    fd = -1;
    file_path[0] = 0;
    atomic_store(&state, 0);
    atomic_store(&written_events, 0), atomic_store(&lost_events, 0);
}
