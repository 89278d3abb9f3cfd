/* libFuzzer target for the trace reader and what reads a loaded trace: any bytes must load or be
 * rejected with a message, never crash, hang or read out of bounds; the report and bug-report
 * views (a trace's digest, a job's groups) and the redaction run over whatever loaded.
 * `make fuzz` runs it under ASan and UBSan. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../tools/cli/cli.h"
#include "../../tools/cli/job.h"
#include "../../tools/cli/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("trace", 0);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) { close(fd); return 0; }
    char path[64], err[1024];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct trace t;
    if (trace_load(path, &t, err, sizeof err) == 0) {
        json_decref(report_findings(&t));
        json_decref(report_failures(&t));
        (void)trace_label(&t);
        /* Twice into a job, as a directory of ranks would put it: its groups, what differs,
         * its communicators. */
        struct job j = { 0 };
        for (int i = 0; i < 2; i++) {
            json_t *d = trace_digest(&t, i);
            job_add(&j, d);
            json_decref(d);
        }
        json_decref(job_differences(&j, 1));
        json_decref(stack_groups(&j));
        json_decref(ending_groups(&j));
        json_decref(stuck_collectives(&j));
        int driverless = 0;
        free(driverless_who(&j, &driverless));
        job_free(&j);
    }
    trace_free(&t);
    close(fd);
    /* The same bytes as text through the redaction every bug report goes through. */
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    struct redact_opts o = { 0 };
    free(redact_text(text, &o));
    free(text);
    return 0;
}
