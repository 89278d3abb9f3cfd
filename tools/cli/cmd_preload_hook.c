/* cudashim preload-hook LIB: an OCI createContainer hook (the CDI spec in packaging/cdi/ names
 * it) that adds LIB to the container's /etc/ld.so.preload, keeping the lines the image has and
 * leaving its LD_PRELOAD alone: CDI can only set a variable, which would replace an image's own
 * preload. The runtime gives the container's state on stdin; its bundle's config.json says where
 * the root is. The root is the image's, so nothing in it is followed out of it: etc and the file
 * are opened without following links, and one that is a link is refused. As a hook it never
 * fails the container: a root it cannot add the line to starts without the shim, and says why on
 * stderr (the runtime's log); with --root the status says it. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum { HOOK_FAILED = 1 };

static int usage(FILE *f)
{
    fprintf(f, "usage: cudashim preload-hook LIB [--root DIR]\n"
               "  An OCI createContainer hook: adds LIB to the container's /etc/ld.so.preload (once,\n"
               "  after the image's own lines). The container's state comes on stdin, as the runtime\n"
               "  gives it; --root DIR names the root instead (to prepare an image or a chroot).\n");
    return f == stdout ? EXIT_CLEAN : EXIT_USAGE;
}

/* The root from the state's bundle: config.json's root.path, relative to the bundle. */
static int root_from_state(char *root, size_t cap)
{
    json_error_t err;
    json_t *state = json_loadf(stdin, 0, &err);
    const char *bundle = state ? json_string_value(json_object_get(state, "bundle")) : NULL;
    if (!bundle || !*bundle) {
        fprintf(stderr, "cudashim preload-hook: no bundle in the container state on stdin\n");
        json_decref(state);
        return 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", bundle);
    json_t *config = json_load_file(path, 0, &err);
    const char *rp = config ? json_string_value(json_object_get(json_object_get(config, "root"), "path")) : NULL;
    int ok = rp && *rp;
    if (!ok) fprintf(stderr, "cudashim preload-hook: no root.path in %s\n", path);
    else if (rp[0] == '/') snprintf(root, cap, "%s", rp);
    else snprintf(root, cap, "%s/%s", bundle, rp);
    json_decref(config);
    json_decref(state);
    return ok;
}

/* Whether the file at fd already has LIB as one of its lines. */
static int has_line(int fd, const char *lib, int *ends_in_newline)
{
    char buf[65536];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) { *ends_in_newline = 1; return 0; }
    buf[n] = 0;
    *ends_in_newline = buf[n - 1] == '\n';
    size_t len = strlen(lib);
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, lib, len) && (line[len] == '\n' || line[len] == 0 || line[len] == ' ')) return 1;
    return 0;
}

static int add_line(const char *root, const char *lib)
{
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) { fprintf(stderr, "cudashim preload-hook: %s: %s\n", root, strerror(errno)); return HOOK_FAILED; }
    if (mkdirat(rfd, "etc", 0755) && errno != EEXIST) {
        fprintf(stderr, "cudashim preload-hook: %s/etc: %s\n", root, strerror(errno));
        close(rfd);
        return HOOK_FAILED;
    }
    int efd = openat(rfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(rfd);
    if (efd < 0) {
        fprintf(stderr, "cudashim preload-hook: %s/etc: %s (a link is not followed out of the container's root)\n", root,
                strerror(errno));
        return HOOK_FAILED;
    }
    int fd = openat(efd, "ld.so.preload", O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    close(efd);
    if (fd < 0) {
        fprintf(stderr, "cudashim preload-hook: %s/etc/ld.so.preload: %s (a link is not followed out of the container's root)\n",
                root, strerror(errno));
        return HOOK_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "cudashim preload-hook: %s/etc/ld.so.preload is not a regular file\n", root);
        close(fd);
        return HOOK_FAILED;
    }
    int nl = 1, rc = EXIT_CLEAN;
    if (!has_line(fd, lib, &nl)) {
        char line[4200];
        int n = snprintf(line, sizeof line, "%s%s\n", nl ? "" : "\n", lib);
        if (write(fd, line, (size_t)n) != n) {
            fprintf(stderr, "cudashim preload-hook: writing %s/etc/ld.so.preload: %s\n", root, strerror(errno));
            rc = HOOK_FAILED;
        }
    }
    close(fd);
    return rc;
}

int cmd_preload_hook(int argc, char **argv)
{
    const char *lib = NULL, *root_arg = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout);
        if (!strcmp(argv[i], "--root") && i + 1 < argc) root_arg = argv[++i];
        else if (argv[i][0] != '-' && !lib) lib = argv[i];
        else return usage(stderr);
    }
    if (!lib || lib[0] != '/' || strchr(lib, '\n') || strchr(lib, ' ')) {
        fprintf(stderr, "cudashim preload-hook: LIB must be an absolute path without spaces\n");
        return EXIT_USAGE;
    }
    char root[4096];
    if (root_arg) snprintf(root, sizeof root, "%s", root_arg);
    else if (!root_from_state(root, sizeof root)) return EXIT_CLEAN;
    int rc = add_line(root, lib);
    return root_arg ? rc : EXIT_CLEAN;
}
