/* cudashim: run programs under libcudashim.so and read the traces it writes. */
#include <string.h>

#include "cli.h"

#ifndef CS_VERSION
#define CS_VERSION "0.1.0"
#endif

static const struct { const char *name; int (*fn)(int, char **); const char *what; } commands[] = {
    { "run", cmd_run, "run a program under the shim, then print the diagnosis" },
    { "report", cmd_report, "the crash, findings, failing calls and libraries of traces" },
    { "diff", cmd_diff, "what changed between a working and a broken run" },
    { "export", cmd_export, "convert a trace (--chrome: Chrome Trace Event JSON for Perfetto)" },
    { "inspect", cmd_inspect, "which GPU architectures and PTX versions a binary holds, and would they run" },
    { "bugreport", cmd_bugreport, "one redacted Markdown file to paste into an issue" },
    { "check", cmd_check, "what this machine has, its conflicts, and what would work (--want torch==2.9)" },
    { "preload-hook", cmd_preload_hook, "an OCI createContainer hook: the shim added to a container's /etc/ld.so.preload" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim COMMAND [options] ...\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\n'cudashim help COMMAND' (or 'cudashim COMMAND --help') says more; -V prints the version;\n"
               "man cudashim has it all.\n");
}

int main(int argc, char **argv)
{
    cli_color_init();
    if (argc >= 3 && !strcmp(argv[1], "help")) {  /* cudashim help report == cudashim report --help */
        char *args[] = { argv[2], "--help", NULL };
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
            if (!strcmp(argv[2], commands[i].name)) return commands[i].fn(2, args);
        fprintf(stderr, "cudashim: no command '%s'\n", argv[2]);
        usage(stderr);
        return EXIT_USAGE;
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_CLEAN;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) { printf("cudashim %s\n", CS_VERSION); return EXIT_CLEAN; }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "cudashim: no command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
