/* tidald: the partition requests (create, set, destroy, list, plain tenants): edits of the
 * shared-memory table, each followed by a "gen N" to every tenant. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tidald_internal.h"

/* ---- partitions ------------------------------------------------------------------------- */

static int find_part(const char *name)
{
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++)
        if ((D.shm->part[i].flags & TIDAL_SHM_PART_USED) && !strcmp(D.shm->part[i].name, name)) return (int)i;
    return -1;
}

int part_exists(const char *name) { return find_part(name) >= 0; }

uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void notify_tenants(uint32_t gen)
{
    for (unsigned i = 0; i < D.nconns; i++) {
        conn *c = D.conns[i];
        if (c->tenant && !c->dead) {
            outf(c, "gen %" PRIu32 "\n", gen);
            flush_out(c);
        }
    }
}

static void fmt_set(const tidal_smset *s, int all, char *buf, size_t n)
{
    if (all)
        snprintf(buf, n, "all");
    else
        tidal_smset_format(s, buf, n);
}

void do_create_set(conn *c, const tidal_req *r)
{
    char sms[1100];
    int i = find_part(r->name);
    if (r->verb == TIDAL_REQ_CREATE && i >= 0) {
        outf(c, "error: exists: %s\nend\n", r->name);
        return;
    }
    if (r->verb == TIDAL_REQ_SET && i < 0) {
        outf(c, "error: no such partition: %s\nend\n", r->name);
        return;
    }
    if (i < 0) {
        for (unsigned k = 0; k < TIDAL_SHM_MAX_PARTS; k++)
            if (!(D.shm->part[k].flags & TIDAL_SHM_PART_USED)) {
                i = (int)k;
                break;
            }
        if (i < 0) {
            outf(c, "error: partition table full (%u partitions)\nend\n", TIDAL_SHM_MAX_PARTS);
            return;
        }
    }
    tidal_shm_part *p = &D.shm->part[i];
    tidal_shm_write_begin(D.shm);
    if (r->verb == TIDAL_REQ_CREATE) {
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s", r->name);
        p->created_ns = realtime_ns();
        D.shm->h.nparts++;
    }
    p->mask = r->set;
    p->flags = TIDAL_SHM_PART_USED | (r->is_all ? TIDAL_SHM_PART_ALL : 0);
    p->generation = tidal_shm_next_generation(D.shm);
    uint32_t gen = tidal_shm_write_end(D.shm);
    fmt_set(&r->set, r->is_all, sms, sizeof sms);
    const char *what = r->verb == TIDAL_REQ_CREATE ? "created" : "set";
    logmsg("%s %s %s (gen %" PRIu32 ")", what, r->name, sms, gen);
    outf(c, "ok %s %s %s gen %" PRIu32 "\nend\n", what, r->name, sms, gen);
    notify_tenants(gen);
}

void do_destroy(conn *c, const tidal_req *r)
{
    int i = find_part(r->name);
    if (i < 0) {
        outf(c, "error: no such partition: %s\nend\n", r->name);
        return;
    }
    tidal_shm_write_begin(D.shm);
    memset(&D.shm->part[i], 0, sizeof D.shm->part[i]);
    if (D.shm->h.nparts) D.shm->h.nparts--;
    uint32_t gen = tidal_shm_write_end(D.shm);
    logmsg("destroyed %s (gen %" PRIu32 ")", r->name, gen);
    outf(c, "ok destroyed %s gen %" PRIu32 "\nend\n", r->name, gen);
    notify_tenants(gen);
}

void do_list(conn *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) n += (D.shm->part[i].flags & TIDAL_SHM_PART_USED) != 0;
    outf(c, "ok %u\n", n);
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) {
        const tidal_shm_part *p = &D.shm->part[i];
        if (!(p->flags & TIDAL_SHM_PART_USED)) continue;
        char sms[1100];
        tidal_smset_format(&p->mask, sms, sizeof sms);
        outf(c, "part %s %s count %u gen %" PRIu32 "%s\n", p->name, sms, tidal_smset_count(&p->mask), p->generation,
             (p->flags & TIDAL_SHM_PART_ALL) ? " all" : "");
    }
    out_append(c, "end\n", 4);
}

void print_tenant(conn *c, const char *prefix, int64_t pid, const char *name, int64_t since, int mps, uint64_t id,
                  const char *suffix)
{
    outf(c, "%s %" PRIu64 " pid %" PRId64 " name %s since %" PRId64 " mps %d%s\n", prefix, id, pid, name, since, mps,
         suffix);
}

void do_tenants_plain(conn *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < D.nconns; i++) n += D.conns[i]->tenant && !D.conns[i]->dead;
    outf(c, "ok %u\n", n);
    for (unsigned i = 0; i < D.nconns; i++) {
        conn *t = D.conns[i];
        if (t->tenant && !t->dead) print_tenant(c, "tenant", t->pid, t->name, t->since, t->mps, t->id, "");
    }
    out_append(c, "end\n", 4);
}
