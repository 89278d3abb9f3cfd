/* The LLVM OpenMP pattern: a library asks dlsym(RTLD_NEXT, name) for the definition after itself.
 * A dlsym hook that is not a true tail call makes this return next_a's own function. */
#include <dlfcn.h>
int probe_tool(void) { return 1; }
int next_a_lookup(void)
{
    int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "probe_tool");
    return f ? f() : 0;
}
