/* exec.c — the one place tidal's drivers run other programs (see exec.h). */
#define _POSIX_C_SOURCE 200809L
#include "exec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int tidal_exec(const char *path, char *const argv[], const char *prefix, const char *what)
{
    execv(path, argv);
    if (prefix)
        fprintf(stderr, "%s: cannot run %s%s'%s': %s\n", prefix, what ? what : "", what ? " " : "", path,
                strerror(errno));
    return 127;
}

int tidal_run_wait(const char *path, char *const argv[], unsigned flags, const char *prefix, const char *what)
{
    struct sigaction old_int, old_quit;
    if (flags & TIDAL_RUN_OUTLIVE) {
        struct sigaction ign = {.sa_handler = SIG_IGN};
        sigemptyset(&ign.sa_mask);
        sigaction(SIGINT, &ign, &old_int);
        sigaction(SIGQUIT, &ign, &old_quit);
    }
    pid_t pid = fork();
    if (pid < 0) return TIDAL_RUN_NO_FORK;
    if (pid == 0) {
        if (flags & TIDAL_RUN_OUTLIVE) {
            sigaction(SIGINT, &old_int, NULL);
            sigaction(SIGQUIT, &old_quit, NULL);
        }
        _exit(tidal_exec(path, argv, prefix, what));
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return TIDAL_RUN_NO_WAIT;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

const char *tidal_real_ptxas(void)
{
    static char buf[4096];
    const char *env = getenv("TIDAL_REAL_PTXAS");
    if (env && *env) return env;
    const char *cuda = getenv("CUDA_HOME");
    if (cuda && *cuda) {
        snprintf(buf, sizeof buf, "%s/bin/ptxas", cuda);
        if (access(buf, X_OK) == 0) return buf;
    }
    return "/usr/local/cuda/bin/ptxas";
}

int tidal_run_ptxas(const char *who, char *const argv[])
{
    int rc = tidal_run_wait(tidal_real_ptxas(), argv, 0, who, "the real ptxas");
    if (rc == TIDAL_RUN_NO_FORK) fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
    return rc < 0 ? 127 : rc;
}
