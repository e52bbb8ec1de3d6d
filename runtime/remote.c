/* remote.c — this process as a tidald tenant: a background thread mirrors tidald's
 * partitions (shared memory, read-only, through tidal_client.c) into this process's
 * partitions (partitions.c: created as tidald's, their masks written to the device) and
 * answers tidald's statistics requests. If tidald dies, the last masks stay in force and
 * the thread keeps trying to reconnect; nothing waits on it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_proto.h" /* the partition name rule */
#include "device.h"
#include "partitions.h"
#include "remote.h"
#include "tidal_client.h"

#define MAX_REMOTE_PARTS 64

static tidal_client *client;
static pthread_t thread;
static atomic_int stop;
static int running;

/* tidald's partitions into this process's: created (as tidald's) or set, each mask
 * clipped to this device (tidald does not know its SM count). spin: take the lock by
 * spinning, not by sleeping on it (TIDAL_WATCH=spin): a thread that sleeps on the lock (a
 * launch holds it briefly) pays a wake-up, tens of us on the GPU machine. */
static void apply(const tidal_client_part *parts, unsigned n, int spin)
{
    if (spin)
        while (tidal__trylock() != 0) sched_yield();
    else
        tidal__lock();
    if (!tidal__ready()) {
        tidal__unlock();
        return;
    }
    tidal__call saved = tidal__ctx_enter();
    for (unsigned i = 0; i < n; i++) {
        tidal_smset s;
        tidal__smset_clip(&parts[i].mask, 1, &s);
        const char *name = parts[i].name; /* NUL-terminated by tidal_client_snapshot */
        if (!tidal_control_name_ok(name)) continue;
        struct tidal_part *p = tidal__part_find(name);
        int st;
        if (!p) {
            st = tidal__part_create(name, &s, 1, &p);
        } else if (!p->remote) {
            tidal__warn("tidald partition \"%s\" has the name of a local one: ignored", name);
            continue;
        } else {
            st = tidal__part_set(p, &s, 1);
        }
        if (st)
            tidal__warn("tidald partition \"%s\": %s", name, tidal_last_error());
        else
            tidal__log("tidald partition \"%s\" mask applied", name);
    }
    tidal__ctx_leave(saved);
    tidal__unlock();
}

static void apply_snapshot(int spin)
{
    tidal_client_part parts[MAX_REMOTE_PARTS];
    unsigned n = 0;
    uint32_t gen = 0;
    if (tidal_client_snapshot(client, parts, MAX_REMOTE_PARTS, &n, &gen) != TIDAL_OK) return;
    apply(parts, n, spin);
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
        if (!adopted) adopted = tidal__device_adopt();
        int ev = tidal_client_wait(client, spin ? 0 : 200);
        if (ev == TIDAL_CLIENT_CHANGED) {
            tidal__log("tidald: partitions changed");
            if (!tidal__is_mps()) apply_snapshot(spin);
        } else if (ev == TIDAL_CLIENT_STATS) {
            tidal__parts_foreach_stats(send_one, client);
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
