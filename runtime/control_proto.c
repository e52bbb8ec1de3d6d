/* control_proto.c — default paths, names, line buffer, request parser and the socket
 * connect shared by tidald, tidalctl and tidal_client (protocol: control_proto.h). */
#include "control_proto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

uint64_t tidal_control_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- paths ------------------------------------------------------------------------------ */

int tidal_control_socket_path(char *buf, size_t size)
{
    const char *env = getenv("TIDAL_SOCKET");
    int n;
    if (env && *env) {
        n = snprintf(buf, size, "%s", env);
    } else {
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        if (xdg && xdg[0] == '/')
            n = snprintf(buf, size, "%s/tidal/tidald.sock", xdg);
        else
            n = snprintf(buf, size, "/tmp/tidal-%u/tidald.sock", (unsigned)getuid());
    }
    if (n < 0 || (size_t)n >= size || (size_t)n >= TIDAL_SOCKET_PATH_MAX) return -1;
    return 0;
}

static int name_chars_ok(const char *s, size_t min, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (n >= max) return 0;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    return n >= min;
}

int tidal_control_shm_name_ok(const char *name) { return name && name[0] == '/' && name_chars_ok(name + 1, 1, 200); }

int tidal_control_shm_name(char *buf, size_t size)
{
    const char *env = getenv("TIDAL_SHM");
    int n;
    if (env && *env)
        n = snprintf(buf, size, "%s", env);
    else
        n = snprintf(buf, size, "/tidal-%u", (unsigned)getuid());
    if (n < 0 || (size_t)n >= size || !tidal_control_shm_name_ok(buf)) return -1;
    return 0;
}

int tidal_control_name_ok(const char *name) { return name && name_chars_ok(name, 1, TIDAL_PART_NAME_MAX - 1); }

int tidal_control_tenant_name_ok(const char *name) { return name && name_chars_ok(name, 1, TIDAL_TENANT_NAME_MAX - 1); }

/* ---- line buffer ------------------------------------------------------------------------ */

char *tidal_linebuf_space(tidal_linebuf *lb, size_t *avail)
{
    if (lb->start > 0) {
        memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
        lb->len -= lb->start;
        lb->start = 0;
    }
    /* tidal_linebuf_next never leaves a full buffer without a newline behind */
    *avail = sizeof lb->buf - lb->len;
    return lb->buf + lb->len;
}

void tidal_linebuf_added(tidal_linebuf *lb, size_t n) { lb->len += n; }

int tidal_linebuf_next(tidal_linebuf *lb, char **line)
{
    for (;;) {
        char *p = lb->buf + lb->start;
        size_t have = lb->len - lb->start;
        char *nl = have ? memchr(p, '\n', have) : NULL;
        if (lb->discarding) {
            if (!nl) {
                lb->start = lb->len = 0; /* drop it all, keep skipping */
                return 0;
            }
            lb->start += (size_t)(nl - p) + 1;
            lb->discarding = 0;
            continue;
        }
        if (!nl) {
            if (have >= sizeof lb->buf) {
                /* TIDAL_PROTO_MAX_LINE bytes without "\n": drop and skip to the next one */
                lb->start = lb->len = 0;
                lb->discarding = 1;
                return -1;
            }
            return 0;
        }
        *nl = '\0';
        size_t n = (size_t)(nl - p);
        /* an embedded NUL would hide the rest of the line: make it a byte the parser rejects */
        for (char *z = memchr(p, '\0', n); z; z = memchr(z, '\0', (size_t)(p + n - z))) *z = 0x7f;
        if (n > 0 && p[n - 1] == '\r') p[n - 1] = '\0';
        lb->start += n + 1;
        if (lb->start == lb->len) lb->start = lb->len = 0;
        *line = p;
        return 1;
    }
}

/* ---- request parser --------------------------------------------------------------------- */

#define MAX_TOKENS 8

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* Splits up to max tokens; *rest (if not NULL) points at the text after token index
 * rest_after (leading blanks skipped). Returns the token count (max + 1 = more). */
static int tokenize(char *s, char **tok, int max)
{
    int n = 0;
    while (*s) {
        while (is_space(*s)) s++;
        if (!*s) break;
        if (n == max) return max + 1;
        tok[n++] = s;
        while (*s && !is_space(*s)) s++;
        if (*s) *s++ = '\0';
    }
    return n;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int fail(char *err, size_t size, const char *fmt, const char *arg)
{
    if (err && size) snprintf(err, size, fmt, arg ? arg : "");
    return -1;
}

/* Copies a partition name, validating it. */
static int take_name(char *dst, const char *src, char *err, size_t errsize)
{
    if (!tidal_control_name_ok(src)) {
        char shown[40];
        snprintf(shown, sizeof shown, "%.32s%s", src, strlen(src) > 32 ? "..." : "");
        return fail(err, errsize, "bad partition name '%s' (1..31 characters of A-Z a-z 0-9 _ . -)", shown);
    }
    strcpy(dst, src);
    return 0;
}

/* SM set: the text after `NAME` on the original line. */
static int take_smset(tidal_req *req, const char *text, char *err, size_t errsize)
{
    size_t pos = 0;
    if (!text || !*text) return fail(err, errsize, "missing SM set%s", NULL);
    int rc = tidal_smset_parse(text, &req->set, &req->is_all, &pos);
    if (rc != TIDAL_OK) {
        char shown[48];
        snprintf(shown, sizeof shown, "%.40s%s", text, strlen(text) > 40 ? "..." : "");
        if (err && errsize)
            snprintf(err, errsize, "bad SM set '%s' at offset %zu (SM ids 0..255, e.g. 0-47,64 | all | none)", shown,
                     pos);
        return -1;
    }
    return 0;
}

/* Offset of the text after the first `skip` blank-separated tokens of line. */
static const char *after_tokens(const char *line, int skip)
{
    const char *s = line;
    for (int i = 0; i < skip; i++) {
        while (is_space(*s)) s++;
        while (*s && !is_space(*s)) s++;
    }
    while (is_space(*s)) s++;
    return s;
}

static int parse_stats(char *s, tidal_req *req, char *err, size_t errsize)
{
    /* stats SEQ PART violations V sm S:N ... */
    char *tok;
    char *save = NULL;
    int idx = 0;
    uint64_t v;
    for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save), idx++) {
        switch (idx) {
        case 0: break; /* "stats" */
        case 1:
            if (parse_u64(tok, &v) || v > UINT32_MAX) return fail(err, errsize, "bad stats sequence '%s'", tok);
            req->seq = (uint32_t)v;
            break;
        case 2:
            if (take_name(req->name, tok, err, errsize)) return -1;
            break;
        case 3:
            if (strcmp(tok, "violations")) return fail(err, errsize, "expected 'violations', got '%.40s'", tok);
            break;
        case 4:
            if (parse_u64(tok, &req->violations)) return fail(err, errsize, "bad violations count '%.40s'", tok);
            break;
        case 5:
            if (strcmp(tok, "sm")) return fail(err, errsize, "expected 'sm', got '%.40s'", tok);
            break;
        default: {
            char *colon = strchr(tok, ':');
            uint64_t sm, n;
            if (!colon) return fail(err, errsize, "bad SM counter '%.40s' (want S:N)", tok);
            *colon = '\0';
            if (parse_u64(tok, &sm) || sm >= 256 || parse_u64(colon + 1, &n))
                return fail(err, errsize, "bad SM counter '%.40s' (want S:N, S < 256)", tok);
            req->sm_blocks[sm] += n;
        }
        }
    }
    if (idx < 5) return fail(err, errsize, "usage: stats SEQ PART violations V [sm S:N ...]%s", NULL);
    return 0;
}

int tidal_proto_parse(const char *line, tidal_req *req, char *err, size_t errsize)
{
    memset(req, 0, sizeof *req);
    if (err && errsize) err[0] = '\0';
    size_t len = strlen(line);
    if (len >= TIDAL_PROTO_MAX_LINE) return fail(err, errsize, "line too long%s", NULL);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if ((c < 0x20 && c != '\t') || c >= 0x7f) {
            if (err && errsize) snprintf(err, errsize, "bad byte 0x%02x at offset %zu", c, i);
            return -1;
        }
    }
    char copy[TIDAL_PROTO_MAX_LINE];
    memcpy(copy, line, len + 1);
    char *tok[MAX_TOKENS];

    /* stats lines can be long: parse them on their own */
    const char *p0 = after_tokens(line, 0);
    if (!strncmp(p0, "stats", 5) && is_space(p0[5])) {
        req->verb = TIDAL_REQ_STATS;
        return parse_stats(copy, req, err, errsize);
    }

    int n = tokenize(copy, tok, MAX_TOKENS);
    if (n == 0) return fail(err, errsize, "empty request%s", NULL);
    const char *verb = tok[0];

    if (!strcmp(verb, "ping") || !strcmp(verb, "list")) {
        if (n != 1) return fail(err, errsize, "usage: %s (no arguments)", verb);
        req->verb = verb[0] == 'p' ? TIDAL_REQ_PING : TIDAL_REQ_LIST;
        return 0;
    }
    if (!strcmp(verb, "tenants")) {
        req->verb = TIDAL_REQ_TENANTS;
        if (n == 1) return 0;
        if (n == 2 && !strcmp(tok[1], "stats")) {
            req->with_stats = 1;
            return 0;
        }
        return fail(err, errsize, "usage: tenants [stats]%s", NULL);
    }
    if (!strcmp(verb, "create") || !strcmp(verb, "set")) {
        req->verb = verb[0] == 'c' ? TIDAL_REQ_CREATE : TIDAL_REQ_SET;
        if (n < 3) return fail(err, errsize, "usage: %s NAME SMSET", verb);
        if (take_name(req->name, tok[1], err, errsize)) return -1;
        return take_smset(req, after_tokens(line, 2), err, errsize);
    }
    if (!strcmp(verb, "destroy") || !strcmp(verb, "hist")) {
        req->verb = verb[0] == 'd' ? TIDAL_REQ_DESTROY : TIDAL_REQ_HIST;
        if (n != 2) return fail(err, errsize, "usage: %s NAME", verb);
        return take_name(req->name, tok[1], err, errsize);
    }
    if (!strcmp(verb, "tenant")) {
        req->verb = TIDAL_REQ_TENANT;
        uint64_t pid;
        if (n < 3 || n > 4) return fail(err, errsize, "usage: tenant PID NAME [mps]%s", NULL);
        if (parse_u64(tok[1], &pid) || pid == 0 || pid > INT32_MAX)
            return fail(err, errsize, "bad pid '%.20s'", tok[1]);
        req->pid = (int64_t)pid;
        if (!tidal_control_tenant_name_ok(tok[2]))
            return fail(err, errsize, "bad tenant name '%.64s' (1..63 characters of A-Z a-z 0-9 _ . -)", tok[2]);
        strcpy(req->tenant_name, tok[2]);
        if (n == 4) {
            if (strcmp(tok[3], "mps")) return fail(err, errsize, "unexpected '%.40s' (want mps)", tok[3]);
            req->mps = 1;
        }
        return 0;
    }
    if (!strcmp(verb, "stats-end")) {
        uint64_t v;
        req->verb = TIDAL_REQ_STATS_END;
        if (n != 2 || parse_u64(tok[1], &v) || v > UINT32_MAX)
            return fail(err, errsize, "usage: stats-end SEQ%s", NULL);
        req->seq = (uint32_t)v;
        return 0;
    }
    if (!strcmp(verb, "stats")) return fail(err, errsize, "usage: stats SEQ PART violations V [sm S:N ...]%s", NULL);
    char shown[40];
    snprintf(shown, sizeof shown, "%.32s%s", verb, strlen(verb) > 32 ? "..." : "");
    return fail(err, errsize, "unknown request '%s' (ping, list, create, set, destroy, tenants, hist, tenant)", shown);
}

int tidal_control_sockaddr(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a->sun_path, path, strlen(path) + 1);
    return 0;
}

int tidal_control_connect(const char *path, int flags)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
    if (fd < 0) return TIDAL_CONNECT_NO_SOCKET;
    struct sockaddr_un a;
    if (tidal_control_sockaddr(&a, path) != 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return TIDAL_CONNECT_FAILED;
    }
    return fd;
}
