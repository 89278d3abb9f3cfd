/* Bounded JSON text without malloc or stdio: usable from any thread, a forked child, or (with
 * care) a signal handler. Output that does not fit is cut, never overrun. */
#include <string.h>

#include "json.h"

void cs_putn(struct cs_buf *b, const char *s, size_t n)
{
    if (b->len >= b->cap) return;
    if (n > b->cap - b->len) n = b->cap - b->len;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void cs_put(struct cs_buf *b, const char *s) { cs_putn(b, s, strlen(s)); }

void cs_put_str(struct cs_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    cs_putn(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            cs_putn(b, e, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            cs_putn(b, e, 6);
        } else {
            cs_putn(b, (const char *)&c, 1);
        }
    }
    cs_putn(b, "\"", 1);
}

static void put_digits(struct cs_buf *b, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do tmp[--i] = (char)('0' + v % 10); while ((v /= 10));
    cs_putn(b, tmp + i, sizeof tmp - (size_t)i);
}

/* Readers take JSON integers as int64: from 2^63 up a count is written as a decimal string. */
void cs_put_u64(struct cs_buf *b, uint64_t v)
{
    if (v > (uint64_t)INT64_MAX) cs_putn(b, "\"", 1);
    put_digits(b, v);
    if (v > (uint64_t)INT64_MAX) cs_putn(b, "\"", 1);
}

const char *cs_num(char tmp[24], uint64_t v)
{
    struct cs_buf b = { tmp, 0, 23 };
    cs_put_u64(&b, v);
    tmp[b.len] = 0;
    return tmp;
}

void cs_put_i64(struct cs_buf *b, int64_t v)
{
    if (v < 0) {
        cs_putn(b, "-", 1);
        put_digits(b, (uint64_t)0 - (uint64_t)v);
    } else {
        cs_put_u64(b, (uint64_t)v);
    }
}

void cs_put_hex(struct cs_buf *b, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[20];
    int i = sizeof tmp;
    do tmp[--i] = hex[v & 15]; while ((v >>= 4));
    cs_putn(b, "\"0x", 3);
    cs_putn(b, tmp + i, sizeof tmp - (size_t)i);
    cs_putn(b, "\"", 1);
}
