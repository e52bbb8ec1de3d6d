/* tidald: stats collection: asks every tenant for its SM counters (`hist`,
 * `tenants --stats`), gathers the answers and replies when all came or the time is up. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidald_internal.h"

/* ---- stats collection ------------------------------------------------------------------- */

static conn *conn_by_id(uint64_t id)
{
    for (unsigned i = 0; i < D.nconns; i++)
        if (D.conns[i]->id == id && !D.conns[i]->dead) return D.conns[i];
    return NULL;
}

static const char *state_name(int s) { return s == 1 ? "answered" : s == 2 ? "gone" : "timeout"; }

static void finish_collection(collection *k)
{
    conn *c = conn_by_id(k->requester);
    if (c) {
        unsigned answered = 0;
        for (unsigned i = 0; i < k->ntenants; i++) answered += k->t[i].state == 1;
        if (k->hist) {
            outf(c, "ok hist %s tenants %u answered %u violations %" PRIu64 "\n", k->name, k->ntenants, answered,
                 k->violations);
            for (unsigned i = 0; i < k->ntenants; i++)
                outf(c, "tenant %" PRIu64 " pid %" PRId64 " name %s %s\n", k->t[i].conn_id, k->t[i].pid, k->t[i].name,
                     state_name(k->t[i].state));
            for (unsigned s = 0; s < 256; s++)
                if (k->sm[s]) outf(c, "sm %u %" PRIu64 "\n", s, k->sm[s]);
        } else {
            outf(c, "ok %u answered %u\n", k->ntenants, answered);
            for (unsigned i = 0; i < k->ntenants; i++) {
                coll_tenant *t = &k->t[i];
                char suffix[32];
                snprintf(suffix, sizeof suffix, " stats %s", state_name(t->state));
                print_tenant(c, "tenant", t->pid, t->name, t->since, t->mps, t->conn_id, suffix);
                for (unsigned p = 0; p < t->nparts; p++)
                    outf(c, "stats %s violations %" PRIu64 " blocks %" PRIu64 "\n", t->parts[p].name,
                         t->parts[p].violations, t->parts[p].blocks);
            }
        }
        out_append(c, "end\n", 4);
        c->waiting = 0;
        process_input(c);
        flush_out(c);
    }
    free(k->t);
    free(k);
}

void check_collections(int force_now)
{
    uint64_t now = tidal_control_now_ns();
    collection **pp = &D.colls;
    while (*pp) {
        collection *k = *pp;
        int done = 1;
        for (unsigned i = 0; i < k->ntenants; i++)
            if (k->t[i].state == 0) {
                if (!conn_by_id(k->t[i].conn_id))
                    k->t[i].state = 2;
                else
                    done = 0;
            }
        if (done || force_now || now >= k->deadline_ns) {
            *pp = k->next;
            finish_collection(k);
        } else {
            pp = &k->next;
        }
    }
}

void start_collection(conn *c, const tidal_req *r)
{
    collection *k = calloc(1, sizeof *k);
    unsigned n = 0;
    for (unsigned i = 0; i < D.nconns; i++) n += D.conns[i]->tenant && !D.conns[i]->dead;
    if (!k || !(k->t = calloc(n ? n : 1, sizeof *k->t))) {
        free(k);
        reply_error(c, "out of memory");
        return;
    }
    k->seq = ++D.next_seq;
    k->requester = c->id;
    k->hist = r->verb == TIDAL_REQ_HIST;
    snprintf(k->name, sizeof k->name, "%s", r->name);
    k->deadline_ns = tidal_control_now_ns() + (uint64_t)D.stats_ms * 1000000ull;
    for (unsigned i = 0; i < D.nconns; i++) {
        conn *t = D.conns[i];
        if (!t->tenant || t->dead) continue;
        coll_tenant *ct = &k->t[k->ntenants++];
        ct->conn_id = t->id;
        ct->pid = t->pid;
        ct->mps = t->mps;
        ct->since = t->since;
        snprintf(ct->name, sizeof ct->name, "%s", t->name);
        outf(t, "stats %" PRIu32 "\n", k->seq);
        flush_out(t);
    }
    c->waiting = 1;
    k->next = D.colls;
    D.colls = k;
}

static coll_tenant *coll_find(uint32_t seq, uint64_t conn_id, collection **kout)
{
    for (collection *k = D.colls; k; k = k->next)
        if (k->seq == seq)
            for (unsigned i = 0; i < k->ntenants; i++)
                if (k->t[i].conn_id == conn_id) {
                    *kout = k;
                    return &k->t[i];
                }
    return NULL;
}

void tenant_stats(conn *c, const tidal_req *r)
{
    collection *k;
    coll_tenant *t = coll_find(r->seq, c->id, &k);
    if (!t || t->state != 0) return; /* late or repeated: dropped */
    if (r->verb == TIDAL_REQ_STATS_END) {
        t->state = 1;
        return;
    }
    uint64_t total = 0;
    for (unsigned s = 0; s < 256; s++) total += r->sm_blocks[s];
    if (k->hist) {
        if (strcmp(r->name, k->name)) return;
        for (unsigned s = 0; s < 256; s++) k->sm[s] += r->sm_blocks[s];
        k->violations += r->violations;
    }
    unsigned p;
    for (p = 0; p < t->nparts; p++)
        if (!strcmp(t->parts[p].name, r->name)) break;
    if (p == t->nparts) {
        if (t->nparts == MAX_TENANT_PARTS) return;
        t->nparts++;
        snprintf(t->parts[p].name, sizeof t->parts[p].name, "%s", r->name);
    }
    t->parts[p].violations += r->violations;
    t->parts[p].blocks += total;
}
