/* exec.c — the one place tidal's drivers find and run the real ptxas. */
#define _POSIX_C_SOURCE 200809L
#include "exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *tidal_real_ptxas(void) {
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

int tidal_run_ptxas(const char *who, char *const argv[]) {
    const char *prog = tidal_real_ptxas();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execv(prog, argv);
        fprintf(stderr, "%s: cannot run the real ptxas '%s': %s\n", who, prog, strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 127;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
