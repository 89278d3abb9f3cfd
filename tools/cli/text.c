/* Terminal output: colour only on a tty and never with NO_COLOR, lines of at most 100 columns,
 * the home directory written as ~. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_color;

void cli_color_init(void)
{
    const char *nc = getenv("NO_COLOR");
    cli_color = isatty(1) && !(nc && *nc) && strcmp(getenv("TERM") ? getenv("TERM") : "", "dumb");
}

const char *c_red(void) { return cli_color ? "\033[31m" : ""; }
const char *c_yellow(void) { return cli_color ? "\033[33m" : ""; }
const char *c_bold(void) { return cli_color ? "\033[1m" : ""; }
const char *c_dim(void) { return cli_color ? "\033[2m" : ""; }
const char *c_reset(void) { return cli_color ? "\033[0m" : ""; }

/* Word-wrap text after prefix; continuation lines are indented by the prefix's width. A word
 * longer than a line (a path) gets a line of its own rather than being cut. */
void wrap(FILE *f, const char *prefix, const char *text, int width)
{
    int indent = (int)strlen(prefix), col = indent, first_word = 1;
    fputs(prefix, f);
    const char *p = text;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        int n = (int)strcspn(p, " ");
        if (!first_word && col + 1 + n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (!first_word) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, (size_t)n, f);
        col += n;
        p += n;
        first_word = 0;
    }
    fputc('\n', f);
}

/* Every path in the text that starts at the home directory ("LD_LIBRARY_PATH entry /root/x"),
 * not one that merely contains it (/data/root/x). */
const char *home_tilde(const char *text, char *buf, size_t cap)
{
    const char *home = getenv("HOME");
    size_t h = home ? strlen(home) : 0, n = 0;
    if (!cap) return buf;
    for (const char *p = text; *p && n + 1 < cap;) {
        int starts = p == text || strchr(" :=(\"'", p[-1]);
        if (h > 1 && starts && !strncmp(p, home, h) && (p[h] == '/' || !p[h] || strchr(" :;,)\"'", p[h]))) {
            buf[n++] = '~';
            p += h;
        } else {
            buf[n++] = *p++;
        }
    }
    buf[n] = 0;
    return buf;
}

void rule(FILE *f, const char *title)
{
    fprintf(f, "\n%s%s%s\n", c_bold(), title, c_reset());
}

/* The finding's row in the shim's table, or NULL for an id this build does not know (a trace
 * written by a newer shim). */
const char *finding_title(const char *id)
{
    static const char *const rows[][2] = {
#define CS_FINDING(name, fid, severities, title) { fid, title },
#include "../../shim/trace/findings_table.h"
#undef CS_FINDING
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i][0], id)) return rows[i][1];
    return NULL;
}
