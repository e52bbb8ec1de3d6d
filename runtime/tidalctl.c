/* tidalctl — talks to tidald: create, change, destroy and list partitions, list tenants,
 * show per-SM block histograms. `tidalctl --help` for usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "tidalctl_policy.h"

#ifndef TIDAL_VERSION
#error "TIDAL_VERSION (the CMake project version) is defined by CMakeLists.txt"
#endif

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define EXIT_UNAVAILABLE 69 /* EX_UNAVAILABLE */

static int g_json;

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tidalctl: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (code == EXIT_USAGE) fputs("Try 'tidalctl --help'.\n", stderr);
    exit(code);
}

static void help(void)
{
    printf("NAME\n"
           "    tidalctl - control tidald's partitions (named SM sets shared by GPU processes)\n"
           "\n"
           "SYNOPSIS\n"
           "    tidalctl [--socket PATH] [--json] [--timeout MS] COMMAND [ARGS]\n"
           "    tidalctl --help | --version\n"
           "\n"
           "    tidalctl list                      partitions: name, SMs, SM count, generation\n"
           "    tidalctl create NAME SMSET         new partition\n"
           "    tidalctl set NAME SMSET            move a partition to other SMs (live)\n"
           "    tidalctl destroy NAME              remove a partition\n"
           "    tidalctl tenants [--stats]         processes connected to tidald (with --stats:\n"
           "                                       their per-partition counters)\n"
           "    tidalctl hist NAME                 blocks run per SM on NAME, summed over tenants\n"
           "    tidalctl ping                      is tidald there?\n"
           "    tidalctl policy FILE               a serving process's policy (SGDRC / GSLICE): its\n"
           "                                       services' SMs, requests and models, from the\n"
           "                                       state file libtidal keeps (state_path or\n"
           "                                       TIDAL_POLICY_STATE; no tidald involved)\n"
           "\n"
           "DESCRIPTION\n"
           "    Partitions live in tidald and are seen by every process using libtidal (tenants);\n"
           "    `set` reaches running kernels within microseconds. NAME is 1..31 characters of\n"
           "    [A-Za-z0-9_.-]. SMSET is \"0-47,64,100-131\", \"all\" or \"none\" (quote it if it\n"
           "    contains spaces); an empty SMSET is an error: no SMs is spelled \"none\".\n"
           "    SM ids are checked against 256: tidald does not know the GPU's\n"
           "    SM count; \"all\" means 0-255 and each tenant clips masks to its own device.\n"
           "    `hist` and `tenants --stats` ask every tenant for its counters and wait at most\n"
           "    tidald's --stats-timeout (300 ms); tenants that do not answer are listed as\n"
           "    \"timeout\".\n"
           "\n"
           "OPTIONS\n"
           "    --socket PATH   tidald's socket (default: see ENVIRONMENT)\n"
           "    --json          JSON output for list, tenants, hist and policy\n"
           "    --timeout MS    how long to wait for tidald's answer (default 5000)\n"
           "    --help          this text\n"
           "    --version       show the version\n"
           "\n"
           "ENVIRONMENT\n"
           "    TIDAL_SOCKET    the socket; else $XDG_RUNTIME_DIR/tidal/tidald.sock when\n"
           "                    XDG_RUNTIME_DIR is set, else /tmp/tidal-UID/tidald.sock\n"
           "\n"
           "EXIT STATUS\n"
           "    0   done\n"
           "    1   tidald refused the request, a bad NAME or SMSET (\"tidalctl: error: ...\"), or\n"
           "        a missing or malformed policy state file (\"FILE:LINE:COL: error: ...\")\n"
           "    2   usage error\n"
           "    69  tidald is unreachable or did not answer in time\n"
           "\n"
           "EXAMPLES\n"
           "    tidalctl create ls 0-47\n"
           "    tidalctl create be 48-131\n"
           "    tidalctl set ls 0-65 && tidalctl set be 66-131\n"
           "    tidalctl --json list\n"
           "    tidalctl hist be\n");
}

/* ---- talking to tidald ------------------------------------------------------------------ */

typedef struct lines {
    char **v;
    size_t n, cap;
} lines;

static void lines_add(lines *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) die(EXIT_REFUSED, "out of memory");
    }
    l->v[l->n] = strdup(s);
    if (!l->v[l->n]) die(EXIT_REFUSED, "out of memory");
    l->n++;
}

/* Sends request, collects the answer's lines up to (not including) "end". */
static void request(const char *sock, const char *req, int timeout_ms, lines *out)
{
    int fd = tidal_control_connect(sock, 0);
    if (fd == TIDAL_CONNECT_NO_SOCKET) die(EXIT_UNAVAILABLE, "socket: %s", strerror(errno));
    if (fd < 0 && errno == ENAMETOOLONG) die(EXIT_USAGE, "socket path too long: %s", sock);
    if (fd < 0) die(EXIT_UNAVAILABLE, "cannot reach tidald at %s: %s", sock, strerror(errno));
    size_t len = strlen(req), off = 0;
    while (off < len) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die(EXIT_UNAVAILABLE, "sending to tidald at %s: %s", sock, strerror(errno));
        off += (size_t)w;
    }
    static tidal_linebuf lb;
    uint64_t deadline = tidal_control_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (;;) {
        char *line;
        int rc;
        while ((rc = tidal_linebuf_next(&lb, &line)) != 0) {
            if (rc < 0) die(EXIT_UNAVAILABLE, "tidald sent an over-long line");
            if (!strcmp(line, "end")) {
                close(fd);
                return;
            }
            lines_add(out, line);
        }
        uint64_t now = tidal_control_now_ns();
        if (now >= deadline) die(EXIT_UNAVAILABLE, "tidald at %s did not answer within %d ms", sock, timeout_ms);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
        if (pr < 0 && errno != EINTR) die(EXIT_UNAVAILABLE, "poll: %s", strerror(errno));
        if (pr <= 0) continue;
        size_t avail;
        char *buf = tidal_linebuf_space(&lb, &avail);
        ssize_t n = recv(fd, buf, avail, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die(EXIT_UNAVAILABLE, "tidald at %s closed the connection without an answer", sock);
        tidal_linebuf_added(&lb, (size_t)n);
    }
}

/* First line: "ok ..." (returns what follows "ok") or "error: ..." (exits 1). */
static const char *status_of(const lines *l)
{
    if (l->n == 0) die(EXIT_UNAVAILABLE, "empty answer from tidald");
    const char *s = l->v[0];
    if (!strncmp(s, "error: ", 7)) die(EXIT_REFUSED, "%s", s + 7);
    if (!strcmp(s, "ok")) return "";
    if (!strncmp(s, "ok ", 3)) return s + 3;
    die(EXIT_UNAVAILABLE, "unexpected answer from tidald: %.200s", s);
}

/* ---- formatting ------------------------------------------------------------------------- */

/* Value of "key" in a "k v k v" line (after skip tokens); NULL when absent. Static buffer. */
static const char *field(const char *line, const char *key)
{
    static char buf[1200];
    char copy[TIDAL_PROTO_MAX_LINE];
    snprintf(copy, sizeof copy, "%s", line);
    char *save = NULL, *prev = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (prev && !strcmp(prev, key)) {
            snprintf(buf, sizeof buf, "%s", t);
            return buf;
        }
        prev = t;
    }
    return NULL;
}

static void print_since(int64_t epoch, char *buf, size_t n)
{
    time_t t = (time_t)epoch;
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    else
        snprintf(buf, n, "%" PRId64, epoch);
}

static void cmd_list(const lines *l)
{
    status_of(l);
    if (g_json)
        printf("[");
    else
        printf("%-31s %-24s %5s %10s\n", "NAME", "SMS", "COUNT", "GEN");
    for (size_t i = 1; i < l->n; i++) {
        char name[64], sms[1100];
        unsigned count, gen;
        int n = 0;
        if (sscanf(l->v[i], "part %63s %1099s count %u gen %u%n", name, sms, &count, &gen, &n) != 4) continue;
        int all = strstr(l->v[i] + n, "all") != NULL;
        if (g_json)
            printf("%s\n  {\"name\": \"%s\", \"sms\": \"%s\", \"count\": %u, \"generation\": %u, \"all\": %s}",
                   i > 1 ? "," : "", name, all ? "all" : sms, count, gen, all ? "true" : "false");
        else
            printf("%-31s %-24s %5u %10u\n", name, all ? "all" : sms, count, gen);
    }
    if (g_json) printf("%s]\n", l->n > 1 ? "\n" : "");
}

static void cmd_tenants(const lines *l, int stats)
{
    status_of(l); /* dies on an error answer */
    if (g_json)
        printf("[");
    else if (stats)
        printf("%-6s %-8s %-20s %-19s %-3s %s\n", "ID", "PID", "NAME", "SINCE", "MPS", "STATS");
    else
        printf("%-6s %-8s %-20s %-19s %s\n", "ID", "PID", "NAME", "SINCE", "MPS");
    int first = 1, open_obj = 0, first_part = 1;
    for (size_t i = 1; i < l->n; i++) {
        const char *s = l->v[i];
        if (!strncmp(s, "tenant ", 7)) {
            unsigned long long id;
            long long pid, since;
            char name[64];
            int mps;
            if (sscanf(s, "tenant %llu pid %lld name %63s since %lld mps %d", &id, &pid, name, &since, &mps) != 5)
                continue;
            const char *state = field(s, "stats");
            char sincebuf[40], stbuf[16];
            snprintf(stbuf, sizeof stbuf, "%.15s", state ? state : "");
            print_since(since, sincebuf, sizeof sincebuf);
            if (g_json) {
                if (open_obj) printf("%s}", stats ? "]" : "");
                printf("%s\n  {\"id\": %llu, \"pid\": %lld, \"name\": \"%s\", \"since\": %lld, \"mps\": %s",
                       first ? "" : ",", id, pid, name, since, mps ? "true" : "false");
                if (stats) printf(", \"stats\": \"%s\", \"partitions\": [", stbuf);
                open_obj = 1;
                first_part = 1;
            } else {
                printf("%-6llu %-8lld %-20s %-19s %-3s %s\n", id, pid, name, sincebuf, mps ? "yes" : "no", stbuf);
            }
            first = 0;
        } else if (!strncmp(s, "stats ", 6)) {
            char part[64];
            unsigned long long v, b;
            if (sscanf(s, "stats %63s violations %llu blocks %llu", part, &v, &b) != 3) continue;
            if (g_json)
                printf("%s{\"partition\": \"%s\", \"violations\": %llu, \"blocks\": %llu}", first_part ? "" : ", ",
                       part, v, b);
            else
                printf("       partition %-20s blocks %-12llu violations %llu\n", part, b, v);
            first_part = 0;
        }
    }
    if (g_json) {
        if (open_obj) printf("%s}", stats ? "]" : "");
        printf("%s]\n", first ? "" : "\n");
    }
}

static void cmd_hist(const lines *l, const char *name)
{
    const char *st = status_of(l);
    unsigned tenants = 0, answered = 0;
    unsigned long long viol = 0;
    char pname[64];
    if (sscanf(st, "hist %63s tenants %u answered %u violations %llu", pname, &tenants, &answered, &viol) != 4)
        die(EXIT_UNAVAILABLE, "unexpected answer from tidald: %.200s", st);
    static uint64_t sm[256];
    uint64_t max = 0, total = 0;
    for (size_t i = 1; i < l->n; i++) {
        unsigned s;
        unsigned long long v;
        if (sscanf(l->v[i], "sm %u %llu", &s, &v) == 2 && s < 256) {
            sm[s] = v;
            if (v > max) max = v;
            total += v;
        }
    }
    if (g_json) {
        printf("{\"partition\": \"%s\", \"tenants\": %u, \"answered\": %u, \"violations\": %llu, \"blocks\": %" PRIu64
               ",\n \"per_tenant\": [",
               name, tenants, answered, viol, total);
        int first = 1;
        for (size_t i = 1; i < l->n; i++) {
            unsigned long long id;
            long long pid;
            char tn[64], state[16];
            if (sscanf(l->v[i], "tenant %llu pid %lld name %63s %15s", &id, &pid, tn, state) != 4) continue;
            printf("%s{\"id\": %llu, \"pid\": %lld, \"name\": \"%s\", \"state\": \"%s\"}", first ? "" : ", ", id, pid,
                   tn, state);
            first = 0;
        }
        printf("],\n \"sm_blocks\": {");
        first = 1;
        for (unsigned s = 0; s < 256; s++)
            if (sm[s]) {
                printf("%s\"%u\": %" PRIu64, first ? "" : ", ", s, sm[s]);
                first = 0;
            }
        printf("}}\n");
        return;
    }
    printf("partition %s: %u tenant%s, %u answered, %" PRIu64 " blocks, %llu violations\n", name, tenants,
           tenants == 1 ? "" : "s", answered, total, viol);
    for (size_t i = 1; i < l->n; i++) {
        unsigned long long id;
        long long pid;
        char tn[64], state[16];
        if (sscanf(l->v[i], "tenant %llu pid %lld name %63s %15s", &id, &pid, tn, state) == 4 &&
            strcmp(state, "answered"))
            printf("  tenant %llu (pid %lld, %s): %s\n", id, pid, tn, state);
    }
    if (max == 0) {
        printf("  (no blocks counted)\n");
        return;
    }
    printf("%5s %14s  %s\n", "SM", "BLOCKS", "");
    for (unsigned s = 0; s < 256; s++) {
        if (!sm[s]) continue;
        char bar[64];
        unsigned w = (unsigned)((sm[s] * 50 + max - 1) / max);
        memset(bar, '#', w);
        bar[w] = '\0';
        printf("%5u %14" PRIu64 "  %s\n", s, sm[s], bar);
    }
}

int main(int argc, char **argv)
{
    enum { OPT_SOCKET = 256, OPT_JSON, OPT_TIMEOUT, OPT_HELP, OPT_STATS, OPT_VERSION };
    static const struct option opts[] = {
        TIDAL_CONTROL_COMMON_OPTIONS(OPT_SOCKET, OPT_HELP, OPT_VERSION),
        {"json", no_argument, NULL, OPT_JSON},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"stats", no_argument, NULL, OPT_STATS},
        {NULL, 0, NULL, 0},
    };
    char sock[TIDAL_SOCKET_PATH_MAX];
    const char *sock_opt = NULL;
    int timeout_ms = 5000, stats = 0, o;
    while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (o) {
        case OPT_SOCKET: sock_opt = optarg; break;
        case OPT_JSON: g_json = 1; break;
        case OPT_STATS: stats = 1; break;
        case OPT_TIMEOUT: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 3600000) die(EXIT_USAGE, "--timeout wants 1..3600000 ms");
            timeout_ms = (int)v;
            break;
        }
        case 'h':
        case OPT_HELP: help(); return 0;
        case OPT_VERSION: printf("tidalctl (tidal) %s\n", TIDAL_VERSION); return 0;
        default: die(EXIT_USAGE, "bad option");
        }
    }
    if (optind >= argc) die(EXIT_USAGE, "no command (list, tenants, create, set, destroy, hist, ping, policy)");
    const char *cmd = argv[optind++];
    /* options may also follow the command (tidalctl tenants --stats --json) */
    char **args = argv + optind;
    int nargs = 0;
    for (int i = optind; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            g_json = 1;
        else if (!strcmp(argv[i], "--stats"))
            stats = 1;
        else
            args[nargs++] = argv[i];
    }
    if (sock_opt) {
        if (strlen(sock_opt) >= sizeof sock) die(EXIT_USAGE, "socket path too long");
        snprintf(sock, sizeof sock, "%s", sock_opt);
    } else if (tidal_control_socket_path(sock, sizeof sock) != 0) {
        die(EXIT_USAGE, "socket path (TIDAL_SOCKET / XDG_RUNTIME_DIR) too long");
    }

    if (!strcmp(cmd, "policy")) { /* a file, not tidald: policies live in their process */
        if (nargs != 1) die(EXIT_USAGE, "'policy' takes 1 argument (the state file)");
        if (stats) die(EXIT_USAGE, "--stats is for 'tenants'");
        return tidalctl_policy(args[0], g_json);
    }

    char req[1400];
    static lines l; /* static: still reachable when die() exits */
    int need = -1;  /* argument count */
    if (!strcmp(cmd, "list") || !strcmp(cmd, "ping"))
        need = 0;
    else if (!strcmp(cmd, "tenants"))
        need = 0;
    else if (!strcmp(cmd, "destroy") || !strcmp(cmd, "hist"))
        need = 1;
    else if (!strcmp(cmd, "create") || !strcmp(cmd, "set"))
        need = 2;
    else
        die(EXIT_USAGE, "unknown command '%s'", cmd);
    if (nargs != need) die(EXIT_USAGE, "'%s' takes %d argument%s", cmd, need, need == 1 ? "" : "s");
    if (stats && strcmp(cmd, "tenants")) die(EXIT_USAGE, "--stats is for 'tenants'");
    if (need >= 1 && !tidal_control_name_ok(args[0]))
        die(EXIT_REFUSED, "bad partition name '%s' (1..31 characters of A-Z a-z 0-9 _ . -)", args[0]);
    if (need == 2) {
        tidal_smset set;
        int all = 0;
        size_t pos = 0;
        /* libtidal reads "" as no SMs; here it is almost always an unset shell variable
         * (tidalctl set ls "$SMS"), so emptying a partition takes the word "none" */
        if (!args[1][strspn(args[1], " \t")])
            die(EXIT_REFUSED, "empty SM set '%s' (give SM ids such as 0-47,64, \"all\", or \"none\" for no SMs)",
                args[1]);
        if (tidal_smset_parse(args[1], &set, &all, &pos) != TIDAL_OK)
            die(EXIT_REFUSED, "bad SM set '%s' at offset %zu (SM ids 0..255, e.g. 0-47,64 | all | none)", args[1], pos);
        char canon[1100];
        if (all)
            snprintf(canon, sizeof canon, "all");
        else
            tidal_smset_format(&set, canon, sizeof canon);
        snprintf(req, sizeof req, "%s %s %s\n", cmd, args[0], canon);
    } else if (need == 1) {
        snprintf(req, sizeof req, "%s %s\n", cmd, args[0]);
    } else {
        snprintf(req, sizeof req, "%s%s\n", cmd, stats ? " stats" : "");
    }
    request(sock, req, timeout_ms, &l);

    if (!strcmp(cmd, "list"))
        cmd_list(&l);
    else if (!strcmp(cmd, "tenants"))
        cmd_tenants(&l, stats);
    else if (!strcmp(cmd, "hist"))
        cmd_hist(&l, args[0]);
    else if (!strcmp(cmd, "ping")) {
        const char *st = status_of(&l);
        unsigned pid, gen;
        if (sscanf(st, "pong pid %u gen %u", &pid, &gen) == 2)
            printf("tidald pid %u at %s, generation %u\n", pid, sock, gen);
        else
            printf("%s\n", st);
    } else {
        printf("%s\n", status_of(&l));
    }
    for (size_t i = 0; i < l.n; i++) free(l.v[i]);
    free(l.v);
    return 0;
}
