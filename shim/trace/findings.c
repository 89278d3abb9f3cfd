/* Findings: "found X, which needs Y; do Z", with a stable id, a severity, evidence and a fix.
 * Written to the trace as soon as known; repeated on stderr at exit. docs/diagnoses.md has a
 * section per id. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/json.h"
#include "../process/locks.h"
#include "../process/process.h"
#include "findings.h"
#include "trace.h"

const struct cs_finding_row cs_finding_rows[CS_F_COUNT] = {
#define CS_FINDING(name, id, severities, title) [CS_F_##name] = { id, severities, title },
#include "findings_table.h"
#undef CS_FINDING
};

#define MAX_FINDINGS 64
static struct kept { enum cs_finding_id f; char key[256], summary[1024], fix[1024], evidence[2048]; enum cs_severity sev; } kept[MAX_FINDINGS];
static int nkept;
static const char *const sev_names[] = { "info", "warning", "error" };
static void write_finding(const char *id, const char *key, enum cs_severity sev, const char *summary,
                          const char *fix, const char *evidence_json);

void cs_finding(enum cs_finding_id f, enum cs_severity sev, const char *key, const char *summary, const char *fix,
                const char *evidence_json)
{
    if ((unsigned)f >= CS_F_COUNT) return;
    const char *id = cs_finding_rows[f].id;
    cs_lock(CS_LOCK_FINDINGS);
    /* Said once per (id, key). A cause that learns more (a driver too old for one more library)
     * is said again, whole, with the same key: readers keep the last. */
    int i;
    for (i = 0; i < nkept; i++)
        if (kept[i].f == f && !strcmp(kept[i].key, key ? key : "")) {
            if (!strcmp(kept[i].summary, summary)) {
                cs_unlock(CS_LOCK_FINDINGS);
                return;
            }
            break;
        }
    if (i < nkept || nkept < MAX_FINDINGS) {
        struct kept *k = &kept[i < nkept ? i : nkept++];
        k->f = f;
        snprintf(k->key, sizeof k->key, "%s", key ? key : "");
        snprintf(k->summary, sizeof k->summary, "%s", summary);
        snprintf(k->fix, sizeof k->fix, "%s", fix);
        /* kept whole or not at all: a cut JSON object would make the rewritten line invalid */
        snprintf(k->evidence, sizeof k->evidence, "%s",
                 evidence_json && *evidence_json && strlen(evidence_json) < sizeof k->evidence ? evidence_json : "{}");
        k->sev = sev;
    }
    cs_unlock(CS_LOCK_FINDINGS);
    write_finding(id, key ? key : "", sev, summary, fix, evidence_json);
}

/* A trace continued in a new file (CUDASHIM_TRACE_MAX) says every finding again. */
void cs_findings_rewrite(void)
{
    cs_lock(CS_LOCK_FINDINGS);
    int n = nkept;
    cs_unlock(CS_LOCK_FINDINGS);
    for (int i = 0; i < n; i++)
        write_finding(cs_finding_rows[kept[i].f].id, kept[i].key, kept[i].sev, kept[i].summary, kept[i].fix, kept[i].evidence);
}

static void write_finding(const char *id, const char *key, enum cs_severity sev, const char *summary,
                          const char *fix, const char *evidence_json)
{
    char line[8192];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    cs_put(&b, "{\"type\":\"finding\",\"id\":"); cs_put_str(&b, id);
    cs_put(&b, ",\"key\":"); cs_put_str(&b, key);
    cs_put(&b, ",\"severity\":"); cs_put_str(&b, sev_names[sev]);
    cs_put(&b, ",\"summary\":"); cs_put_str(&b, summary);
    cs_put(&b, ",\"fix\":"); cs_put_str(&b, fix);
    cs_put(&b, ",\"evidence\":"); cs_put(&b, evidence_json && *evidence_json ? evidence_json : "{}");
    cs_put(&b, "}\n");
    if (b.len >= sizeof line - 2) {  /* evidence too large: keep the line valid, drop the evidence */
        b.len = 0;
        cs_put(&b, "{\"type\":\"finding\",\"id\":"); cs_put_str(&b, id);
        cs_put(&b, ",\"severity\":"); cs_put_str(&b, sev_names[sev]);
        cs_put(&b, ",\"summary\":"); cs_put_str(&b, summary);
        cs_put(&b, ",\"fix\":"); cs_put_str(&b, fix);
        cs_put(&b, ",\"evidence\":{\"truncated\":true}}\n");
    }
    cs_write_line(line, b.len);
}

/* A forked child says its own findings, not its parent's again. */
void cs_findings_after_fork(void) { nkept = 0; }

int cs_finding_said(int i, const char **id, enum cs_severity *sev)
{
    if (i < 0 || i >= nkept) return 0;
    *id = cs_finding_rows[kept[i].f].id, *sev = kept[i].sev;
    return 1;
}

int cs_findings_count(enum cs_severity min)
{
    int n = 0;
    for (int i = 0; i < nkept; i++) n += kept[i].sev >= min;
    return n;
}

/* The plain-language diagnosis at exit: errors first, a line for what was found and one for its
 * fix, three causes at most (the rest: cudashim report), so the block stays under a dozen lines. */
#define STDERR_FINDINGS 3
void cs_findings_stderr(void)
{
    char msg[16384];
    struct cs_buf m = { msg, 0, sizeof msg - 1 };
    int said = 0, more = 0;
    for (int s = CS_ERROR; s >= CS_WARNING; s--)
        for (int i = 0; i < nkept; i++) {
            if (kept[i].sev != (enum cs_severity)s) continue;
            if (said == STDERR_FINDINGS) { more++; continue; }
            cs_put(&m, "cudashim: "); cs_put(&m, sev_names[s]); cs_put(&m, " ["); cs_put(&m, cs_finding_rows[kept[i].f].id);
            cs_put(&m, "] "); cs_put(&m, kept[i].summary); cs_put(&m, "\n  fix: "); cs_put(&m, kept[i].fix);
            cs_put(&m, "\n");
            said++;
        }
    if (more) {
        char n[24];
        snprintf(n, sizeof n, "%d", more);
        cs_put(&m, "cudashim: "); cs_put(&m, n); cs_put(&m, more == 1 ? " more finding" : " more findings");
        cs_put(&m, ": cudashim report "); cs_put(&m, cs_trace_complete() ? cs_trace_path() : "TRACE"); cs_put(&m, "\n");
    }
    if (m.len && cs_cfg.stderr_on) {
        cs_put(&m, "  (details: docs/diagnoses.md");
        if (cs_trace_complete()) { cs_put(&m, "; trace: "); cs_put(&m, cs_trace_path()); }
        cs_put(&m, ")\n");
        (void)!write(2, msg, m.len);
    }
}
