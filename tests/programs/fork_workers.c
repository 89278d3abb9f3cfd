/* Forked workers while other threads are inside the shim, as a DataLoader or a process pool does.
 *
 *   fork_workers PATTERN FORKS
 *
 * PATTERN:
 *   calls    4 threads keep making key and failing driver calls (cuMemAlloc_v2 fails when the
 *            fake driver is told to) while the main thread forks; each child dlopens a system
 *            library, makes one call and exits (the shim's exit path runs in the child).
 *   dlopen   as calls, and a fifth thread opens new libraries all along (the scanner busy):
 *            $STORM_DIR/storm_N.so; the children do not dlopen (see child_dlopens).
 *   signal   the main thread makes failing calls in a loop; a timer's signal handler forks; the
 *            child makes a call and exits from the handler. The signal may come on any thread,
 *            the shim's included, and on two at once: two forks at the same time.
 *   twoforks as calls, with two threads forking at once (two subprocess calls, say): the fork
 *            handlers of both run together.
 * The parent waits for each child FORK_CHILD_WAIT_S seconds at most (60 by default: a child is
 * done in milliseconds, but a loaded machine can stall one for seconds); one still running then
 * has hung: FORK_HANG_REPORT, when set, is run with its pid first (tests/stress/hang_report.py:
 * where each of its threads waits), then it is killed and counted. Prints "children: N, hung: H,
 * failed: F" (identical with and without the shim when nothing hangs) and exits 1 when a child
 * hung or failed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int cuInit(unsigned);
int cuDriverGetVersion(int *);
int cuDeviceGet(int *, int);
int cuCtxCreate_v2(void **, unsigned, int);
int cuMemAlloc_v2(unsigned long long *, size_t);
int cuCtxSynchronize(void);

static atomic_int stop;
static atomic_int hung, failed, children;

static void *caller(void *arg)
{
    (void)arg;
    unsigned long long p;
    int v, d;
    void *ctx;
    while (!atomic_load(&stop)) {
        cuMemAlloc_v2(&p, 1 << 20);   /* key call; fails with FAKE_CUDA_FAIL */
        cuDriverGetVersion(&v);
        cuCtxCreate_v2(&ctx, 0, 0);    /* key call */
        cuDeviceGet(&d, 0);
        cuCtxSynchronize();            /* synchronising call */
    }
    return NULL;
}

static const char *const system_libs[] = { "libresolv.so.2", "libanl.so.1", "libutil.so.1" };

/* Opens STORM_DIR/storm_0.so, storm_1.so, ... (copies of one small library): each is a new object
 * for the shim's scanner. Never dlclose: glibc 2.36's dlclose holds the exit handlers' lock, and
 * a child forked meanwhile hangs in exit() without the shim too. */
static void *opener(void *arg)
{
    (void)arg;
    const char *dir = getenv("STORM_DIR");
    for (unsigned i = 0; dir && !atomic_load(&stop); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/storm_%u.so", dir, i);
        if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) break;
    }
    return NULL;
}

/* A child dlopens unless another thread of the parent was: glibc 2.36 leaves a child forked
 * during a dlopen with the loader's state half-changed (its own dlopen then asserts or hangs,
 * without the shim too). */
static int child_dlopens = 1;

static void child_work(void)
{
    void *h = child_dlopens ? dlopen(system_libs[getpid() % 3], RTLD_NOW) : NULL;
    int v = 0;
    cuDriverGetVersion(&v);
    if (h) dlclose(h);
}

extern char **environ;

/* FORK_HANG_REPORT PID, its output on stderr, before the hung child is killed. */
static void report_hang(pid_t pid)
{
    const char *cmd = getenv("FORK_HANG_REPORT");
    if (!cmd || !*cmd) return;
    char arg[16];
    snprintf(arg, sizeof arg, "%d", (int)pid);
    char *argv[] = { (char *)cmd, arg, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t r;
    if (!posix_spawnp(&r, cmd, &fa, NULL, argv, environ)) {
        int st;
        while (waitpid(r, &st, 0) < 0 && errno == EINTR) {}
    }
    posix_spawn_file_actions_destroy(&fa);
}

static int child_wait_ms(void)
{
    const char *s = getenv("FORK_CHILD_WAIT_S");
    int v = s ? atoi(s) : 0;
    return (v > 0 ? v : 60) * 1000;
}

/* Waits for pid for at most FORK_CHILD_WAIT_S. */
static void reap(pid_t pid)
{
    children++;
    int limit = child_wait_ms();
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (!WIFEXITED(st) || WEXITSTATUS(st)) {
                failed++;
                fprintf(stderr, "child %d: %s %d\n", (int)pid, WIFEXITED(st) ? "exit status" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            }
            return;
        }
        if (r < 0 && errno != EINTR) { failed++; return; }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= limit) {
            hung++;
            fprintf(stderr, "child %d hung\n", (int)pid);
            report_hang(pid);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return;
        }
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
}

static volatile sig_atomic_t forked_pid;
static void fork_in_handler(int sig)
{
    (void)sig;
    if (forked_pid) return;  /* the last child is not reaped yet */
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        exit(0);
    }
    forked_pid = pid;
}

static int forks_each;

static void fork_and_reap(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        exit(0);
    }
    if (pid < 0) failed++;
    else reap(pid);
}

static void *forker(void *arg)
{
    (void)arg;
    for (int i = 0; i < forks_each; i++) fork_and_reap();
    return NULL;
}

int main(int argc, char **argv)
{
    const char *pattern = argc > 1 ? argv[1] : "calls";
    int forks = argc > 2 ? atoi(argv[2]) : 300;
    int v;
    cuInit(0);
    cuDriverGetVersion(&v);
    if (!strcmp(pattern, "signal")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = fork_in_handler;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        unsigned long long p;
        while (children < forks) {
            cuMemAlloc_v2(&p, 1 << 20);
            if (forked_pid) {
                pid_t pid = forked_pid;
                forked_pid = 0;
                reap(pid);
            }
        }
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        if (forked_pid) reap(forked_pid);
    } else {
        int threads = !strcmp(pattern, "dlopen") ? 5 : 4;
        child_dlopens = threads == 4;
        pthread_t t[5];
        for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, i == 4 ? opener : caller, NULL);
        if (!strcmp(pattern, "twoforks")) {
            pthread_t f;
            forks_each = forks / 2;
            pthread_create(&f, NULL, forker, NULL);
            forker(NULL);
            pthread_join(f, NULL);
        } else {
            for (int i = 0; i < forks; i++) fork_and_reap();
        }
        atomic_store(&stop, 1);
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    }
    /* a last child forked by the handler may be one more than asked for */
    printf("children: %d, hung: %d, failed: %d\n", children < forks ? children : forks, hung, failed);
    return hung || failed;
}
