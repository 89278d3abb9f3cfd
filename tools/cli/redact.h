/* Redaction for bug reports (redact.c). */
#ifndef CS_REDACT_H
#define CS_REDACT_H
#include <stdio.h>
#include <stddef.h>

struct redact_opts { const char **hosts; int nhosts; };
int redact_is_secret_name(const char *name, size_t len);
char *redact_text(const char *in, const struct redact_opts *o);  /* malloc'd */
#endif
