/* cudashim run [options] -- cmd args...: the program runs with the shim preloaded, its traces go
 * to one directory (one file per process, so torchrun/mpirun/srun children each get their own,
 * named by host, rank and pid), and the report is printed when it ends. The exit status is the
 * program's own; a program killed by a signal makes cudashim die of the same signal. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim run [options] -- COMMAND [ARGS...]\n"
               "  -o, --output DIR      where traces go (default ./cudashim-traces/run-TIMESTAMP)\n"
               "  -a, --all             record every call, not only failing and key calls (CUDASHIM_TRACE_ALL=1)\n"
               "  -s, --sync-launches[=PATTERN]\n"
               "                        synchronise after each kernel launch (matching PATTERN) to pin the one\n"
               "                        behind an asynchronous error (CUDASHIM_SYNC_LAUNCHES); slows the program\n"
               "  -t, --hang-timeout SECONDS\n"
               "                        report calls stuck longer than this (CUDASHIM_HANG_TIMEOUT)\n"
               "  -q, --quiet           no report at the end (the traces are still written)\n"
               "      --shim PATH       the libcudashim.so to preload (default: found beside this program)\n"
               "  Children (torchrun, mpirun, srun, multiprocessing) inherit the shim: one trace per process.\n"
               "  Exit status: the program's own.\n");
}

/* libcudashim.so: $CUDASHIM_LIB, beside this binary (a build tree, the wheel), or ../lib (an
 * install), or the multiarch directory beside it (the Debian package). */
#if defined(__x86_64__)
#define CS_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define CS_MULTIARCH "aarch64-linux-gnu"
#else
#define CS_MULTIARCH "."
#endif
static int find_shim(char *out, size_t cap)
{
    const char *env = getenv("CUDASHIM_LIB");
    if (env && *env) { snprintf(out, cap, "%s", env); return access(out, R_OK) == 0; }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    char *dir = dirname(exe);
    const char *cands[] = { "%s/libcudashim.so", "%s/../lib/libcudashim.so", "%s/../lib/cudashim/libcudashim.so",
                            "%s/../lib/" CS_MULTIARCH "/libcudashim.so" };
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, cands[i], dir);
        if (access(p, R_OK) == 0 && realpath(p, out)) return 1;
    }
    return 0;
}

static int mkdirs(const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') { *s = 0; if (mkdir(p, 0700) && errno != EEXIST) return -1; *s = '/'; }
    return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

int cmd_run(int argc, char **argv)
{
    const char *outdir = NULL, *shim_opt = NULL, *sync = NULL, *hang = NULL;
    int all = 0, quiet = 0, i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return EXIT_CLEAN; }
        if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) outdir = argv[++i];
        else if (!strncmp(a, "--output=", 9)) outdir = a + 9;
        else if (!strcmp(a, "-a") || !strcmp(a, "--all")) all = 1;
        else if (!strcmp(a, "-s") || !strcmp(a, "--sync-launches")) sync = "1";
        else if (!strncmp(a, "--sync-launches=", 16)) sync = a + 16;
        else if ((!strcmp(a, "-t") || !strcmp(a, "--hang-timeout")) && i + 1 < argc) hang = argv[++i];
        else if (!strncmp(a, "--hang-timeout=", 15)) hang = a + 15;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--shim") && i + 1 < argc) shim_opt = argv[++i];
        else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-t") || !strcmp(a, "--hang-timeout") ||
                 !strcmp(a, "--shim")) {
            fprintf(stderr, "cudashim run: %s needs a value\n", a);
            return EXIT_USAGE;
        }
        else if (a[0] == '-') { fprintf(stderr, "cudashim run: unknown option %s\n", a); usage(stderr); return EXIT_USAGE; }
        else break;  /* the command, without a -- */
    }
    if (i >= argc) { usage(stderr); return EXIT_USAGE; }
    char shim[PATH_MAX];
    if (shim_opt) { if (!realpath(shim_opt, shim)) { fprintf(stderr, "cudashim run: %s: %s\n", shim_opt, strerror(errno)); return EXIT_USAGE; } }
    else if (!find_shim(shim, sizeof shim)) {
        fprintf(stderr, "cudashim run: cannot find libcudashim.so (set CUDASHIM_LIB or use --shim)\n");
        return EXIT_USAGE;
    }
    char dir[PATH_MAX];
    if (outdir) snprintf(dir, sizeof dir, "%s", outdir);
    else {
        char stamp[64];
        time_t now = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
        snprintf(dir, sizeof dir, "cudashim-traces/run-%s-%d", stamp, (int)getpid());
    }
    if (mkdirs(dir)) { fprintf(stderr, "cudashim run: cannot create %s: %s\n", dir, strerror(errno)); return EXIT_USAGE; }
    char absdir[PATH_MAX];
    if (!realpath(dir, absdir)) snprintf(absdir, sizeof absdir, "%s", dir);

    /* The shim goes first in LD_PRELOAD, so it sees the program's calls before any other hook;
     * only a sanitizer runtime, which must be first of all, stays ahead of it. */
    const char *old = getenv("LD_PRELOAD");
    char *head = strdup(""), *tail = strdup("");
    for (const char *s = old ? old : ""; *s;) {
        size_t n = strcspn(s, ": ");
        if (n) {
            char *item = strndup(s, n), *next;
            char **dst = strstr(item, "libasan") || strstr(item, "libtsan") || strstr(item, "libubsan") ||
                                 strstr(item, "libclang_rt") ? &head : &tail;
            if (asprintf(&next, "%s%s%s", *dst, **dst ? ":" : "", item) < 0) return EXIT_USAGE;
            free(*dst), free(item);
            *dst = next;
        }
        s += n;
        s += strspn(s, ": ");
    }
    char *preload;
    if (asprintf(&preload, "%s%s%s%s%s", head, *head ? ":" : "", shim, *tail ? ":" : "", tail) < 0) return EXIT_USAGE;
    setenv("LD_PRELOAD", preload, 1);
    free(preload), free(head), free(tail);
    setenv("CUDASHIM_TRACE_DIR", absdir, 1);
    if (!getenv("CUDASHIM_TRACE_FILE")) setenv("CUDASHIM_TRACE_FILE", "cudashim-%h-%R%p.jsonl", 1);
    if (!getenv("CUDASHIM_EXPECT_GPU")) setenv("CUDASHIM_EXPECT_GPU", "1", 1);
    if (all) setenv("CUDASHIM_TRACE_ALL", "1", 1);
    if (sync) setenv("CUDASHIM_SYNC_LAUNCHES", sync, 1);
    if (hang) {
        char *end;
        if (strtod(hang, &end) <= 0 || *end) { fprintf(stderr, "cudashim run: --hang-timeout wants seconds, not '%s'\n", hang); return EXIT_USAGE; }
        setenv("CUDASHIM_HANG_TIMEOUT", hang, 1);
    }
    /* The report says it all; with -q nothing at all is said (the traces are still written). */
    if (!getenv("CUDASHIM_STDERR")) setenv("CUDASHIM_STDERR", "0", 1);

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("cudashim run: fork"); return EXIT_USAGE; }
    if (pid == 0) {
        execvp(argv[i], argv + i);
        fprintf(stderr, "cudashim run: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    /* Like a shell: the terminal's ^C goes to the program; we wait for it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);

    if (!quiet) {
        fprintf(stderr, "\ncudashim: traces in %s\n", absdir);
        char *rargv[] = { "report", absdir, NULL };
        fflush(stdout);
        int saved = dup(1);
        dup2(2, 1);  /* the report goes to stderr: stdout stays the program's */
        cli_color_init();
        cmd_report(2, rargv);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
    }
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        struct rlimit none = { 0, 0 };
        setrlimit(RLIMIT_CORE, &none);  /* the program dumped its core already */
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WEXITSTATUS(st);
}
