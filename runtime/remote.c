/* remote.c — this process as a tidald tenant: a background thread mirrors tidald's
 * partitions (shared memory, read-only) into this process's device control blocks and
 * answers tidald's statistics requests. If tidald dies, the last masks stay in force and
 * the thread keeps trying to reconnect; nothing waits on it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime_internal.h"
#include "tidal_client.h"

#define MAX_REMOTE_PARTS 64

static tidal_client *client;
static pthread_t thread;
static atomic_int stop;
static int running;

static void apply_snapshot(int spin)
{
    tidal_client_part parts[MAX_REMOTE_PARTS];
    unsigned n = 0;
    uint32_t gen = 0;
    if (tidal_client_snapshot(client, parts, MAX_REMOTE_PARTS, &n, &gen) != TIDAL_OK) return;
    tidal_remote_part rp[MAX_REMOTE_PARTS];
    for (unsigned i = 0; i < n; i++) {
        memcpy(rp[i].name, parts[i].name, sizeof rp[i].name);
        rp[i].name[sizeof rp[i].name - 1] = '\0';
        memcpy(rp[i].mask, parts[i].mask, sizeof rp[i].mask);
    }
    tidal__remote_apply(rp, n, spin);
}

static void send_one(void *arg, const char *name, uint64_t violations, const uint64_t sm_blocks[256])
{
    tidal_client_send_stats((tidal_client *)arg, name, violations, sm_blocks);
}

static void *watch(void *arg)
{
    (void)arg;
    /* TIDAL_WATCH=spin: poll without sleeping (one core busy; saves the thread's wake-up
     * on every change, docs/performance.md) */
    const char *w = getenv("TIDAL_WATCH");
    int spin = w && strcmp(w, "spin") == 0;
    int adopted = 0;
    while (!atomic_load(&stop)) {
        if (!adopted) adopted = tidal__adopt_context();
        int ev = tidal_client_wait(client, spin ? 0 : 200);
        if (ev == TIDAL_CLIENT_CHANGED) {
            tidal__log("tidald: partitions changed");
            if (!tidal__is_mps()) apply_snapshot(spin);
        } else if (ev == TIDAL_CLIENT_STATS) {
            tidal__foreach_stats(send_one, client);
            tidal_client_stats_end(client);
        }
    }
    return NULL;
}

int tidal__remote_start(void)
{
    if (running) return TIDAL_OK;
    char tenant[64];
    const char *n = getenv("TIDAL_TENANT");
    if (n && *n)
        snprintf(tenant, sizeof tenant, "%s", n);
    else
        snprintf(tenant, sizeof tenant, "pid%ld", (long)getpid());
    int st = tidal_client_open(NULL, NULL, tenant, tidal__is_mps(), &client);
    if (st != TIDAL_OK) {
        client = NULL;
        if (st == TIDAL_ERR_NOT_FOUND) tidal__log("no tidald: partitions are local to this process");
        return st;
    }
    if (tidal__is_mps()) {
        /* Under MPS each client's %smid values are renumbered per client (docs/runtime.md):
         * tidald's masks would name other SMs here. Registered, but not applied. */
        tidal__warn("this process is an MPS client: SM ids are not shared with other processes, so tidald's "
                    "partitions are not applied here (TIDAL_ERR_MPS); use local partitions or run without MPS");
    } else {
        apply_snapshot(0);
    }
    atomic_store(&stop, 0);
    if (pthread_create(&thread, NULL, watch, NULL) != 0) {
        tidal_client_close(client);
        client = NULL;
        return tidal__fail(TIDAL_ERR_NO_MEMORY, "cannot start the tidald watcher thread");
    }
    running = 1;
    tidal__log("connected to tidald as tenant \"%s\"", tenant);
    return TIDAL_OK;
}

void tidal__remote_stop(void)
{
    if (!running) return;
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    tidal_client_close(client);
    client = NULL;
    running = 0;
}
