/* Load for the stress target (tests/stress/run.sh), linked against the fake libcuda.so.1.
 *   threads:T:N    T threads, N cuDeviceGet each (success), plus one failing call each
 *   forks:K        K forked children, each making 100 calls; every other child execs /bin/true
 *   signals:N      N failing calls (each written) while another thread sends SIGUSR1 to this one
 * Prints the number of calls it made, for the exact-count checks. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(int *, int);
CUresult cuMemAlloc_v2(unsigned long long *, size_t);

static long per_thread;
static void *worker(void *arg)
{
    (void)arg;
    int dev;
    unsigned long long p;
    for (long i = 0; i < per_thread; i++) cuDeviceGet(&dev, 0);
    cuMemAlloc_v2(&p, (size_t)1 << 62);
    return NULL;
}

static volatile sig_atomic_t got;
static void on_usr1(int s) { (void)s; got++; }
static pid_t main_tid;
static volatile int stop;
static void *pester(void *arg)
{
    (void)arg;
    while (!stop) { syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1); usleep(50); }
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    cuInit(0);
    long made = 1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "threads:", 8)) {
            int t = atoi(argv[i] + 8);
            per_thread = atol(strchr(argv[i] + 8, ':') + 1);
            pthread_t th[256];
            for (int k = 0; k < t && k < 256; k++) pthread_create(&th[k], NULL, worker, NULL);
            for (int k = 0; k < t && k < 256; k++) pthread_join(th[k], NULL);
            made += (long)t * (per_thread + 1);
        } else if (!strncmp(argv[i], "forks:", 6)) {
            int k = atoi(argv[i] + 6), bad = 0;
            for (int c = 0; c < k; c++) {
                pid_t pid = fork();
                if (pid == 0) {
                    int dev;
                    for (int j = 0; j < 100; j++) cuDeviceGet(&dev, 0);
                    if (c % 2) execl("/bin/true", "true", (char *)NULL);
                    exit(0);  /* through the destructors: the child's summary */
                }
                int st;
                waitpid(pid, &st, 0);
                bad += !WIFEXITED(st) || WEXITSTATUS(st);
            }
            printf("children failed: %d\n", bad);
        } else if (!strncmp(argv[i], "signals:", 8)) {
            int n = atoi(argv[i] + 8);
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_usr1;  /* no SA_RESTART: writes see EINTR */
            sigaction(SIGUSR1, &sa, NULL);
            main_tid = (pid_t)syscall(SYS_gettid);
            pthread_t th;
            pthread_create(&th, NULL, pester, NULL);
            unsigned long long p;
            for (int k = 0; k < n; k++) cuMemAlloc_v2(&p, (size_t)1 << 62);
            stop = 1;
            pthread_join(th, NULL);
            made += n;
            printf("signals received: %s\n", got ? "yes" : "no");
        }
    }
    printf("calls made: %ld\n", made);
    return 0;
}
