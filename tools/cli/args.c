/* Command-line options for the subcommands that take traces: options anywhere among the
 * operands (report TRACE --json), "--" ends them, an unknown option or a missing value is a usage
 * error with a message. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts, void (*usage)(FILE *),
              char ***operands, int *n)
{
    int done = 0;
    *n = 0;
    *operands = calloc((size_t)argc + 1, sizeof **operands);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (done || a[0] != '-' || !a[1]) { (*operands)[(*n)++] = argv[i]; continue; }
        if (!strcmp(a, "--")) { done = 1; continue; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); free(*operands); return EXIT_CLEAN; }
        const struct cli_opt *o = opts;
        while (o->name && strcmp(o->name, a)) o++;
        if (!o->name) {
            fprintf(stderr, "cudashim %s: unknown option %s\n", cmd, a);
            usage(stderr);
            free(*operands);
            return EXIT_USAGE;
        }
        if (o->value) {
            if (i + 1 >= argc) { fprintf(stderr, "cudashim %s: %s needs a value\n", cmd, a); free(*operands); return EXIT_USAGE; }
            *o->value = argv[++i];
        } else {
            *o->flag = 1;
        }
    }
    if (!*n) { usage(stderr); free(*operands); return EXIT_USAGE; }
    return -1;
}
