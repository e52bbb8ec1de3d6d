/* tidal_client.h — a tenant's side of tidald: the partitions tidald publishes (shared memory,
 * read-only) and its notifications (UNIX socket). libtidal calls it from one background
 * thread; a tidal_client is not safe for concurrent use by several threads. No CUDA here.
 *
 * Paths: socket_path NULL = $TIDAL_SOCKET, else $XDG_RUNTIME_DIR/tidal/tidald.sock, else
 * /tmp/tidal-<uid>/tidald.sock (tidal_control_socket_path). shm_name NULL = the name tidald
 * gives in its answer to `tenant` (so a tenant finds a daemon of another uid); a non-NULL
 * shm_name overrides it. Protocol and layout: control_proto.h, tidal_shm.h,
 * docs/runtime.md ("The control plane").
 *
 * Failure behaviour: no call blocks longer than its timeout (tidal_client_open: at most
 * ~1 s for the handshake; send_stats: at most ~100 ms when tidald does not read); tidald
 * dying, restarting (with or without --reset) or sending garbage never crashes the client.
 * SIGPIPE is never raised (MSG_NOSIGNAL).
 */
#ifndef TIDAL_CLIENT_H
#define TIDAL_CLIENT_H

#include <stdint.h>

#include "tidal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tidal_client_wait results (errors are negative tidal.h statuses) */
enum {
    TIDAL_CLIENT_CHANGED = 1,      /* the generation moved (or tidald came back): snapshot again */
    TIDAL_CLIENT_STATS = 2,        /* tidald asks for stats: send_stats per partition, then stats_end */
    TIDAL_CLIENT_TIMEOUT = 3,      /* nothing happened within timeout_ms */
    TIDAL_CLIENT_DISCONNECTED = 4, /* tidald went away; the mapping and last snapshot stay valid */
};

typedef struct tidal_client tidal_client;

/* Map the shm read-only and connect to the socket (paths NULL = defaults/env). tenant_name:
 * shown by `tidalctl tenants` (NULL = "tenant"; characters other than [A-Za-z0-9_.-] become
 * '_', at most 63 kept). is_mps: this process is an MPS client (its %smid ids are compacted
 * per client; tidald reports it). Returns TIDAL_OK, TIDAL_ERR_NOT_FOUND (no daemon / no
 * segment), TIDAL_ERR_DAEMON (tidald refused or did not answer in time / bad segment),
 * TIDAL_ERR_NO_MEMORY or TIDAL_ERR_INVALID. */
int tidal_client_open(const char *socket_path, const char *shm_name, const char *tenant_name, int is_mps,
                      tidal_client **out);
void tidal_client_close(tidal_client *c);

/* Consistent copy of all partitions (seqlock). *count gets the number written (<= max).
 * "all" partitions have all 256 bits set: clip to the device. Works while disconnected
 * (the last segment stays mapped). TIDAL_ERR_DAEMON when no consistent copy could be
 * made (a writer died mid-update; the next tidald repairs it). */
typedef struct tidal_client_part {
    char name[32];    /* NUL-terminated */
    tidal_smset mask; /* 256 SMs wide, as tidald stores it */
    uint32_t generation;
} tidal_client_part;
int tidal_client_snapshot(tidal_client *c, tidal_client_part *parts, unsigned max, unsigned *count,
                          uint32_t *generation);

/* Block up to timeout_ms (0 = poll once) for an event: TIDAL_CLIENT_CHANGED (generation moved
 * since the last snapshot / CHANGED), TIDAL_CLIENT_STATS (answer with tidal_client_send_stats,
 * then tidal_client_stats_end), TIDAL_CLIENT_TIMEOUT, TIDAL_CLIENT_DISCONNECTED (once, when
 * tidald goes away; later waits try to reconnect every ~250 ms and return
 * TIDAL_CLIENT_CHANGED once reconnected, re-mapping the segment). Never blocks longer than
 * timeout_ms. */
int tidal_client_wait(tidal_client *c, int timeout_ms);
/* One partition's counters for the last STATS request (nonzero SMs are sent).
 * TIDAL_ERR_INVALID: bad name or no request pending; TIDAL_ERR_DAEMON: not connected. */
int tidal_client_send_stats(tidal_client *c, const char *part_name, uint64_t violations, const uint64_t sm_blocks[256]);
int tidal_client_stats_end(tidal_client *c);
/* The socket (-1 while disconnected), for tests and for callers that poll() themselves. */
int tidal_client_fd(const tidal_client *c);

#ifdef __cplusplus
}
#endif
#endif
