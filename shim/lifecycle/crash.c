/* Crash capture: on a fatal signal, write one "crash" line (backtrace, the call the thread was
 * inside, the last calls of every thread), then let the process die exactly as it would have:
 * the previous handler runs, or the default action with the same signal and a core dump.
 *
 * Everything the handler touches is preallocated when the shim wakes: the alternate stacks,
 * the /proc/self/maps buffer, the output line. The handler uses only system calls, string
 * copies, and libunwind's local unwinder (loaded with dlopen, never a DT_NEEDED, because a
 * preload with a missing dependency stops every program from starting). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <setjmp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../base/json.h"
#include "../base/library_names.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/trace.h"
#include "lifecycle.h"

#define MAX_FRAMES 64
#define RECENT_SELF 16
#define RECENT_OTHER 8
#define MAX_OTHER_THREADS 16
#define ALT_STACK_SIZE (256 * 1024)
#define MAPS_CAP (16u << 20)
#define LINE_CAP (256 * 1024)

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NSIG_HANDLED (int)(sizeof fatal_signals / sizeof *fatal_signals)
/* The disposition the program has for each signal, as it would see it without the shim: what
 * was there when the shim installed its handler, then what the program set since (signal_hook.c
 * keeps it here while the shim's handler is installed: owned). */
static struct sigaction previous[NSIG_HANDLED];
static int _Atomic owned[NSIG_HANDLED];
static int _Atomic installed;
static char *maps_buf, *line_buf;
static char self_path[4096];
static int _Atomic crash_owner;     /* tid of the thread writing a crash record, 0 when none */
static int _Atomic records_written;
static __thread int in_handler __attribute__((tls_model("initial-exec")));

/* libunwind's local-only entry points, looked up by name: the opaque types are sized generously
 * (unw_cursor_t is 127 words on x86-64) so its headers are not needed to build. */
typedef struct { uint64_t opaque[160]; } unw_cursor_buf;
static int (*unw_init_local2_fn)(unw_cursor_buf *, ucontext_t *, int);
static int (*unw_step_fn)(unw_cursor_buf *);
static int (*unw_get_reg_fn)(unw_cursor_buf *, int, uint64_t *);
static int (*unw_get_proc_name_fn)(unw_cursor_buf *, char *, size_t, uint64_t *);
enum { UNW_REG_IP = 16, UNW_INIT_SIGNAL_FRAME = 1 };

/* CPython's own dumper, the one faulthandler calls from its signal handler: every thread's
 * Python stack ("File "train.py", line 42 in step"), exported by libpython and by python
 * executables. Found when the shim prepares (never in the handler). */
typedef const char *(*py_dump_fn)(int fd, void *interp, void *tstate);
static py_dump_fn py_dump;
static int is_python;  /* the process is CPython, dumper or not */

/* CPython 3.13 exports no dumper: its frames are walked here, as faulthandler walks them, from
 * the thread state's current frame through each frame's previous one; the line from the
 * interpreter's own PyUnstable_InterpreterFrame_GetLine. The offsets are 3.13's (x86-64, the
 * default build), read from its headers (Include/cpython/pystate.h, internal/pycore_frame.h,
 * cpython/code.h); used only when Py_Version says 3.13. */
enum { PY313_TSTATE_FRAME = 72, PY313_FRAME_PREVIOUS = 8, PY313_FRAME_OWNER = 70, PY313_FRAME_CODE = 0,
       PY313_CODE_FILENAME = 112, PY313_CODE_NAME = 120, PY313_OWNED_BY_CSTACK = 3 };
static struct {
    void *(*this_tstate)(void);
    void *(*main_interp)(void);
    void *(*thread_head)(void *);
    int (*frame_line)(void *);
    const void *code_type;
} py313;
static char py_text[32768];
/* A fault inside the dumper (an interpreter half torn down) returns here, not to the kill. */
static sigjmp_buf py_guard;
static int _Atomic py_guarded;

static int index_of(int sig)
{
    for (int i = 0; i < NSIG_HANDLED; i++)
        if (fatal_signals[i] == sig) return i;
    return -1;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    }
    return "signal";
}

static const char *code_name(int sig, int code)
{
    if (code <= 0) return code == SI_TKILL ? "SI_TKILL" : code == SI_USER ? "SI_USER" : "SI_QUEUE";
    if (sig == SIGSEGV) return code == SEGV_MAPERR ? "SEGV_MAPERR" : code == SEGV_ACCERR ? "SEGV_ACCERR" : "SEGV_OTHER";
    if (sig == SIGBUS) return code == BUS_ADRALN ? "BUS_ADRALN" : code == BUS_ADRERR ? "BUS_ADRERR" : "BUS_OTHER";
    if (sig == SIGFPE) return code == FPE_INTDIV ? "FPE_INTDIV" : "FPE_OTHER";
    if (sig == SIGILL) return code == ILL_ILLOPN ? "ILL_ILLOPN" : "ILL_OTHER";
    return "OTHER";
}

/* --- the library an address belongs to, from a snapshot of /proc/self/maps --------------- */

static size_t maps_len;

static void maps_snapshot(void)
{
    maps_len = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n;
    while (maps_len < MAPS_CAP - 1 && (n = read(fd, maps_buf + maps_len, MAPS_CAP - 1 - maps_len)) > 0)
        maps_len += (size_t)n;
    close(fd);
    maps_buf[maps_len] = 0;
}

static uint64_t parse_hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        if (c >= '0' && c <= '9') v = v * 16 + (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v = v * 16 + (uint64_t)(c - 'a' + 10);
        else return v;
    }
}

/* Path (into maps_buf, not terminated: *len) and file offset of pc; 0 when unmapped. */
static int maps_lookup(uint64_t pc, const char **path, size_t *len, uint64_t *offset)
{
    for (const char *l = maps_buf; l < maps_buf + maps_len && *l;) {
        const char *end = memchr(l, '\n', (size_t)(maps_buf + maps_len - l));
        if (!end) end = maps_buf + maps_len;
        const char *s = l;
        uint64_t lo = parse_hex(&s);
        s++;
        uint64_t hi = parse_hex(&s);
        if (pc >= lo && pc < hi) {
            s += 6;  /* " rwxp " */
            uint64_t off = parse_hex(&s);
            const char *p = s;
            for (int field = 0; field < 2 && p < end; field++) {  /* dev, inode */
                while (p < end && *p == ' ') p++;
                while (p < end && *p != ' ') p++;
            }
            while (p < end && *p == ' ') p++;
            *path = p;
            *len = (size_t)(end - p);
            *offset = pc - lo + off;
            return 1;
        }
        l = end + 1;
    }
    return 0;
}

static int is_cuda_library(const char *path, size_t len)
{
    const char *base = path;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/') base = path + i + 1;
    return cs_is_cuda_library_name(base, len - (size_t)(base - path));
}

/* --- the record ------------------------------------------------------------------------- */

/* The exported function that holds pc (the object's dynamic symbols, read in memory: no file,
 * no lock), when no unwinder named it. */
static const char *symbol_of(uint64_t pc, uint64_t *off)
{
    const struct link_map *m = cs_lm_of_addr((void *)pc);
    return m ? cs_elf_function_at(m, (void *)pc, off) : NULL;
}

static void put_frame(struct cs_buf *b, int i, uint64_t pc, const char *sym, uint64_t sym_off)
{
    if (!sym || !*sym) sym = symbol_of(i ? pc - 1 : pc, &sym_off), sym_off += i ? 1 : 0;
    const char *path;
    size_t plen;
    uint64_t off;
    if (i) cs_put(b, ",");
    cs_put(b, "{\"pc\":"); cs_put_hex(b, pc);
    if (maps_lookup(pc, &path, &plen, &off) && plen) {
        char tmp[1024];
        size_t n = plen < sizeof tmp - 1 ? plen : sizeof tmp - 1;
        memcpy(tmp, path, n);
        tmp[n] = 0;
        cs_put(b, ",\"lib\":"); cs_put_str(b, tmp);
        cs_put(b, ",\"offset\":"); cs_put_hex(b, off);
        if (is_cuda_library(path, plen)) cs_put(b, ",\"cuda_lib\":true");
        if (!strcmp(tmp, self_path)) cs_put(b, ",\"cudashim\":true");
    }
    if (sym && *sym) {
        cs_put(b, ",\"symbol\":"); cs_put_str(b, sym);
        cs_put(b, ",\"symbol_offset\":"); cs_put_u64(b, sym_off);
    }
    cs_put(b, "}");
}

static int put_backtrace(struct cs_buf *b, ucontext_t *uc)
{
    int n = 0;
    if (unw_init_local2_fn) {
        static unw_cursor_buf cursor;  /* one crash at a time: crash_owner serialises */
        if (unw_init_local2_fn(&cursor, uc, UNW_INIT_SIGNAL_FRAME) == 0) {
            do {
                uint64_t ip = 0, off = 0;
                char name[512];
                if (unw_get_reg_fn(&cursor, UNW_REG_IP, &ip) < 0 || !ip) break;
                name[0] = 0;
                if (unw_get_proc_name_fn(&cursor, name, sizeof name, &off) < 0) name[0] = 0;
                put_frame(b, n, ip, name, off);
            } while (++n < MAX_FRAMES && unw_step_fn(&cursor) > 0);
            return n;
        }
    }
    /* Fallback: glibc's unwinder (warmed up at install, so it does not load libgcc_s here).
     * It starts inside this handler, so begin at the interrupted pc. */
    void *pcs[MAX_FRAMES];
    int got = backtrace(pcs, MAX_FRAMES);
#if defined(__x86_64__)
    uint64_t fault_pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    uint64_t fault_pc = (uint64_t)uc->uc_mcontext.pc;
#else
    uint64_t fault_pc = 0;
#endif
    int start = 0;
    for (int i = 0; i < got; i++)
        if ((uint64_t)pcs[i] == fault_pc) { start = i; break; }
    if (!start && fault_pc) put_frame(b, n++, fault_pc, NULL, 0);
    for (int i = start; i < got && n < MAX_FRAMES; i++) put_frame(b, n++, (uint64_t)pcs[i], NULL, 0);
    return n;
}

static void put_recent(struct cs_buf *b, struct cs_thread *t, int max)
{
    struct cs_ring *r = t->ring;
    uint64_t h = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t n = h < (uint64_t)max ? h : (uint64_t)max;
    if (n > r->mask + 1) n = r->mask + 1;
    cs_put(b, "{\"tid\":"); cs_put_u64(b, (uint64_t)t->tid);
    if (__atomic_load_n(&t->depth, __ATOMIC_RELAXED))
        { cs_put(b, ",\"inside\":"); cs_put_str(b, cs_api_name(__atomic_load_n(&t->current, __ATOMIC_RELAXED))); }
    cs_put(b, ",\"calls\":[");
    for (uint64_t i = h - n; i < h; i++) {
        const struct cs_event *ev = &r->ev[i & r->mask];
        struct cs_api *api = cs_api_of(ev->api);
        if (i != h - n) cs_put(b, ",");
        cs_put(b, "{\"api\":"); cs_put_str(b, cs_api_name(ev->api));
        cs_put(b, ",\"result\":"); cs_put_i64(b, ev->result);
        const char *rn = api && api->result_name ? api->result_name(ev->result) : NULL;
        if (ev->result && rn) { cs_put(b, ",\"result_name\":"); cs_put_str(b, rn); }
        cs_put(b, ",\"ts_ns\":"); cs_put_u64(b, cs_ticks_to_ns(ev->ts));
        cs_put(b, "}");
    }
    cs_put(b, "]}");
}

/* A str as the record can hold it: a compact ASCII string's characters (PyASCIIObject: length
 * at 16, state at 32 with compact bit 5 and ascii bit 6, characters at 40), else "?". */
static const char *py_ascii(const char *o, char *out, size_t cap)
{
    if (!o) return "?";
    uint32_t state = *(const uint32_t *)(o + 32);
    long len = *(const long *)(o + 16);
    if (!(state & (1u << 5)) || !(state & (1u << 6)) || len < 0) return "?";
    size_t n = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
    memcpy(out, o + 40, n);
    out[n] = 0;
    return out;
}

/* Each writes the Python stacks into py_text, and returns NULL or why it could not. */
static const char *walk_py313(void)
{
    char *ts = py313.this_tstate();
    const char *which = "Current thread";
    if (!ts && py313.main_interp && py313.thread_head) {  /* a thread Python does not know: its main thread */
        void *interp = py313.main_interp();
        ts = interp ? py313.thread_head(interp) : NULL;
        which = "Main thread";
    }
    if (!ts) return "no Python thread state";
    char file[512], name[256], one[900];
    struct cs_buf t = { py_text, 0, sizeof py_text - 1 };
    cs_put(&t, which), cs_put(&t, " (most recent call first):\n");
    char *frame = *(char **)(ts + PY313_TSTATE_FRAME);
    for (int n = 0; frame && n < 100; n++, frame = *(char **)(frame + PY313_FRAME_PREVIOUS)) {
        if (*(unsigned char *)(frame + PY313_FRAME_OWNER) == PY313_OWNED_BY_CSTACK) continue;
        const char *code = *(char **)(frame + PY313_FRAME_CODE);
        if (!code || *(const void *const *)(code + 8) != py313.code_type) continue;  /* not a code object */
        snprintf(one, sizeof one, "  File \"%s\", line %d in %s\n",
                 py_ascii(*(char **)(code + PY313_CODE_FILENAME), file, sizeof file), py313.frame_line(frame),
                 py_ascii(*(char **)(code + PY313_CODE_NAME), name, sizeof name));
        cs_put(&t, one);
    }
    py_text[t.len] = 0;
    return NULL;
}

/* The interpreter's own dumper writes into a memory file (py_fd), read back. */
static int py_fd = -1;
static const char *use_dumper(void)
{
    if ((py_fd = (int)syscall(SYS_memfd_create, "cudashim-python", 1u /* MFD_CLOEXEC */)) < 0) return "no memory file";
    const char *err = py_dump(py_fd, NULL, NULL);
    ssize_t got = lseek(py_fd, 0, SEEK_SET) == 0 ? read(py_fd, py_text, sizeof py_text - 1) : -1;
    if (got <= 0) return err ? err : "the interpreter's dumper wrote nothing";
    py_text[got] = 0;
    return NULL;
}

/* The Python stacks, when the process is CPython: its own dumper where it exports one, else (3.13)
 * the frames walked here; a fault in either comes back to the guard. */
static void put_python(struct cs_buf *b)
{
    const char *(*how)(void) = py_dump ? use_dumper : py313.this_tstate ? walk_py313 : NULL;
    if (!how) {
        if (is_python)
            cs_put(b, ",\"python_error\":\"this CPython exports no traceback dumper: its lines are not in the record; "
                      "PYTHONFAULTHANDLER=1 prints them on stderr\"");
        return;
    }
    const char *volatile err;  /* volatile: kept across the guard's siglongjmp */
    if (!sigsetjmp(py_guard, 1)) {
        atomic_store(&py_guarded, 1);
        err = how();
    } else {
        err = "reading the interpreter's stacks faulted";
    }
    atomic_store(&py_guarded, 0);
    if (py_fd >= 0) close(py_fd), py_fd = -1;
    if (err) { cs_put(b, ",\"python_error\":"); cs_put_str(b, err); }
    else { cs_put(b, ",\"python\":"); cs_put_str(b, py_text); }
}

static void write_record(int sig, siginfo_t *info, ucontext_t *uc)
{
    struct cs_buf b = { line_buf, 0, LINE_CAP - 2 };
    struct cs_thread *self = cs_self();
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    maps_snapshot();
    cs_put(&b, "{\"type\":\"crash\",\"signal\":"); cs_put_u64(&b, (uint64_t)sig);
    cs_put(&b, ",\"signal_name\":"); cs_put_str(&b, signal_name(sig));
    cs_put(&b, ",\"code\":"); cs_put_i64(&b, info ? info->si_code : 0);
    cs_put(&b, ",\"code_name\":"); cs_put_str(&b, code_name(sig, info ? info->si_code : 0));
    if (info && info->si_code > 0 && sig != SIGABRT) { cs_put(&b, ",\"addr\":"); cs_put_hex(&b, (uint64_t)info->si_addr); }
    cs_put(&b, ",\"tid\":"); cs_put_u64(&b, (uint64_t)syscall(SYS_gettid));
    cs_put(&b, ",\"mono_ns\":"); cs_put_u64(&b, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
    if (self && self->depth) { cs_put(&b, ",\"inside_call\":"); cs_put_str(&b, cs_api_name(self->current)); }
    cs_put(&b, ",\"unwinder\":"); cs_put_str(&b, unw_init_local2_fn ? "libunwind" : "glibc-backtrace");
    cs_put(&b, ",\"frames\":[");
    put_backtrace(&b, uc);
    cs_put(&b, "]");
    put_python(&b);
    cs_put(&b, ",\"this_thread\":");
    if (self) put_recent(&b, self, RECENT_SELF); else cs_put(&b, "null");
    cs_put(&b, ",\"other_threads\":[");
    int shown = 0;
    for (struct cs_thread *t = cs_thread_list(); t && shown < MAX_OTHER_THREADS; t = t->next) {
        if (t == self || atomic_load(&t->dead) || !atomic_load(&t->head)) continue;
        if (shown++) cs_put(&b, ",");
        put_recent(&b, t, RECENT_OTHER);
    }
    cs_put(&b, "]}\n");
    if (b.len >= LINE_CAP - 2) {  /* never leave a cut line */
        b.len = 0;
        cs_put(&b, "{\"type\":\"crash\",\"truncated\":true,\"signal\":"); cs_put_u64(&b, (uint64_t)sig);
        cs_put(&b, ",\"signal_name\":"); cs_put_str(&b, signal_name(sig)); cs_put(&b, "}\n");
    }
    cs_write_line(line_buf, b.len);
    if (cs_cfg.trace_all) cs_calls_flush_all(0);  /* ALL mode: the calls up to the crash, from every ring */

    char msg[4400];
    struct cs_buf m = { msg, 0, sizeof msg - 1 };
    cs_put(&m, "cudashim: ");
    cs_put(&m, signal_name(sig));
    if (self && self->depth) { cs_put(&m, " inside "); cs_put(&m, cs_api_name(self->current)); }
    cs_put(&m, "; crash record with backtrace and last calls in "); cs_put(&m, cs_trace_path()); cs_put(&m, "\n");
    if (cs_cfg.stderr_on) (void)!write(2, msg, m.len);
}

/* --- the program's own handlers, kept while ours is installed ------------------------------- */


int cs_crash_keeps(int sig, const struct sigaction *act, struct sigaction *old)
{
    int i = index_of(sig);
    if (i < 0 || !atomic_load(&owned[i])) return 0;
    struct sigaction was = previous[i];
    if (act) previous[i] = *act;
    if (old) *old = was;
    return 1;
}

/* --- chaining: die as the program would have died without us -------------------------- */

static void chain(int sig, siginfo_t *info, void *uc)
{
    int i = index_of(sig);
    struct sigaction *old = &previous[i];
    /* A fault (not a sent signal) re-executes on return: with the program's own disposition back
     * in place, its handler then takes the second fault itself, on the program's own stack with
     * no frame of ours (a library's backtrace, UCX's or faulthandler's, reads as without us). */
    if (info && info->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL)) {
        atomic_store(&owned[i], 0);
        cs_real_sigaction(sig, old, NULL);
        return;
    }
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) { old->sa_sigaction(sig, info, uc); return; }
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    /* Default or ignore: put the old disposition back. A fault re-executes on return and the
     * kernel applies it (same signal, core dump); a signal that was sent must be sent again. */
    atomic_store(&owned[i], 0);
    cs_real_sigaction(sig, old, NULL);
    if (!info || info->si_code <= 0) syscall(SYS_tgkill, getpid(), (int)syscall(SYS_gettid), sig);
}

static void handler(int sig, siginfo_t *info, void *uc)
{
    int saved_errno = errno;
    int i = index_of(sig);
    if (in_handler && atomic_load(&py_guarded)) siglongjmp(py_guard, 1);
    if (in_handler) {
        /* A fault inside this handler (or inside a handler we chained to): stop here and let
         * the previous disposition take the re-executed fault. Never loop, never hang. */
        atomic_store(&owned[i], 0);
        cs_real_sigaction(sig, &previous[i], NULL);
        if (!info || info->si_code <= 0) syscall(SYS_tgkill, getpid(), (int)syscall(SYS_gettid), sig);
        errno = saved_errno;
        return;
    }
    in_handler = 1;
    int tid = (int)syscall(SYS_gettid), zero = 0;
    if (atomic_compare_exchange_strong(&crash_owner, &zero, tid)) {
        atomic_store(&cs_crash_active, 1);
        if (atomic_fetch_add(&records_written, 1) == 0) {
            if (cs_cfg.crash_selftest) { int *volatile bad = (int *)8; *bad = 1; }
            write_record(sig, info, uc);
        }
        atomic_store(&cs_crash_active, 0);
        atomic_store(&crash_owner, 0);
    } else {
        /* Another thread is writing its record; give it a moment, then carry on. */
        for (int k = 0; k < 200 && atomic_load(&crash_owner); k++) {
            struct timespec ts = { 0, 10000000 };
            nanosleep(&ts, NULL);
        }
    }
    chain(sig, info, uc);
    in_handler = 0;
    errno = saved_errno;
}

static __thread void *own_altstack __attribute__((tls_model("initial-exec")));

/* Each thread that uses CUDA gets an alternate stack, so a stack overflow still gets a record.
 * A thread that already has one (Python's faulthandler sets one) keeps it. */
void cs_crash_thread_init(void)
{
    if (!installed) return;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;
    void *p = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    stack_t st = { .ss_sp = p, .ss_size = ALT_STACK_SIZE, .ss_flags = 0 };
    if (sigaltstack(&st, NULL)) munmap(p, ALT_STACK_SIZE);
    else own_altstack = p;
}

void cs_crash_thread_exit(void)
{
    if (!own_altstack) return;
    stack_t off = { .ss_flags = SS_DISABLE };
    if (sigaltstack(&off, NULL) == 0) munmap(own_altstack, ALT_STACK_SIZE);
    own_altstack = NULL;
}

#if defined(__x86_64__)  /* libunwind's names here are x86-64's; elsewhere glibc's backtrace */
static void load_unwinder(void)
{
    if (cs_cfg.unwinder && !strcmp(cs_cfg.unwinder, "backtrace")) return;
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    cs_dlsym_fn sym = cs_real_dlsym();
    unw_step_fn = (int (*)(unw_cursor_buf *))sym(h, "_ULx86_64_step");
    unw_get_reg_fn = (int (*)(unw_cursor_buf *, int, uint64_t *))sym(h, "_ULx86_64_get_reg");
    unw_get_proc_name_fn = (int (*)(unw_cursor_buf *, char *, size_t, uint64_t *))sym(h, "_ULx86_64_get_proc_name");
    void *init = sym(h, "_ULx86_64_init_local2");
    if (unw_step_fn && unw_get_reg_fn && unw_get_proc_name_fn && init)
        unw_init_local2_fn = (int (*)(unw_cursor_buf *, ucontext_t *, int))init;
}
#endif

/* The interpreter's stack dumpers, when the process is CPython. Under the loader's lock. */
static void find_python(void *arg)
{
    (void)arg;
    /* CPython 3.14's public name, then the older private one (3.13 exports neither) */
    for (const struct link_map *m = cs_lm_head(); m && !py_dump; m = m->l_next) {
        py_dump = (py_dump_fn)cs_elf_lookup(m, "PyUnstable_DumpTracebackThreads");
        if (!py_dump) py_dump = (py_dump_fn)cs_elf_lookup(m, "_Py_DumpTracebackThreads");
        if (!is_python && cs_elf_lookup(m, "Py_BytesMain")) is_python = 1;
    }
    const unsigned long *version = NULL;
    for (const struct link_map *m = cs_lm_head(); m && !py_dump && !version; m = m->l_next)
        version = (const unsigned long *)cs_elf_lookup_data(m, "Py_Version");
    if (!py_dump && version && (*version >> 16) == 0x30d) {  /* 3.13 */
        for (const struct link_map *m = cs_lm_head(); m && !py313.frame_line; m = m->l_next) {
            py313.frame_line = (int (*)(void *))cs_elf_lookup(m, "PyUnstable_InterpreterFrame_GetLine");
            py313.code_type = cs_elf_lookup_data(m, "PyCode_Type");
            py313.main_interp = (void *(*)(void))cs_elf_lookup(m, "PyInterpreterState_Main");
            py313.thread_head = (void *(*)(void *))cs_elf_lookup(m, "PyInterpreterState_ThreadHead");
            if (py313.frame_line && py313.code_type)
                py313.this_tstate = (void *(*)(void))cs_elf_lookup(m, "PyGILState_GetThisThreadState");
        }
    }
}

/* What the handler must not do itself (it takes the loader lock): find our own path, load
 * libunwind and libgcc_s. Done once, by the scanner. A crash before then unwinds with what is
 * there (backtrace() loads libgcc_s itself if it must). */
void cs_crash_prepare(void)
{
    static int _Atomic done;
    int zero = 0;
    if (!cs_cfg.crash_handler || !atomic_compare_exchange_strong(&done, &zero, 1)) return;
    Dl_info di;
    if (dladdr((void *)cs_crash_install, &di) && di.dli_fname) {
        char *rp = realpath(di.dli_fname, NULL);
        snprintf(self_path, sizeof self_path, "%s", rp ? rp : di.dli_fname);
        free(rp);
    }
#if defined(__x86_64__)
    load_unwinder();
#endif
    /* Reading each object's dynamic section: the link map held still, or a dlclose on another
     * thread (a forked child's handler closing what it opened) unmaps one under the walk. */
    cs_loader_held(find_python, NULL);
    void *warm[2];
    backtrace(warm, 2);
}

void cs_crash_install(void)
{
    if (!cs_cfg.crash_handler || installed) return;
    maps_buf = mmap(NULL, MAPS_CAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    line_buf = mmap(NULL, LINE_CAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (maps_buf == MAP_FAILED || line_buf == MAP_FAILED) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSIG_HANDLED; i++) owned[i] = cs_real_sigaction(fatal_signals[i], &sa, &previous[i]) == 0;
    __atomic_store_n(&cs_signal_keeper, cs_crash_keeps, __ATOMIC_RELEASE);  /* signal_hook.c asks it from now on */
    installed = 1;
    cs_crash_thread_init();
}

/* At exit: say which handlers the program replaced (its right), so a missing crash record
 * in a later crash is explained. Also say if a crash record was written and we still got here. */
void cs_crash_exit_note(void)
{
    if (!installed) return;
    char line[512];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    int any = 0;
    cs_put(&b, "{\"type\":\"signal_handlers\",\"replaced\":[");
    for (int i = 0; i < NSIG_HANDLED; i++) {
        struct sigaction cur;
        /* replaced past signal_hook.c (a raw system call, a static libc): not the program's own
         * handler put back by chain() */
        if (atomic_load(&owned[i]) && cs_real_sigaction(fatal_signals[i], NULL, &cur) == 0 && cur.sa_sigaction != handler) {
            if (any++) cs_put(&b, ",");
            cs_put_str(&b, signal_name(fatal_signals[i]));
        }
    }
    cs_put(&b, "],\"survived_crash_records\":"); cs_put_u64(&b, (uint64_t)atomic_load(&records_written));
    cs_put(&b, "}\n");
    if (any || atomic_load(&records_written)) cs_write_line(line, b.len);
}
