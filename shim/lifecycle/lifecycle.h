/* The shim's life in the process: its start, a fork and exit (init.c, fork.c), and what runs
 * beside the program: the crash handler with the exported sigaction and signal (crash.c,
 * signal_hook.c), the hang watchdog (watchdog.c), the exit summary and Prometheus file
 * (summary.c, prometheus.c). */
#ifndef CS_LIFECYCLE_H
#define CS_LIFECYCLE_H

#include <stdint.h>
#include <sys/types.h>

/* init.c: lazy, idempotent bootstrap */
int cs_init(void);          /* 1 when ready */
void cs_init_after_fork(void);
extern pid_t cs_pid;

/* crash.c */
void cs_crash_install(void);
void cs_crash_prepare(void); /* what the handler needs loaded, done by the scanner */
void cs_crash_thread_init(void);
void cs_crash_thread_exit(void);
void cs_crash_exit_note(void);
/* signal_hook.c / crash.c: libc's sigaction, and the program's dispositions kept while the
 * shim's crash handler holds a fatal signal (1: kept; old says what the program would see). */
struct sigaction;
int cs_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int cs_crash_keeps(int sig, const struct sigaction *act, struct sigaction *old);
extern int (*cs_signal_keeper)(int, const struct sigaction *, struct sigaction *);  /* cs_crash_keeps once installed */

/* watchdog.c */
void cs_watchdog_start(void);
void cs_watchdog_after_fork(void);

/* summary.c */
void cs_summary_write(void);
void cs_summary_counts(uint64_t calls[], uint64_t errors[]);  /* every thread's, per API */
void cs_prometheus_write(void);  /* prometheus.c: CUDASHIM_PROMETHEUS_DIR's file, at exit */

#endif
