/* A program's standard output, run by its argument vector (never through /bin/sh, which a
 * minimal image may not have, and no quoting of a path to get wrong). */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

int capture_output(char *const argv[], unsigned timeout_s, char *buf, size_t cap)
{
    int fds[2];
    buf[0] = 0;
    if (cap < 1 || pipe2(fds, O_CLOEXEC)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2);
        alarm(timeout_s);  /* survives exec: a probe that hangs is ended */
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) { close(fds[0]); return -1; }
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fds[0], buf + n, cap - 1 - n)) > 0) n += (size_t)r;
    close(fds[0]);
    buf[n] = 0;
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
