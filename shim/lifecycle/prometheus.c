/* CUDASHIM_PROMETHEUS_DIR: at exit the process writes its metrics (metrics_table.h) in Prometheus's
 * text format into that directory, for node_exporter's textfile collector: the findings it said,
 * the driver and libraries it loaded, its failing calls per API. One file per process,
 * cudashim-HOST-RANK.prom (a rerun of the rank replaces it) or cudashim-HOST-pPID.prom, written to
 * a temporary name and renamed (the collector never reads half a file); the directory keeps the
 * newest 256 such files. Crashes and hangs are in the trace (`cudashim export --prometheus`). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/json.h"
#include "../process/process.h"
#include "../loader/loader.h"
#include "../trace/findings.h"
#include "../trace/trace.h"
#include "../evidence/inventory.h"
#include "lifecycle.h"
#include "../../wrappers/gen/results.h"

#define KEEP_FILES 256

static const struct { const char *name, *type, *help; } metrics[] = {
#define CS_METRIC(id, name, type, help) { name, type, help },
#include "metrics_table.h"
#undef CS_METRIC
};
enum {
#define CS_METRIC(id, name, type, help) M_##id,
#include "metrics_table.h"
#undef CS_METRIC
};

/* A label value: backslash, quote and newline escaped; cut to fit. */
static void put_label(struct cs_buf *b, const char *name, const char *v, int *first)
{
    if (!v) return;
    cs_put(b, *first ? "" : ","), *first = 0;
    cs_put(b, name), cs_put(b, "=\"");
    char one[2] = { 0, 0 };
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') cs_put(b, "\\"), one[0] = *v, cs_put(b, one);
        else if (*v == '\n') cs_put(b, "\\n");
        else one[0] = *v, cs_put(b, one);
    }
    cs_put(b, "\"");
}

static void header(struct cs_buf *b, int m)
{
    cs_put(b, "# HELP "), cs_put(b, metrics[m].name), cs_put(b, " "), cs_put(b, metrics[m].help), cs_put(b, "\n");
    cs_put(b, "# TYPE "), cs_put(b, metrics[m].name), cs_put(b, " "), cs_put(b, metrics[m].type), cs_put(b, "\n");
}

/* The process's own labels, then the metric's. */
static void series(struct cs_buf *b, int m, const char *host, const char *rank, const char *k1, const char *v1,
                   const char *k2, const char *v2, const char *k3, const char *v3, uint64_t value)
{
    int first = 1;
    cs_put(b, metrics[m].name), cs_put(b, "{");
    put_label(b, "host", host, &first);
    put_label(b, "job", cs_cfg.job, &first);
    put_label(b, "rank", rank, &first);
    if (k1) put_label(b, k1, v1, &first);
    if (k2) put_label(b, k2, v2, &first);
    if (k3) put_label(b, k3, v3, &first);
    cs_put(b, "} "), cs_put_u64(b, value), cs_put(b, "\n");
}

static int ours(const struct dirent *d) { return !strncmp(d->d_name, "cudashim-", 9) && strstr(d->d_name, ".prom") &&
                                              !strstr(d->d_name, ".tmp"); }

/* The directory keeps the newest KEEP_FILES files of ours (by modification time). */
static void keep_newest(const char *dir)
{
    struct dirent **list;
    int n = scandir(dir, &list, ours, NULL);
    if (n <= KEEP_FILES) { while (n > 0) free(list[--n]); return; }
    struct { time_t t; char name[256]; } *f = calloc((size_t)n, sizeof *f);
    for (int i = 0; f && i < n; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, list[i]->d_name);
        f[i].t = stat(p, &st) ? 0 : st.st_mtime;
        snprintf(f[i].name, sizeof f[i].name, "%s", list[i]->d_name);
    }
    for (int removed = 0; f && removed < n - KEEP_FILES; removed++) {  /* the oldest, one at a time */
        int oldest = -1;
        for (int i = 0; i < n; i++)
            if (f[i].name[0] && (oldest < 0 || f[i].t < f[oldest].t)) oldest = i;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, f[oldest].name);
        unlink(p);
        f[oldest].name[0] = 0;
    }
    free(f);
    while (n > 0) free(list[--n]);
    free(list);
}

void cs_prometheus_write(void)
{
    const char *dir = cs_cfg.prometheus_dir;
    if (!dir) return;
    char host[256] = "", file[PATH_MAX], tmp[PATH_MAX + 32];
    gethostname(host, sizeof host - 1);
    const char *rank = cs_trace_rank();
    char host_part[256], rank_part[256];
    cs_file_name_part(host_part, sizeof host_part, host);
    cs_file_name_part(rank_part, sizeof rank_part, rank ? rank : "");
    if (rank) snprintf(file, sizeof file, "%s/cudashim-%s-%s.prom", dir, host_part, rank_part);
    else snprintf(file, sizeof file, "%s/cudashim-%s-p%d.prom", dir, host_part, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", file, (int)getpid());
    static char text[1 << 18];
    struct cs_buf b = { text, 0, sizeof text - 2 };
    header(&b, M_PROCESS);
    series(&b, M_PROCESS, host, rank, "shim_version", CS_VERSION, "mode", cs_cfg.trace_all ? "all" : "default",
           NULL, NULL, 1);
    const char *id;
    enum cs_severity sev;
    static const char *const sev_names[] = { "info", "warning", "error" };
    for (int i = 0; cs_finding_said(i, &id, &sev); i++) {
        if (!i) header(&b, M_FINDING);
        series(&b, M_FINDING, host, rank, "id", id, "severity", sev_names[sev], NULL, NULL, 1);
    }
    cs_inventory_rdlock();
    int said_driver = 0, said_library = 0;
    for (int i = 0; i < cs_library_count(); i++) {
        const struct cs_library *l = cs_library_at(i);
        if (!strcmp(l->kind, "driver")) {
            if (!said_driver++) header(&b, M_DRIVER);
            series(&b, M_DRIVER, host, rank, "version", l->file_version[0] ? l->file_version : "unknown", "cuda",
                   l->version[0] ? l->version : "unknown", NULL, NULL, 1);
        } else {
            if (!said_library++) header(&b, M_LIBRARY);
            series(&b, M_LIBRARY, host, rank, "kind", l->kind, "soname", l->soname[0] ? l->soname : l->name, "version",
                   l->version[0] ? l->version : "unknown", 1);
        }
    }
    cs_inventory_unlock();
    static uint64_t calls[CS_API_TOTAL], errors[CS_API_TOTAL];
    cs_summary_counts(calls, errors);
    for (int i = 0, said = 0; i < CS_API_TOTAL; i++) {
        if (!errors[i]) continue;
        if (!said++) header(&b, M_FAILED);
        series(&b, M_FAILED, host, rank, "api", cs_api_name(i), "result", "any", NULL, NULL, errors[i]);
    }
    if (b.len >= sizeof text - 2) return;  /* never half a file */
    /* A temporary name left by an earlier process of this pid, or planted (a link), is removed,
     * never written through. */
    const char *why;
    int fd = cs_create_file(tmp, 0, &why);
    if (fd < 0 && errno == EEXIST && !unlink(tmp)) fd = cs_create_file(tmp, 0, &why);
    if (fd < 0) {
        if (why && cs_cfg.stderr_on) {
            char msg[PATH_MAX + 256];
            int n = snprintf(msg, sizeof msg, "cudashim: no metrics file in %s: %s\n", dir, why);
            (void)!write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : 0);
        }
        return;
    }
    int ok = write(fd, text, b.len) == (ssize_t)b.len;
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, file)) { unlink(tmp); return; }
    keep_newest(dir);
}
