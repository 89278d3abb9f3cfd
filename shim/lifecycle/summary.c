/* The closing summary: per-API call and error counts, drops, and a short note on stderr when
 * something failed (or CUDASHIM_SUMMARY=1). It is the trace's last line. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/json.h"
#include "../process/process.h"
#include "../process/state.h"
#include "../loader/loader.h"
#include "../trace/findings.h"
#include "../trace/trace.h"
#include "../evidence/driver_ask.h"
#include "lifecycle.h"


static uint64_t calls[CS_API_TOTAL], errors[CS_API_TOTAL];

void cs_summary_counts(uint64_t c[], uint64_t e[])
{
    memset(c, 0, sizeof calls);
    memset(e, 0, sizeof errors);
    for (struct cs_thread *t = cs_thread_list(); t; t = t->next)
        for (int i = 0; i < CS_API_TOTAL; i++) c[i] += t->calls[i], e[i] += t->errors[i];
}

void cs_summary_write(void)
{
    uint64_t dropped = 0, total = 0, failed = 0;
    int threads = 0;
    cs_summary_counts(calls, errors);
    for (struct cs_thread *t = cs_thread_list(); t; t = t->next) threads++, dropped += t->dropped;
    for (int i = 0; i < CS_API_TOTAL; i++) total += calls[i], failed += errors[i];
    if (!total)
        return;  /* nothing was called in this process (e.g. a forked child that never used CUDA) */

    static char line[1 << 16];
    struct cs_buf b = { line, 0, sizeof line - 2 };
    cs_put(&b, "{\"type\":\"summary\",\"calls\":{");
    for (int i = 0, first = 1; i < CS_API_TOTAL; i++)
        if (calls[i]) {
            if (!first) cs_put(&b, ",");
            first = 0;
            cs_put_str(&b, cs_api_name(i)); cs_put(&b, ":"); cs_put_u64(&b, calls[i]);
        }
    cs_put(&b, "},\"errors\":{");
    for (int i = 0, first = 1; i < CS_API_TOTAL; i++)
        if (errors[i]) {
            if (!first) cs_put(&b, ",");
            first = 0;
            cs_put_str(&b, cs_api_name(i)); cs_put(&b, ":"); cs_put_u64(&b, errors[i]);
        }
    cs_put(&b, "},\"own_calls\":{");
    for (int i = 0, first = 1; i < CS_API_TOTAL; i++)
        if (atomic_load(&cs_own_calls[i])) {
            if (!first) cs_put(&b, ",");
            first = 0;
            cs_put_str(&b, cs_api_name(i)); cs_put(&b, ":"); cs_put_u64(&b, atomic_load(&cs_own_calls[i]));
        }
    cs_put(&b, "},\"total_calls\":"); cs_put_u64(&b, total);
    cs_put(&b, ",\"total_errors\":"); cs_put_u64(&b, failed);
    cs_put(&b, ",\"dropped\":"); cs_put_u64(&b, dropped);
    cs_put(&b, ",\"suppressed\":"); cs_put_u64(&b, atomic_load(&cs_suppressed));
    cs_put(&b, ",\"threads\":"); cs_put_u64(&b, (uint64_t)threads);
    /* Loss is always said: lines written, lines that could not be written (a full disk, a
     * file-size limit, a descriptor the program took over), lines cut to fit. */
    cs_put(&b, ",\"lines\":{\"written\":"); cs_put_u64(&b, atomic_load(&cs_lines_written) + 1);
    cs_put(&b, ",\"unwritable\":"); cs_put_u64(&b, atomic_load(&cs_lines_unwritable));
    cs_put(&b, ",\"truncated\":"); cs_put_u64(&b, atomic_load(&cs_lines_truncated)); cs_put(&b, "}");
    cs_put(&b, ",\"findings\":{\"error\":"); cs_put_u64(&b, (uint64_t)(cs_findings_count(CS_ERROR)));
    cs_put(&b, ",\"warning\":"); cs_put_u64(&b, (uint64_t)(cs_findings_count(CS_WARNING) - cs_findings_count(CS_ERROR)));
    cs_put(&b, "}");
    cs_put(&b, "}\n");
    if (b.len >= sizeof line - 2) {  /* never leave a cut line: fall back to the totals */
        b.len = 0;
        cs_put(&b, "{\"type\":\"summary\",\"truncated\":true,\"total_calls\":"); cs_put_u64(&b, total);
        cs_put(&b, ",\"total_errors\":"); cs_put_u64(&b, failed);
        cs_put(&b, ",\"dropped\":"); cs_put_u64(&b, dropped); cs_put(&b, "}\n");
    }
    cs_write_line(line, b.len);

    if ((!failed && !dropped && !cs_cfg.summary) || !cs_cfg.stderr_on)
        return;
    char msg[4096];
    struct cs_buf m = { msg, 0, sizeof msg - 1 };
    /* One line: the counts, the APIs that failed most (the trace has each call), where the trace
     * is. The findings follow (findings.c), a line or two each: the block stays short. */
    cs_put(&m, "cudashim: ");
    cs_put_u64(&m, total); cs_put(&m, " calls traced, ");
    cs_put_u64(&m, failed); cs_put(&m, " failed");
    int shown = 0, apis = 0, named[3];
    for (int i = 0; i < CS_API_TOTAL; i++) apis += errors[i] != 0;
    while (shown < 3 && shown < apis) {  /* the three that failed most */
        int best = -1;
        for (int i = 0; i < CS_API_TOTAL; i++) {
            int taken = 0;
            for (int k = 0; k < shown; k++) taken |= named[k] == i;
            if (errors[i] && !taken && (best < 0 || errors[i] > errors[best])) best = i;
        }
        cs_put(&m, shown ? ", " : " ("); cs_put(&m, cs_api_name(best)); cs_put(&m, " x"); cs_put_u64(&m, errors[best]);
        named[shown++] = best;
    }
    if (shown) {
        if (apis > shown) { cs_put(&m, ", "); cs_put_u64(&m, (uint64_t)(apis - shown)); cs_put(&m, " more APIs"); }
        cs_put(&m, ")");
    }
    if (dropped) { cs_put(&m, ", "); cs_put_u64(&m, dropped); cs_put(&m, " events dropped"); }
    int complete = cs_trace_complete();
    uint64_t lost = atomic_load(&cs_lines_unwritable);
    if (complete) {
        cs_put(&m, "; trace: "); cs_put(&m, cs_trace_path()); cs_put(&m, "\n");
    } else if (atomic_load(&cs_lines_written)) {
        cs_put(&m, "; trace (incomplete: "); cs_put_u64(&m, lost);
        cs_put(&m, " lines could not be written): "); cs_put(&m, cs_trace_path()); cs_put(&m, "\n");
    } else {
        cs_put(&m, "; no trace could be written (see the message above)\n");
    }
    (void)!write(2, msg, m.len);
}
