/* dlerror: the loader's own words when a CUDA library fails to load ("undefined symbol:
 * __nvJitLinkAddData_12_1", "libcudnn_cnn_infer.so.8: cannot open shared object file"). The
 * program gets exactly the message it would have got; the shim reads it on the way past.
 *
 * dlopen itself is never wrapped (see docs/HACKING.md): its caller decides the search path. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <string.h>

#include "../process/state.h"
#include "../loader/loader.h"
#include "../diagnose/diagnose.h"
#include "../lifecycle/lifecycle.h"

typedef char *(*dlerror_fn)(void);
static dlerror_fn _Atomic real_dlerror;
static __thread char copy[4096] __attribute__((tls_model("initial-exec")));

/* Only the loader's words about the CUDA stack wake the shim: other programs' (and sanitizer
 * runtimes') failed lookups are none of its business. */
static int worth_reading(const char *m)
{
    if (!strstr(m, "undefined symbol") && !strstr(m, "cannot open shared object") && !strstr(m, "' not found"))
        return 0;
    static const char *const words[] = { "libcu", "libnv", "nccl", "cudnn", "cublas", "cusparse", "cufft", "curand",
                                         "cusolver", "nvJitLink", "nvrtc", "cuda" };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(m, words[i])) return 1;
    return 0;
}

static char *hook(void)
{
    dlerror_fn f = atomic_load(&real_dlerror);
    if (!f) {
        f = (dlerror_fn)cs_elf_next("dlerror", (void *)hook);
        if (!f) return NULL;
        atomic_store(&real_dlerror, f);
    }
    char *m = f();
    if (!m || cs_disabled || (cs_self() && cs_self()->hide) || !worth_reading(m) || strlen(m) >= sizeof copy)
        return m;
    /* The diagnosis uses dlopen/dlsym, which may replace the loader's message buffer: hand the
     * program a copy (valid, like the original, until its next dlerror on this thread). */
    int e = errno;
    snprintf(copy, sizeof copy, "%s", m);
    if (cs_init()) {
        struct cs_thread *t = cs_hide();
        cs_diagnose_dlerror(copy);
        cs_unhide(t);
        f();  /* drop any message the diagnosis itself left behind */
    }
    errno = e;
    return copy;
}

CS_EXPORT char *cs_dlerror_v1(void) __asm__("cs_dlerror_v1");
CS_EXPORT char *cs_dlerror_v2(void) __asm__("cs_dlerror_v2");
char *cs_dlerror_v1(void) { return hook(); }
char *cs_dlerror_v2(void) { return hook(); }
#if defined(__x86_64__)
__asm__(".symver cs_dlerror_v1, dlerror@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver cs_dlerror_v1, dlerror@GLIBC_2.17");
#endif
__asm__(".symver cs_dlerror_v2, dlerror@@GLIBC_2.34");
