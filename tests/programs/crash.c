/* Crashes on request after a few driver calls, for the crash-capture tests.
 *   crash sync      the (fake) driver faults inside cuCtxSynchronize  (FAKE_CUDA_CRASH=cuCtxSynchronize)
 *   crash launch    the driver faults inside cuLaunchKernel            (FAKE_CUDA_CRASH=cuLaunchKernel)
 *   crash callback  our host function faults on a driver-owned thread (cuLaunchHostFunc)
 *   crash own       the program faults in its own code: crash_in_program_code
 *   crash abort     the program calls abort()
 *   crash fpe       integer division by zero in divide_by
 *   crash handler   the program's own SIGSEGV handler (installed first) prints and exits 42
 *   crash handler-faults  the program's own handler faults again
 *   crash survive   the program's own handler (installed first) recovers with siglongjmp; exit 0
 *   crash replace   the program replaces the shim's handler after CUDA started, then recovers
 *   crash after     the program's SA_SIGINFO handler, installed after CUDA started, prints
 *                   what sigaction told it was there before (SIG_DFL) and exits 43
 *   crash resethand its SA_RESETHAND handler, installed after CUDA started, prints and returns:
 *                   the re-executed fault takes the default action (139)
 *   crash ignore    SIG_IGN for SIGSEGV after CUDA started: a fault still kills (139)
 *   crash cxx       the fault is in a function with a C++ name (torch::autograd::Engine::execute(),
 *                   mangled, as a framework's frames are): the report demangles it
 *   crash early     one successful non-key call (nothing written yet), then a fault: the trace
 *                   first opens inside the crash handler
 * Expected: the same exit status with and without the shim; with it, a crash record whose
 * backtrace names the function above. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
CUresult cuInit(unsigned);
CUresult cuDriverGetVersion(int *);
CUresult cuDeviceGet(int *, int);
CUresult cuCtxSynchronize(void);
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);
CUresult cuLaunchHostFunc(void *, void (*)(void *), void *);

static int *volatile nowhere;

__attribute__((noinline)) void crash_in_program_code(int depth)
{
    if (depth > 0) { crash_in_program_code(depth - 1); return; }
    *nowhere = 1;
}

__attribute__((noinline)) void bad_host_callback(void *data)
{
    (void)data;
    *nowhere = 2;
}

__attribute__((noinline)) int divide_by(volatile int d) { return 1000 / d; }

/* A C++ function as the symbol table names it (this file is C: the name is given whole). */
__attribute__((noinline, used)) void engine_execute(void) __asm__("_ZN5torch8autograd6Engine7executeEv");
void engine_execute(void) { *nowhere = 4; }

static void own_handler(int sig)
{
    static const char msg[] = "own handler ran\n";
    (void)sig;
    (void)!write(1, msg, sizeof msg - 1);
    _exit(42);
}

static void info_handler(int sig, siginfo_t *si, void *uc)
{
    static const char msg[] = "info handler ran, fault address seen\n";
    (void)sig, (void)uc;
    if (si && si->si_addr == (void *)0) (void)!write(1, msg, sizeof msg - 1);
    _exit(43);
}

static void once_handler(int sig)
{
    static const char msg[] = "resethand handler ran\n";
    (void)sig;
    (void)!write(1, msg, sizeof msg - 1);
}

static sigjmp_buf recover;
static void recovering_handler(int sig) { (void)sig; siglongjmp(recover, 1); }

static void faulting_handler(int sig)
{
    (void)sig;
    *nowhere = 3;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "own";
    int v = 0, dev = 0;
    if (!strcmp(mode, "handler")) signal(SIGSEGV, own_handler);
    if (!strcmp(mode, "handler-faults")) signal(SIGSEGV, faulting_handler);
    if (!strcmp(mode, "survive")) signal(SIGSEGV, recovering_handler);
    if (!strcmp(mode, "early")) {
        cuDeviceGet(&dev, 0);
        crash_in_program_code(1);
    }
    cuInit(0);
    cuDriverGetVersion(&v);
    cuDeviceGet(&dev, 0);
    if (!strcmp(mode, "replace")) signal(SIGSEGV, recovering_handler);
    if (!strcmp(mode, "after") || !strcmp(mode, "resethand") || !strcmp(mode, "ignore")) {
        struct sigaction sa, was;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        if (!strcmp(mode, "after")) sa.sa_sigaction = info_handler, sa.sa_flags = SA_SIGINFO;
        else if (!strcmp(mode, "resethand")) sa.sa_handler = once_handler, sa.sa_flags = SA_RESETHAND;
        else sa.sa_handler = SIG_IGN;
        sigaction(SIGSEGV, &sa, &was);
        printf("before it: %s\n", was.sa_handler == SIG_DFL ? "SIG_DFL" : "another handler");
        fflush(stdout);
        crash_in_program_code(0);
    }
    printf("before crash\n");
    if (!strcmp(mode, "survive") || !strcmp(mode, "replace")) {
        if (!sigsetjmp(recover, 1)) crash_in_program_code(0);
        printf("recovered\n");
        return 0;
    }
    fflush(stdout);
    if (!strcmp(mode, "sync")) cuCtxSynchronize();
    else if (!strcmp(mode, "launch")) cuLaunchKernel((void *)0x1234, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    else if (!strcmp(mode, "callback")) cuLaunchHostFunc(NULL, bad_host_callback, NULL);
    else if (!strcmp(mode, "abort")) abort();
    else if (!strcmp(mode, "cxx")) engine_execute();
    else if (!strcmp(mode, "fpe")) printf("%d\n", divide_by(0));
    else crash_in_program_code(3);
    printf("not reached\n");
    return 0;
}
