/* What the operands name: trace files, and directories read recursively (a job spreads its
 * ranks over DIR/node-N directories), sorted by path. A directory whose summary (summary.c) is fresh
 * stands for its traces by that one file; a stale one is said and its traces are read. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job.h"

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct source *)a)->path, ((const struct source *)b)->path);
}

char *path_join(const char *dir, const char *name)
{
    char *p;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    if (asprintf(&p, "%.*s/%s", (int)dl, dir, name) < 0) abort();
    return p;
}

/* `cudashim run` writes each run into DIR/run-TIMESTAMP-PID/: a directory that holds no trace
 * itself but such runs is read as its latest run (names sort by time). */
static char *latest_run(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char *best = NULL;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, "run-", 4)) continue;
        if (!best || strcmp(de->d_name, best) > 0) { free(best); best = strdup(de->d_name); }
    }
    if (d) closedir(d);
    char *path = best ? path_join(dir, best) : NULL;
    free(best);
    return path;
}

static void push(struct sources *s, char *path, int summary, int record)
{
    if (s->n == s->cap && !(s->s = realloc(s->s, sizeof *s->s * (size_t)(s->cap = s->cap ? s->cap * 2 : 256)))) abort();
    s->s[s->n++] = (struct source){ path, summary, record };
}

static int is_trace_name(const char *name)
{
    size_t l = strlen(name);
    return l > 6 && !strcmp(name + l - 6, ".jsonl");
}

/* The traces under dir (its own, then its subdirectories', not following links; `cudashim run`'s
 * run-* directories are left to latest_run). Returns how many. */
static int add_dir(const char *dir, int use_summaries, struct sources *s, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    struct strtab names = { 0 };
    char **subdirs = NULL;
    int nsub = 0, found = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (is_trace_name(de->d_name)) { strtab_id(&names, de->d_name); continue; }
        int isdir = de->d_type == DT_DIR;
        if (de->d_type == DT_UNKNOWN) {
            struct stat st;
            char *p = path_join(dir, de->d_name);
            isdir = !lstat(p, &st) && S_ISDIR(st.st_mode);
            free(p);
        }
        if (isdir && strncmp(de->d_name, "run-", 4) && depth < 16) {
            if (!(subdirs = realloc(subdirs, sizeof *subdirs * (size_t)(nsub + 1)))) abort();
            subdirs[nsub++] = path_join(dir, de->d_name);
        }
    }
    closedir(d);
    json_t *summary = use_summaries && names.count ? summary_load(dir) : NULL;
    if (summary && summary_fresh(summary, dir, &names)) {
        if (!(s->summary_dirs = realloc(s->summary_dirs, sizeof *s->summary_dirs * (size_t)(s->nsummaries + 1)))) abort();
        s->summary_dirs[s->nsummaries] = strdup(dir);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(summary, "traces"), i, r)
            push(s, path_join(dir, jstr(r, "file")), s->nsummaries, (int)i);
        s->nsummaries++;
    } else {
        if (summary)
            fprintf(stderr, "cudashim: %s/%s is older than the traces beside it: reading the traces (cudashim report "
                    "--summarize %s writes it again)\n", dir, SUMMARY_NAME, dir);
        for (uint32_t k = 0; k < names.count; k++) push(s, path_join(dir, strtab_str(&names, k)), -1, -1);
    }
    json_decref(summary);
    found += (int)names.count;
    strtab_free(&names);
    for (int k = 0; k < nsub; k++) {
        found += add_dir(subdirs[k], use_summaries, s, depth + 1);
        free(subdirs[k]);
    }
    free(subdirs);
    return found;
}

int sources_collect(int argc, char **argv, int use_summaries, struct sources *s)
{
    int bad = 0;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) { fprintf(stderr, "cudashim: %s: %s\n", argv[i], strerror(errno)); bad = 1; continue; }
        if (!S_ISDIR(st.st_mode)) { push(s, strdup(argv[i]), -1, -1); continue; }
        int found = add_dir(argv[i], use_summaries, s, 0);
        char *run = found ? NULL : latest_run(argv[i]);
        if (run) {
            found = add_dir(run, use_summaries, s, 0);
            fprintf(stderr, "cudashim: reading the latest run, %s (name another run-* directory to read it)\n", run);
            free(run);
        }
        if (!found) { fprintf(stderr, "cudashim: %s: no traces (*.jsonl) in this directory\n", argv[i]); bad = 1; }
    }
    qsort(s->s, (size_t)s->n, sizeof *s->s, by_path);
    return bad ? -1 : 0;
}

void sources_free(struct sources *s)
{
    for (int i = 0; i < s->n; i++) free(s->s[i].path);
    for (int i = 0; i < s->nsummaries; i++) free(s->summary_dirs[i]);
    free(s->s), free(s->summary_dirs);
    memset(s, 0, sizeof *s);
}
