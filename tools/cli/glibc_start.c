/* The command's start on glibc older than the build's (shim/base/glibc_floor.h).
 *
 * The C start file of glibc 2.34 and later calls __libc_start_main@GLIBC_2.34, which no older
 * glibc has, and passes no constructor function, because the newer glibc runs the program's
 * constructors itself. The link sends that call here (--wrap=__libc_start_main), and this calls
 * the oldest version with a function that runs the constructors: older glibc calls it, newer
 * glibc calls it too (a program that passes one is an older program to it) and then does not run
 * them again. Destructors need nothing: every glibc runs the program's from the loader. */
#include <stddef.h>

#ifdef CS_GLIBC_OLDEST
typedef int (*cs_main_fn)(int, char **, char **);
typedef void (*cs_init_fn)(int, char **, char **);

extern int cs_oldest_start_main(cs_main_fn, int, char **, cs_init_fn, void (*)(void), void (*)(void), void *);
__asm__(".symver cs_oldest_start_main,__libc_start_main@" CS_GLIBC_OLDEST);

extern cs_init_fn __preinit_array_start[] __attribute__((weak)), __preinit_array_end[] __attribute__((weak));
extern cs_init_fn __init_array_start[] __attribute__((weak)), __init_array_end[] __attribute__((weak));

static void run_constructors(int argc, char **argv, char **envp)
{
    for (cs_init_fn *f = __preinit_array_start; f < __preinit_array_end; f++) (*f)(argc, argv, envp);
    for (cs_init_fn *f = __init_array_start; f < __init_array_end; f++) (*f)(argc, argv, envp);
}

int __wrap___libc_start_main(cs_main_fn main, int argc, char **argv, cs_init_fn init, void (*fini)(void),
                             void (*rtld_fini)(void), void *stack_end)
{
    (void)init; (void)fini;
    return cs_oldest_start_main(main, argc, argv, run_constructors, NULL, rtld_fini, stack_end);
}
#endif
