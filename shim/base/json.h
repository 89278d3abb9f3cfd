/* Bounded, allocation-free JSON text (json.c): pure, also linked into the cudashim command. */
#ifndef CS_JSON_H
#define CS_JSON_H

#include <stddef.h>
#include <stdint.h>

struct cs_buf { char *p; size_t len, cap; };
void cs_put(struct cs_buf *b, const char *s);
void cs_putn(struct cs_buf *b, const char *s, size_t n);
void cs_put_str(struct cs_buf *b, const char *s);      /* quoted and escaped */
void cs_put_u64(struct cs_buf *b, uint64_t v);  /* 2^63 and above as a decimal string */
const char *cs_num(char tmp[24], uint64_t v);     /* the same, as text for a format */
void cs_put_i64(struct cs_buf *b, int64_t v);
void cs_put_hex(struct cs_buf *b, uint64_t v);

#endif
