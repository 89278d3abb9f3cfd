/* Every file the shim creates: traces, calls files, metrics. The shim may run in a process of
 * root's or a privileged one, writing into a directory someone else can change, so a file is
 * only ever made new (O_EXCL), never through a link (O_NOFOLLOW), with the trace's mode, and in a
 * directory where no other user can swap or plant files. No allocation: this runs in hooks. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process.h"

int cs_file_mode(void)
{
    return cs_cfg.group_readable ? 0640 : 0600;
}

/* A directory every user may write that is not sticky lets anyone rename or replace what the
 * shim made. A process of root's (or a privileged one) writes only where root or it owns the
 * directory: another owner could swap the directory for a link between the check and the
 * create. An ordinary user writing as itself gains nothing from such a swap, so a team's shared
 * directory owned by a colleague stays usable. */
const char *cs_dir_refusal(const char *dir)
{
    if (cs_secure() && dir[0] != '/')
        return "a privileged (setuid, setgid or file-capability) process writes only into an absolute directory "
               "that " CS_CONFIG_FILE " names, never where its caller stands";
    struct stat st;
    if (stat(dir, &st)) return NULL;  /* the create fails and says why */
    if (!S_ISDIR(st.st_mode)) return "not a directory";
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        return "the directory is writable by every user and not sticky (chmod +t)";
    uid_t me = geteuid();
    if ((me == 0 || cs_secure()) && st.st_uid != 0 && st.st_uid != me)
        return "a process running as root or privileged writes only into directories owned by root or by itself";
    return NULL;
}

int cs_create_file(const char *path, int flags, const char **why)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= sizeof dir) { errno = ENAMETOOLONG; return -1; }
    if (slash) memcpy(dir, path, n ? n : 1), dir[n ? n : 1] = 0;
    else dir[0] = '.', dir[1] = 0;
    *why = cs_dir_refusal(dir);
    if (*why) { errno = EPERM; return -1; }
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, cs_file_mode());
}

/* A rank or host name from the environment goes into a file name as one plain component: a
 * value like "../x" never moves the file. */
void cs_file_name_part(char *out, size_t cap, const char *v)
{
    size_t n = 0;
    for (; *v && n + 1 < cap; v++) {
        char c = *v;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                    (c == '.' && v[1] != '.' && n);
        out[n++] = plain ? c : '_';
    }
    out[n] = 0;
}

long cs_read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 && cap > 1 ? read(fd, buf, cap - 1) : -1;
    if (fd >= 0) close(fd);
    if (n < 0) return -1;
    buf[n] = 0;
    return (long)n;
}
