/* tidald internals: the daemon state shared by tidald*.c (D, connections, stats
 * collections) and the prototypes one tidald file calls in another. Not installed. */
#ifndef TIDALD_INTERNAL_H
#define TIDALD_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "control_proto.h"
#include "tidal_shm.h"

#define MAX_CONNS 1024
#define OUT_CAP_CLIENT (4u << 20) /* a client that does not read its answers is dropped */
#define OUT_CAP_TENANT (256u << 10)
#define MAX_TENANT_PARTS 64

/* ---- state ------------------------------------------------------------------------------ */

typedef struct conn {
    int fd;
    uint64_t id;
    tidal_linebuf in;
    char *out;
    size_t outlen, outcap;
    int eof;     /* peer closed its side: answer what is buffered, then close */
    int dead;    /* close at the end of this round */
    int waiting; /* an answer is being collected (hist / tenants stats): input paused */
    int tenant;
    int64_t pid;
    int mps;
    char name[TIDAL_TENANT_NAME_MAX];
    int64_t since; /* CLOCK_REALTIME seconds */
} conn;

typedef struct coll_part {
    char name[TIDAL_PART_NAME_MAX];
    uint64_t violations, blocks;
} coll_part;

typedef struct coll_tenant {
    uint64_t conn_id;
    int64_t pid;
    int mps;
    int64_t since;
    char name[TIDAL_TENANT_NAME_MAX];
    int state; /* 0 waiting, 1 answered, 2 gone */
    unsigned nparts;
    coll_part parts[MAX_TENANT_PARTS];
} coll_tenant;

typedef struct collection {
    uint32_t seq;
    uint64_t requester;
    int hist; /* 1: hist NAME, 0: tenants stats */
    char name[TIDAL_PART_NAME_MAX];
    uint64_t deadline_ns;
    unsigned ntenants;
    coll_tenant *t;
    uint64_t sm[256];
    uint64_t violations;
    struct collection *next;
} collection;

struct tidald_state {
    char socket_path[TIDAL_SOCKET_PATH_MAX];
    char shm_name[256];
    const char *group;
    gid_t gid;
    int have_gid;
    int reset;
    int spin; /* --spin: poll without sleeping */
    int stats_ms;

    int shm_fd;
    tidal_shm *shm;
    int shm_created; /* this tidald made the segment (removed again if it cannot start) */
    int listen_fd;
    dev_t sock_dev;
    ino_t sock_ino;
    int sock_bound; /* the socket file at socket_path is ours */
    int made_dir;   /* this tidald made the socket's directory */

    conn *conns[MAX_CONNS];
    unsigned nconns;
    uint64_t next_id;
    uint32_t next_seq;
    collection *colls;
};
extern struct tidald_state D;

/* tidald.c: main, the event loop and the sockets. The transport: logmsg and flush_out are
 * what the code below calls of it (test/fuzz/fuzz_tidald.c defines its own, to drive the
 * daemon from memory). flush_out sends what c->out holds, as far as the peer takes it. */
void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void flush_out(conn *c);

/* tidald_conn.c: the state D, output buffering, request dispatch, a connection's life.
 * process_input handles the complete lines c->in holds (none while c->waiting) and, after
 * c->eof, what is left. conn_new registers a connection on fd (NULL: too many, or no memory);
 * conn_close(i) forgets D.conns[i] (moving the last one there); conn_sweep closes the dead
 * ones and those at EOF with nothing left to send, as the end of every event-loop round. */
void out_append(conn *c, const char *s, size_t n);
void outf(conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_error(conn *c, const char *msg);
void process_input(conn *c);
conn *conn_new(int fd);
void conn_close(unsigned idx);
void conn_sweep(void);

/* tidald_parts.c: partition requests (create/set/destroy/list/tenants) */
uint64_t realtime_ns(void);
int part_exists(const char *name);
void do_create_set(conn *c, const tidal_req *r);
void do_destroy(conn *c, const tidal_req *r);
void do_list(conn *c);
void print_tenant(conn *c, const char *prefix, int64_t pid, const char *name, int64_t since, int mps, uint64_t id,
                  const char *suffix);
void do_tenants_plain(conn *c);

/* tidald_stats.c: stats collection from tenants (hist, tenants --stats) */
void check_collections(int force_now);
void start_collection(conn *c, const tidal_req *r);
void tenant_stats(conn *c, const tidal_req *r);

/* tidald_shm.c: the shared-memory segment. open_shm leaves nothing behind when it
 * fails; close_shm unmaps it, and with `failed` removes a segment this tidald made.
 * shm_format writes an empty segment of this layout (magic last); shm_resume repairs one
 * a previous tidald left (seq even, invalid slots cleared) and returns its partitions. */
void shm_format(tidal_shm *s);
unsigned shm_resume(tidal_shm *s);
int open_shm(void);
void close_shm(int failed);

/* tidald_socket.c: the listening socket. open_socket leaves nothing behind when it
 * fails; close_socket removes the socket file (if still ours), and with `failed` also
 * the directory open_socket made for it. */
int daemon_answers(const char *path);
int open_socket(void);
void close_socket(int failed);

/* tidald_help.c: usage and help text */
void usage_short(FILE *f);
void help(void);

#endif
