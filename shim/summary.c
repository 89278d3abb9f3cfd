/* The closing summary: per-API call and error counts, drops, and a short note on stderr when
 * something failed (or CUDASHIM_SUMMARY=1). It is the trace's last line. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "inventory.h"

extern uint64_t _Atomic cs_suppressed, cs_lines_written, cs_lines_unwritable, cs_lines_truncated;

static uint64_t calls[CS_API_TOTAL], errors[CS_API_TOTAL];

void cs_summary_write(void)
{
    uint64_t dropped = 0, total = 0, failed = 0;
    int threads = 0;
    memset(calls, 0, sizeof calls);
    memset(errors, 0, sizeof errors);
    for (struct cs_thread *t = cs_thread_list(); t; t = t->next) {
        threads++;
        dropped += t->dropped;
        for (int i = 0; i < CS_API_TOTAL; i++) {
            calls[i] += t->calls[i];
            errors[i] += t->errors[i];
        }
    }
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
    cs_put(&m, "cudashim: ");
    cs_put_u64(&m, total); cs_put(&m, " calls traced, ");
    cs_put_u64(&m, failed); cs_put(&m, " failed");
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
    int shown = 0;
    for (int i = 0; i < CS_API_TOTAL && shown < 8; i++)
        if (errors[i]) {
            cs_put(&m, "  "); cs_put(&m, cs_api_name(i)); cs_put(&m, ": ");
            cs_put_u64(&m, errors[i]); cs_put(&m, errors[i] == 1 ? " failure\n" : " failures\n");
            shown++;
        }
    if (failed && complete)
        cs_put(&m, "  each failing call is in the trace with its result name (docs/trace-format.md)\n");
    (void)!write(2, msg, m.len);
}
