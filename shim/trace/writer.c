/* The trace file: naming, safe creation, the header, synchronous writes of failing and key
 * calls, and (ALL mode) a writer thread that writes the per-thread rings to the binary companion
 * (calls_file.c). Each line goes out in one write() on an O_APPEND descriptor, so lines from
 * different threads never interleave. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <link.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/json.h"
#include "../process/locks.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "trace.h"

static int _Atomic fd_state;  /* 0 closed, 1 opening, 2 open, 3 failed */
static int trace_fd = -1;
static dev_t trace_dev;        /* the file we created: a descriptor that names another file */
static ino_t trace_ino;        /* (the program closed ours and reused the number) is never written */
uint64_t _Atomic cs_lines_written, cs_lines_unwritable, cs_lines_truncated;
static int _Atomic loss_said;
static char path[4096];
static pid_t forked_from;
static pthread_t writer_thread;
static int _Atomic writer_running, writer_stop;
static uint64_t _Atomic written_errors[CS_API_TOTAL], written_key[CS_API_TOTAL];
uint64_t _Atomic cs_suppressed;

/* What the layers above add to the trace: init.c fills it in when the shim is loaded, so that
 * the writer calls nothing above it. */
struct cs_writer_hooks cs_writer_hooks;

static int _Atomic header_nccl;
static char calls_name[512];  /* ALL mode: the binary companion's file name, for the header */

const char *cs_trace_path(void) { return path; }

/* Once NCCL's version is known: in the header if it was known when the trace opened, else in
 * one "process" line (readers merge the two). */
void cs_trace_nccl_version(int v)
{
    static int _Atomic process_line_written;
    int zero = 0;
    if (v && !atomic_load(&header_nccl) && atomic_compare_exchange_strong(&process_line_written, &zero, 1)) {
        char line[128];
        int n = snprintf(line, sizeof line, "{\"type\":\"process\",\"nccl_version\":%d}\n", v);
        cs_write_line(line, (size_t)n);
    }
}

const char *cs_trace_rank(void)
{
    static const char *vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return v;
    }
    return NULL;
}

static void put_name_part(struct cs_buf *b, const char *v)
{
    char part[256];
    cs_file_name_part(part, sizeof part, v);
    cs_put(b, part);
}

static void expand(char *out, size_t cap, const char *tmpl)
{
    struct cs_buf b = { out, 0, cap - 1 };
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    const char *rank = cs_trace_rank();
    if (!strchr(tmpl, '/') && cs_cfg.trace_dir && *cs_cfg.trace_dir) {
        cs_put(&b, cs_cfg.trace_dir);
        cs_put(&b, "/");
    }
    for (const char *s = tmpl; *s; s++) {
        if (*s != '%' || !s[1]) { cs_putn(&b, s, 1); continue; }
        switch (*++s) {
        case 'p': cs_put_u64(&b, (uint64_t)getpid()); break;
        case 'h': put_name_part(&b, host); break;
        case 'r': put_name_part(&b, rank ? rank : "norank"); break;
        case 'R': if (rank) { cs_put(&b, "rank"); put_name_part(&b, rank); cs_put(&b, "-"); } break;
        case '%': cs_put(&b, "%"); break;
        default: cs_putn(&b, s - 1, 2);
        }
    }
    out[b.len] = 0;
}

/* argv, up to 64 KiB; *cut says when there was more. */
static void put_cmdline(struct cs_buf *b, int *cut)
{
    static char buf[1 << 16];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = 0, r = 0;
    while (fd >= 0 && n < (ssize_t)sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0) n += r;
    char more;
    *cut = fd >= 0 && n == (ssize_t)sizeof buf - 1 && read(fd, &more, 1) == 1;
    if (fd >= 0) close(fd);
    cs_put(b, "[");
    for (ssize_t i = 0, first = 1; n > 0 && i < n; first = 0) {
        buf[n] = 0;
        if (!first) cs_put(b, ",");
        cs_put_str(b, buf + i);
        i += (ssize_t)strlen(buf + i) + 1;
    }
    cs_put(b, "]");
}

/* Only these variables are recorded: they decide what gets loaded. Nothing else, so no secret
 * from the environment ever reaches a trace. */
static const char *const loading_env[] = {
    "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH", "CUDA_MODULE_LOADING", "CUDA_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_ORDER", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_CUDA_ARCH_LIST", "XLA_FLAGS", "TF_CPP_MIN_LOG_LEVEL", "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN",
    "NCCL_PROFILER_PLUGIN", "NCCL_NET", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_ALGO", "NCCL_PROTO",
};

/* What a bug report needs of the machine (what collect_env prints): OS, kernel, C library. */
static void put_system(struct cs_buf *b)
{
    struct utsname u;
    char os[256] = "", text[4096];
    int fd = open("/etc/os-release", O_RDONLY | O_CLOEXEC);  /* no stdio: no allocation in a hook */
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0) close(fd);
    text[n > 0 ? n : 0] = 0;
    char *line = strstr(text, "PRETTY_NAME=");
    if (line && (line == text || line[-1] == '\n')) {
        char *v = line + 12, *e = v + strcspn(v, "\n");
        *e = 0;
        if (*v == '"') { v++; if (e > v && e[-1] == '"') e[-1] = 0; }
        snprintf(os, sizeof os, "%s", v);
    }
    cs_put(b, ",\"system\":{");
    cs_put(b, "\"os\":"); cs_put_str(b, os);
    if (!uname(&u)) {
        cs_put(b, ",\"kernel\":"); cs_put_str(b, u.release);
        cs_put(b, ",\"machine\":"); cs_put_str(b, u.machine);
    }
    cs_put(b, ",\"glibc\":"); cs_put_str(b, gnu_get_libc_version());
    /* Python, when the program is one: its shared library's name, or the interpreter's. */
    char py[32] = "", exe[1024];
    for (struct link_map *m = cs_lm_head(); m && !py[0]; m = m->l_next) {
        const char *lp = m->l_name ? strstr(m->l_name, "libpython") : NULL;
        int major, minor;
        if (lp && sscanf(lp + 9, "%d.%d", &major, &minor) == 2) snprintf(py, sizeof py, "%d.%d", major, minor);
    }
    cs_exe_path(exe, sizeof exe);
    const char *eb = strrchr(exe, '/');
    eb = eb ? eb + 1 : exe;
    int major, minor;
    if (!py[0] && !strncmp(eb, "python", 6) && sscanf(eb + 6, "%d.%d", &major, &minor) == 2)
        snprintf(py, sizeof py, "%d.%d", major, minor);
    if (py[0]) { cs_put(b, ",\"python\":"); cs_put_str(b, py); }
    cs_put(b, "}");
}

static char header_line[1 << 18];  /* written once per process; again at the top of each new part */
static size_t header_len;
static unsigned parts;  /* how many times the trace was continued in a new file (CUDASHIM_TRACE_MAX) */

static void write_header(void)
{
    char *line = header_line;
    char host[256] = "unknown";
    int argv_cut = 0;
    struct cs_buf b = { line, 0, sizeof header_line - 2 };
    gethostname(host, sizeof host - 1);
    const char *rank = cs_trace_rank();
    cs_put(&b, "{\"type\":\"header\",\"format\":\"" CS_TRACE_FORMAT "\",\"version\":");
    cs_put_u64(&b, CS_TRACE_VERSION);
    cs_put(&b, ",\"pid\":"); cs_put_u64(&b, (uint64_t)getpid());
    cs_put(&b, ",\"ppid\":"); cs_put_u64(&b, (uint64_t)getppid());
    if (forked_from) { cs_put(&b, ",\"forked_from\":"); cs_put_u64(&b, (uint64_t)forked_from); }
    cs_put(&b, ",\"host\":"); cs_put_str(&b, host);
    cs_put(&b, ",\"rank\":");
    if (rank) cs_put_str(&b, rank); else cs_put(&b, "null");
    cs_put(&b, ",\"argv\":"); put_cmdline(&b, &argv_cut);
    if (argv_cut) cs_put(&b, ",\"argv_truncated\":true");
    cs_put(&b, ",\"shim_version\":\"" CS_VERSION "\",\"clock\":\"CLOCK_MONOTONIC\",\"clock_source\":");
    cs_put_str(&b, cs_clock_name());
    cs_put(&b, ",\"mode\":"); cs_put_str(&b, cs_cfg.trace_all ? "all" : "default");
    cs_put(&b, ",\"ring_size\":"); cs_put_u64(&b, cs_cfg.ring_size);
    if (calls_name[0]) { cs_put(&b, ",\"calls_file\":"); cs_put_str(&b, calls_name); }
    int nccl = cs_writer_hooks.nccl_version ? cs_writer_hooks.nccl_version() : 0;
    atomic_store(&header_nccl, nccl != 0);
    if (nccl) { cs_put(&b, ",\"nccl_version\":"); cs_put_u64(&b, (uint64_t)nccl); }
    struct timespec rt, mt;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mt);
    cs_put(&b, ",\"start_unix_ns\":"); cs_put_u64(&b, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
    cs_put(&b, ",\"start_mono_ns\":"); cs_put_u64(&b, (uint64_t)mt.tv_sec * 1000000000ull + (uint64_t)mt.tv_nsec);
    put_system(&b);
    cs_put(&b, ",\"env\":{");
    int first = 1;
    for (size_t i = 0; i < sizeof loading_env / sizeof *loading_env; i++) {
        const char *v = getenv(loading_env[i]);
        if (!v) continue;
        if (!first) cs_put(&b, ",");
        first = 0;
        cs_put_str(&b, loading_env[i]); cs_put(&b, ":"); cs_put_str(&b, v);
    }
    for (int i = 0; i < CS_CFG_COUNT; i++) {
        char name[64];
        snprintf(name, sizeof name, "CUDASHIM_%s", cs_vars[i].name);
        const char *v = getenv(name);
        if (!v) continue;
        if (!first) cs_put(&b, ",");
        first = 0;
        cs_put_str(&b, name); cs_put(&b, ":"); cs_put_str(&b, v);
    }
    cs_put(&b, "}}\n");
    if (b.len >= sizeof header_line - 2) {  /* never a cut line: the header without argv and env, saying so */
        atomic_fetch_add(&cs_lines_truncated, 1);
        b.len = 0;
        cs_put(&b, "{\"type\":\"header\",\"format\":\"" CS_TRACE_FORMAT "\",\"version\":");
        cs_put_u64(&b, CS_TRACE_VERSION);
        cs_put(&b, ",\"pid\":"); cs_put_u64(&b, (uint64_t)getpid());
        cs_put(&b, ",\"shim_version\":\"" CS_VERSION "\",\"mode\":"); cs_put_str(&b, cs_cfg.trace_all ? "all" : "default");
        cs_put(&b, ",\"truncated\":true}\n");
    }
    header_len = b.len;
    if (write(trace_fd, line, b.len) == (ssize_t)b.len) atomic_fetch_add(&cs_lines_written, 1);
    else atomic_fetch_add(&cs_lines_unwritable, 1);
}

/* CUDASHIM_TRACE_MAX reached: the file becomes NAME.prev (an older one goes) and the trace goes
 * on in a new NAME, which starts with the same header and a "continued" line; the libraries and
 * findings are written into it again once the lock is released (cs_write_line). With
 * WRITER lock held. 0 when the rotation failed (the limit is then dropped, nothing is lost). */
static int rotate(void)
{
    char prev[sizeof path + 8];
    snprintf(prev, sizeof prev, "%s.prev", path);
    if (rename(path, prev)) goto give_up;
    const char *why;
    int fd = cs_create_file(path, O_APPEND, &why);
    if (fd < 0) goto give_up;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    if (high >= 0) { close(fd); fd = high; }
    struct stat st;
    if (fstat(fd, &st)) { close(fd); goto give_up; }
    close(trace_fd);
    trace_fd = fd, trace_dev = st.st_dev, trace_ino = st.st_ino;
    parts++;
    char cont[256];
    const char *base = strrchr(prev, '/');
    int n = snprintf(cont, sizeof cont, "{\"type\":\"continued\",\"part\":%u,\"previous\":\"%s\"}\n", parts + 1,
                     base ? base + 1 : prev);
    if (write(trace_fd, header_line, header_len) == (ssize_t)header_len) atomic_fetch_add(&cs_lines_written, 1);
    if (n > 0 && (size_t)n < sizeof cont && write(trace_fd, cont, (size_t)n) == n) atomic_fetch_add(&cs_lines_written, 1);
    return 1;
give_up:
    cs_cfg.trace_max = 0;
    return 0;
}

/* Create the file once (cs_create_file: never through a link, never an existing file). */
static int ensure_open(void)
{
    int s = atomic_load(&fd_state);
    if (cs_likely(s == 2)) return 1;
    if (s == 3) return 0;
    int zero = 0;
    if (atomic_compare_exchange_strong(&fd_state, &zero, 1)) {
        char base[sizeof path - 16];
        expand(base, sizeof base, cs_cfg.trace_file);
        int fd = -1;
        const char *why = NULL;
        if (strlen(base) >= sizeof base - 2) {  /* never a different, cut name */
            errno = ENAMETOOLONG;
            snprintf(path, sizeof path, "%.200s...", base);
            goto failed;
        }
        for (int i = 0; i < 100 && fd < 0; i++) {
            if (i) snprintf(path, sizeof path, "%s.%d", base, i); else snprintf(path, sizeof path, "%s", base);
            fd = cs_create_file(path, O_APPEND, &why);
            if (fd < 0 && errno != EEXIST) break;
        }
        if (fd < 0) {
        failed:;
            char msg[4200];
            int n = snprintf(msg, sizeof msg, "cudashim: cannot create trace file %s: %s; tracing is off\n", path,
                             why ? why : strerror(errno));
            (void)!write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : 0);
            atomic_store(&fd_state, 3);
            return 0;
        }
        /* Keep the descriptor away from the low numbers programs assume are theirs. */
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
        if (high >= 0) { close(fd); fd = high; }
        struct stat st;
        if (fstat(fd, &st) == 0) trace_dev = st.st_dev, trace_ino = st.st_ino;
        trace_fd = fd;
        calls_name[0] = 0;
        if (cs_cfg.trace_all) cs_calls_open(path, calls_name, sizeof calls_name);
        write_header();
        atomic_store(&fd_state, 2);
        return 1;
    }
    while ((s = atomic_load(&fd_state)) == 1)
        ;
    return s == 2;
}

void cs_trace_open(void) { ensure_open(); }

/* Once, on stderr: the trace is incomplete from here on, and why. */
static void say_loss(const char *why)
{
    int zero = 0;
    if (!cs_cfg.stderr_on || !atomic_compare_exchange_strong(&loss_said, &zero, 1)) return;
    char msg[4400];
    int n = snprintf(msg, sizeof msg, "cudashim: the trace %s is incomplete: %s; lines that could not be written are "
                     "counted in its summary\n", path, why);
    (void)!write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static int is_trace(int fd, struct stat *st)
{
    return fstat(fd, st) == 0 && st->st_dev == trace_dev && st->st_ino == trace_ino;
}

/* Our descriptor still names our file. The program may have closed every descriptor
 * (close_range, a daemon's loop) and opened its own files under the same number: writing
 * there would corrupt them. Reopen ours by name (O_APPEND, never following a link), or stop.
 * The program may be closing and dup2-ing descriptors on another thread meanwhile: a number the
 * shim just got can become the program's at any moment. So a descriptor is closed only while it
 * still names the trace, and a number the program took is left to it and the reopening tried
 * again; tracing stops only when the file itself is gone or replaced. */
static int still_ours(struct stat *st)
{
    if (is_trace(trace_fd, st)) return 1;
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) break;
        if (!is_trace(fd, st)) {
            struct stat named, got;
            int at_path = stat(path, &named) == 0;
            if (at_path && named.st_dev == trace_dev && named.st_ino == trace_ino) continue;  /* the number was taken */
            /* Another file at the path: close the one just opened, if the number is still it. */
            if (at_path && fstat(fd, &got) == 0 && got.st_dev == named.st_dev && got.st_ino == named.st_ino) close(fd);
            break;
        }
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
        if (high >= 0) {
            struct stat low;
            if (is_trace(fd, &low)) close(fd);
            fd = high;
        }
        if (is_trace(fd, st)) {
            trace_fd = fd;  /* the old number is the program's now: never closed by us */
            return 1;
        }
    }
    say_loss("its descriptor was closed and the file is gone or replaced; tracing stopped");
    atomic_store(&fd_state, 3);
    return 0;
}

void cs_write_line(const char *line, size_t len)
{
    int e = errno;
    if (!ensure_open()) {
        atomic_fetch_add(&cs_lines_unwritable, 1);
        errno = e;
        return;
    }
    /* The crash handler may interrupt a thread that holds the lock: it writes without it. */
    int locked = atomic_load(&cs_crash_active) ? cs_lock_try(CS_LOCK_WRITER) : (cs_lock(CS_LOCK_WRITER), 1);
    struct stat st;
    int ok = atomic_load(&fd_state) == 2 && still_ours(&st);
    /* A file-size limit (ulimit -f) would send SIGXFSZ, which kills the program: never cross it. */
    struct rlimit rl;
    if (ok && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)st.st_size + len > (uint64_t)rl.rlim_cur) {
        say_loss("the file-size limit (ulimit -f) is reached");
        ok = 0;
    }
    /* The size limit: never inside the crash handler (the record goes where the trace is). */
    int rotated = 0;
    if (ok && locked && cs_cfg.trace_max && !atomic_load(&cs_crash_active) && (uint64_t)st.st_size + len > cs_cfg.trace_max &&
        (uint64_t)st.st_size > header_len)
        rotated = rotate();
    while (ok && len) {
        ssize_t n = write(trace_fd, line, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            char why[160];
            snprintf(why, sizeof why, "a write failed (%s)", strerror(errno));
            say_loss(why);
            ok = 0;
            break;
        }
        line += n, len -= (size_t)n;
    }
    if (locked) cs_unlock(CS_LOCK_WRITER);
    atomic_fetch_add(ok ? &cs_lines_written : &cs_lines_unwritable, 1);
    if (rotated && cs_writer_hooks.new_part) cs_writer_hooks.new_part();  /* what was loaded and found, again */
    errno = e;
}

int cs_trace_complete(void) { return atomic_load(&fd_state) == 2 && !atomic_load(&cs_lines_unwritable); }

static const char *const via_names[] = { "linked", "dlsym", "cuGetProcAddress" };

size_t cs_format_event(char *buf, size_t cap, struct cs_api *api, const struct cs_event *ev, int tid,
                       const char *extra, int extra_len)
{
    struct cs_buf b = { buf, 0, cap - 2 };
    const char *rn = api->result_name ? api->result_name(ev->result) : NULL;
    cs_put(&b, "{\"type\":\"call\",\"api\":\"");
    cs_put(&b, cs_fn_name(api, ev->api - api->base));
    cs_put(&b, "\",\"lib\":\"");
    cs_put(&b, api->name);
    cs_put(&b, "\",\"via\":\"");
    cs_put(&b, via_names[ev->via < CS_VIA_COUNT ? ev->via : 0]);
    cs_put(&b, "\",\"result\":");
    cs_put_i64(&b, ev->result);
    cs_put(&b, ",\"result_name\":");
    if (rn) cs_put_str(&b, rn); else cs_put(&b, "null");
    cs_put(&b, ",\"tid\":"); cs_put_u64(&b, (uint64_t)tid);
    cs_put(&b, ",\"ts_ns\":"); cs_put_u64(&b, cs_ticks_to_ns(ev->ts));
    cs_put(&b, ",\"dur_ns\":"); cs_put_u64(&b, cs_dur_to_ns(ev->dur));
    cs_put(&b, ",\"seq\":"); cs_put_u64(&b, ev->seq);
    if (ev->inside) { cs_put(&b, ",\"inside\":\""); cs_put(&b, cs_api_name(ev->inside - 1)); cs_put(&b, "\""); }
    if (extra_len > 0) {
        cs_put(&b, ",");
        cs_putn(&b, extra, (size_t)extra_len);
    }
    cs_put(&b, "}\n");
    if (b.len == cap - 2 && buf[b.len - 1] != '\n') {  /* cut: keep the line valid JSON, and say so */
        atomic_fetch_add(&cs_lines_truncated, 1);
        b.len = 0;
        cs_put(&b, "{\"type\":\"call\",\"api\":\"");
        cs_put(&b, cs_fn_name(api, ev->api - api->base));
        cs_put(&b, "\",\"result\":"); cs_put_i64(&b, ev->result);
        cs_put(&b, ",\"truncated\":true}\n");
    }
    return b.len;
}

void cs_emit(struct cs_thread *t, struct cs_api *api, struct cs_event *ev)
{
    if ((ev->flags & CS_EV_FAILED) && cs_writer_hooks.failed_call) cs_writer_hooks.failed_call(t, api, ev);
    if ((ev->flags & CS_EV_FAILED) && !t->force_write &&
        atomic_fetch_add(&written_errors[ev->api], 1) >= cs_cfg.max_errors_per_api) {
        atomic_fetch_add(&cs_suppressed, 1);
        ev->flags |= CS_EV_WRITTEN;  /* counted, deliberately not written */
        return;
    }
    /* Default mode stays bounded: a loop of successful key calls is written a few times, then
     * only counted (the summary's counts stay exact). */
    if (!(ev->flags & CS_EV_FAILED) && !cs_cfg.trace_all &&
        atomic_fetch_add(&written_key[ev->api], 1) >= cs_cfg.max_key_calls_per_api) {
        atomic_fetch_add(&cs_suppressed, 1);
        ev->flags |= CS_EV_WRITTEN;
        return;
    }
    char line[2048];
    size_t n = cs_format_event(line, sizeof line, api, ev, t->tid, t->extra, t->extra_len);
    cs_write_line(line, n);
    ev->flags |= CS_EV_WRITTEN;
}

static void *writer_main(void *arg)
{
    (void)arg;
    /* Every 50 ms (the program's own threads write full rings themselves); the stop is seen
     * within 5 ms, so that exit does not wait. */
    for (unsigned tick = 0; !atomic_load(&writer_stop); tick++) {
        if (tick % 10 == 0) cs_calls_flush_all(0);
        struct timespec ts = { 0, 5000000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

void cs_writer_start(void)
{
    int zero = 0;
    if (cs_cfg.trace_all && atomic_compare_exchange_strong(&writer_running, &zero, 1)) {
        atomic_store(&writer_stop, 0);
        if (cs_thread_spawn(&writer_thread, 0, writer_main))
            atomic_store(&writer_running, 0);  /* the exit path writes the rings instead */
    }
}

void cs_writer_after_fork(void)
{
    forked_from = getppid();
    if (trace_fd >= 0) close(trace_fd);
    trace_fd = -1;
    path[0] = 0;
    atomic_store(&fd_state, 0);
    atomic_store(&writer_running, 0);
    cs_calls_after_fork();
    for (int i = 0; i < CS_API_TOTAL; i++) atomic_store(&written_errors[i], 0), atomic_store(&written_key[i], 0);
    atomic_store(&cs_suppressed, 0);
}

void cs_writer_finish(void)
{
    if (atomic_load(&writer_running)) {
        atomic_store(&writer_stop, 1);
        pthread_join(writer_thread, NULL);
        atomic_store(&writer_running, 0);
    }
    if (cs_cfg.trace_all) cs_calls_flush_all(1);
}
