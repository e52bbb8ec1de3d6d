/* control_proto.h — what tidald, tidalctl and tidal_client share: default paths, name
 * rules, a bounded line buffer and the request parser of the control protocol.
 * Internal to the tidal_control library (not installed).
 *
 * ---- The control protocol (UNIX stream socket, text lines ending in "\n") ---------------
 *
 * Every line is at most TIDAL_PROTO_MAX_LINE bytes including the "\n" (a trailing "\r" is
 * dropped); printable ASCII and tabs only. Tokens are separated by spaces or tabs.
 *
 * Requests (tidalctl or any client) and their responses. Every response is one status line,
 * "ok[ TEXT]" or "error: TEXT", then zero or more data lines, then the line "end". Data
 * lines always start with a keyword (part, tenant, sm, stats), so none of them is "end".
 *
 *   ping                  ok pong pid PID gen GEN
 *   list                  ok N ; "part NAME SMSET count C gen G [all]" per partition
 *   create NAME SMSET     ok created NAME SMSET gen GEN   | error: exists: NAME | ...
 *   set NAME SMSET        ok set NAME SMSET gen GEN       | error: no such partition: NAME
 *   destroy NAME          ok destroyed NAME gen GEN
 *   tenants               ok N ; "tenant ID pid PID name NAME since EPOCH mps 0|1"
 *   tenants stats         as tenants, after asking every tenant for stats (<= deadline):
 *                         "tenant ... stats answered|timeout|gone" then, per partition it
 *                         reported, "stats PART violations V blocks TOTAL"
 *   hist NAME             ok hist NAME tenants T answered A violations V ;
 *                         "tenant ID pid PID name NAME answered|timeout|gone" per tenant,
 *                         "sm S BLOCKS" for every SM with a nonzero sum
 *
 * NAME: 1..31 characters of [A-Za-z0-9_.-]. SMSET: the rest of the line, as
 * tidal_smset_parse takes it ("0-47,64", "all", "none"); every SM id must be < 256.
 *
 * Tenants (libtidal through tidal_client):
 *   tenant PID NAME [mps] ok tenant ID shm SHMNAME gen GEN ; end. The connection then
 *                         belongs to the tenant: tidald sends it, unprompted,
 *     gen GEN             after every change of the partitions (the shm is updated first)
 *     stats SEQ           a request for counters; the tenant answers with zero or more
 *   stats SEQ PART violations V sm S:N S:N ...   (nonzero SMs only)
 *   stats-end SEQ         tidald waits TIDAL_PROTO_STATS_MS for stats-end, then reports the
 *                         tenant as "timeout". Late answers (old SEQ) are dropped.
 *   Tenant NAME: 1..63 characters of [A-Za-z0-9_.-] (tidal_client replaces others by '_').
 *
 * Errors: a request that does not parse, is too long (the rest of the line is skipped),
 * or carries other bytes gets "error: ..." and "end"; the connection stays usable.
 */
#ifndef TIDAL_CONTROL_PROTO_H
#define TIDAL_CONTROL_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tidal.h"

#define TIDAL_PROTO_MAX_LINE 8192
#define TIDAL_PROTO_STATS_MS 300
#define TIDAL_PART_NAME_MAX 32    /* 1..31 characters + NUL */
#define TIDAL_TENANT_NAME_MAX 64  /* 1..63 characters + NUL */
#define TIDAL_SOCKET_PATH_MAX 108 /* sizeof(sockaddr_un.sun_path) */

/* ---- paths: the one place all three parties compute them ------------------------------
 * Socket: $TIDAL_SOCKET, else $XDG_RUNTIME_DIR/tidal/tidald.sock when XDG_RUNTIME_DIR is
 * set and absolute, else /tmp/tidal-<uid>/tidald.sock. Shm: $TIDAL_SHM, else
 * /tidal-<uid>. 0 on success, -1 when the result does not fit (or is not a valid name). */
int tidal_control_socket_path(char *buf, size_t size);
int tidal_control_shm_name(char *buf, size_t size);
/* A shm name: "/" then 1..200 characters of [A-Za-z0-9_.-]. */
int tidal_control_shm_name_ok(const char *name);

/* Partition name: 1..31 characters of [A-Za-z0-9_.-]. */
int tidal_control_name_ok(const char *name);
int tidal_control_tenant_name_ok(const char *name);

/* ---- the options tidald and tidalctl share ------------------------------------------------
 * Their getopt_long tables start with these three (each program's own follow); `sock`, `help`
 * and `version` are the program's codes for them. Needs <getopt.h>. */
// clang-format off
#define TIDAL_CONTROL_COMMON_OPTIONS(sock, help, version) \
    {"socket", required_argument, NULL, (sock)},          \
    {"help", no_argument, NULL, (help)},                  \
    {"version", no_argument, NULL, (version)}
// clang-format on

/* ---- bounded line buffer ---------------------------------------------------------------- */
typedef struct tidal_linebuf {
    char buf[TIDAL_PROTO_MAX_LINE];
    size_t len;     /* bytes held */
    size_t start;   /* first byte not yet returned */
    int discarding; /* skipping the rest of an over-long line */
} tidal_linebuf;

/* Where to read more bytes: space for at least 1 byte (compacts the buffer). */
char *tidal_linebuf_space(tidal_linebuf *lb, size_t *avail);
void tidal_linebuf_added(tidal_linebuf *lb, size_t n);
/* Next complete line, NUL-terminated in place, "\n" and a trailing "\r" removed:
 * 1 = *line set, 0 = need more bytes, -1 = an over-long line was dropped (reported once;
 * its remainder up to the next "\n" is skipped). */
int tidal_linebuf_next(tidal_linebuf *lb, char **line);

/* ---- requests -------------------------------------------------------------------------- */
enum tidal_verb {
    TIDAL_REQ_PING = 1,
    TIDAL_REQ_LIST,
    TIDAL_REQ_CREATE,
    TIDAL_REQ_SET,
    TIDAL_REQ_DESTROY,
    TIDAL_REQ_TENANTS,
    TIDAL_REQ_HIST,
    TIDAL_REQ_TENANT,    /* tenant registration */
    TIDAL_REQ_STATS,     /* a tenant's stats line */
    TIDAL_REQ_STATS_END, /* a tenant's stats-end */
};

typedef struct tidal_req {
    int verb;
    char name[TIDAL_PART_NAME_MAX];          /* partition (create/set/destroy/hist/stats) */
    char tenant_name[TIDAL_TENANT_NAME_MAX]; /* tenant */
    tidal_smset set;                         /* create/set */
    int is_all;                              /* create/set: "all" */
    int with_stats;                          /* tenants stats */
    int mps;                                 /* tenant: MPS client */
    int64_t pid;                             /* tenant */
    uint32_t seq;                            /* stats / stats-end */
    uint64_t violations;                     /* stats */
    uint64_t sm_blocks[256];                 /* stats */
} tidal_req;

/* Parses one line (no "\n"). 0 on success; -1 with a message in err (no "error: " prefix). */
int tidal_proto_parse(const char *line, tidal_req *req, char *err, size_t errsize);

/* Monotonic time in ns. */
uint64_t tidal_control_now_ns(void);

/* ---- the socket: the one place all three parties make an AF_UNIX address ----------------- */
struct sockaddr_un;
/* Fills *a with AF_UNIX and path. 0, or -1 (errno ENAMETOOLONG) when path does not fit. */
int tidal_control_sockaddr(struct sockaddr_un *a, const char *path);
/* Connects a new SOCK_STREAM | SOCK_CLOEXEC | `flags` (e.g. SOCK_NONBLOCK) socket to path.
 * Returns the fd; TIDAL_CONNECT_NO_SOCKET when socket() failed, TIDAL_CONNECT_FAILED when
 * the path does not fit (errno ENAMETOOLONG) or connect() failed; errno says why. */
enum { TIDAL_CONNECT_NO_SOCKET = -1, TIDAL_CONNECT_FAILED = -2 };
int tidal_control_connect(const char *path, int flags);

#endif
