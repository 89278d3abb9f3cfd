/* Threads and fork: 8 threads call the driver concurrently (N calls each), then the process
 * forks; the child makes 5 calls of its own and must write its own trace. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int cuDeviceGet(int *, int);
int cuDriverGetVersion(int *);
static int calls;

static void *worker(void *arg)
{
    (void)arg;
    int d;
    for (int i = 0; i < calls; i++) cuDeviceGet(&d, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    calls = argc > 1 ? atoi(argv[1]) : 10000;
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int v;
        for (int i = 0; i < 5; i++) cuDriverGetVersion(&v);
        printf("child %d\n", v);
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("parent done, child status %d\n", WEXITSTATUS(st));
    fprintf(stderr, "child pid %d\n", (int)pid);
    return 0;
}
