/* Findings: the rules' output. One "finding" line per (finding, key), kept for the exit
 * summary and for a trace continued in a new file. */
#ifndef CUDASHIM_FINDINGS_H
#define CUDASHIM_FINDINGS_H

enum cs_severity { CS_INFO, CS_WARNING, CS_ERROR };

enum cs_finding_id {
#define CS_FINDING(name, id, severities, title) CS_F_##name,
#include "findings_table.h"
#undef CS_FINDING
    CS_F_COUNT
};

struct cs_finding_row { const char *id, *severities, *title; };
extern const struct cs_finding_row cs_finding_rows[CS_F_COUNT];

void cs_finding(enum cs_finding_id f, enum cs_severity sev, const char *key, const char *summary, const char *fix,
                const char *evidence_json);
void cs_findings_stderr(void);
void cs_findings_after_fork(void);
void cs_findings_rewrite(void);   /* every finding again, into a new trace part */
int cs_findings_count(enum cs_severity min);
int cs_finding_said(int i, const char **id, enum cs_severity *sev);  /* the i-th said (0..), 0 past the last */

#endif
