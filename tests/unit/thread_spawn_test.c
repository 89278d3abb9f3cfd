/* The shim's own threads (cs_thread_spawn): a program's signals never run its handlers there (a
 * handler that forks on the shim's writer raced the program's own fork), but a fault of the
 * thread's own stays deliverable (blocked, the kernel ends the process with no crash record).
 * The caller's mask is left as it was. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "../../shim/process/process.h"

struct cs_config cs_cfg;  /* what thread.c reads of the configuration */
static sigset_t seen;
static int failures;

static void check(int ok, const char *what)
{
    if (!ok) { printf("FAIL: %s\n", what); failures++; }
}

static void *record_mask(void *arg)
{
    (void)arg;
    pthread_sigmask(SIG_BLOCK, NULL, &seen);
    return NULL;
}

int main(void)
{
    sigset_t before, after;
    pthread_sigmask(SIG_BLOCK, NULL, &before);
    pthread_t t;
    check(cs_thread_spawn(&t, 0, record_mask) == 0, "the thread starts");
    pthread_join(t, NULL);
    pthread_sigmask(SIG_BLOCK, NULL, &after);
    static const int program[] = { SIGALRM, SIGCHLD, SIGUSR1, SIGUSR2, SIGINT, SIGTERM, SIGPROF, SIGIO };
    for (size_t i = 0; i < sizeof program / sizeof *program; i++)
        check(sigismember(&seen, program[i]), "a program's signal is blocked on the shim's thread");
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        check(!sigismember(&seen, faults[i]), "a fault signal is deliverable on the shim's thread");
    for (int s = 1; s < 32; s++)
        check(sigismember(&before, s) == sigismember(&after, s), "the caller's mask is unchanged");
    if (!failures) printf("ok\n");
    return failures != 0;
}
