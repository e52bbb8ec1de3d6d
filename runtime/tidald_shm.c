/* tidald: the shared-memory segment: creates it, or opens and repairs the one a previous
 * tidald left (layout: tidal_shm.h), locks it and sets its mode and group. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tidald_internal.h"

/* ---- setup ------------------------------------------------------------------------------ */

void shm_format(tidal_shm *s)
{
    memset(s, 0, TIDAL_SHM_SIZE);
    s->h.version = TIDAL_SHM_VERSION;
    s->h.header_size = sizeof(tidal_shm_header);
    s->h.part_size = sizeof(tidal_shm_part);
    s->h.max_parts = TIDAL_SHM_MAX_PARTS;
    s->h.created_ns = realtime_ns();
    s->h.instance = realtime_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)s;
    atomic_thread_fence(memory_order_release);
    s->h.magic = TIDAL_SHM_MAGIC;
}

unsigned shm_resume(tidal_shm *s)
{
    /* a previous tidald may have died mid-update: make seq even, recount */
    uint32_t q = atomic_load(&s->h.seq);
    if (q & 1u) atomic_store(&s->h.seq, q + 1u);
    unsigned n = 0;
    for (unsigned i = 0; i < TIDAL_SHM_MAX_PARTS; i++) {
        tidal_shm_part *p = &s->part[i];
        p->name[sizeof p->name - 1] = '\0';
        if (!(p->flags & TIDAL_SHM_PART_USED) || !tidal_control_name_ok(p->name)) {
            memset(p, 0, sizeof *p);
            continue;
        }
        n++;
        /* a set writes the mask, then the flags: one cut between them leaves "all" on a
         * mask that is not. Tenants apply the mask, so the mask is what the partition is. */
        if ((p->flags & TIDAL_SHM_PART_ALL) &&
            (p->mask.bits[0] & p->mask.bits[1] & p->mask.bits[2] & p->mask.bits[3]) != UINT64_MAX)
            p->flags &= ~TIDAL_SHM_PART_ALL;
    }
    s->h.nparts = n;
    return n;
}

/* Opens the segment, creating it when there is none; *created says which. */
static int open_or_create(int *created)
{
    for (int tries = 0; tries < 2; tries++) {
        int fd = shm_open(D.shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
        if (fd >= 0 || errno != EEXIST) {
            *created = fd >= 0;
            return fd;
        }
        fd = shm_open(D.shm_name, O_RDWR | O_CLOEXEC, 0660);
        if (fd >= 0 || errno != ENOENT) { /* ENOENT: removed in between; create it */
            *created = 0;
            return fd;
        }
    }
    return -1;
}

/* A failed start: the segment goes again if this tidald made it. */
static int fail_shm(int fd, int created)
{
    if (created) shm_unlink(D.shm_name);
    if (fd >= 0) close(fd);
    return -1;
}

int open_shm(void)
{
    int created = 0;
    int fd = open_or_create(&created);
    if (fd < 0) {
        logmsg("shm_open %s: %s", D.shm_name, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        /* another tidald opened it too: it is that one's now, even if it is new */
        logmsg("shared memory %s is held by another tidald (flock: %s)", D.shm_name, strerror(errno));
        close(fd);
        return -1;
    }
    if (D.reset && !created) {
        shm_unlink(D.shm_name);
        close(fd);
        fd = shm_open(D.shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
        created = fd >= 0;
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
            logmsg("shm_open %s (reset): %s", D.shm_name, strerror(errno));
            return fail_shm(fd, created);
        }
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        logmsg("fstat %s: %s", D.shm_name, strerror(errno));
        return fail_shm(fd, created);
    }
    int fresh = st.st_size == 0;
    if (fresh && ftruncate(fd, (off_t)TIDAL_SHM_SIZE) != 0) {
        logmsg("ftruncate %s: %s", D.shm_name, strerror(errno));
        return fail_shm(fd, created);
    }
    if (!fresh && (size_t)st.st_size < TIDAL_SHM_SIZE) {
        logmsg("shared memory %s is %lld bytes, not a tidal segment (use --reset to replace it)", D.shm_name,
               (long long)st.st_size);
        return fail_shm(fd, created);
    }
    void *m = mmap(NULL, TIDAL_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        logmsg("mmap %s: %s", D.shm_name, strerror(errno));
        return fail_shm(fd, created);
    }
    tidal_shm *s = m;
    if (fresh) {
        shm_format(s);
        logmsg("created shared memory %s (%zu bytes, %u partitions max)", D.shm_name, TIDAL_SHM_SIZE,
               TIDAL_SHM_MAX_PARTS);
    } else if (tidal_shm_check(s, (size_t)st.st_size) != 0) {
        logmsg("shared memory %s has another layout (magic/version); use --reset to replace it", D.shm_name);
        munmap(m, TIDAL_SHM_SIZE);
        return fail_shm(fd, created);
    } else {
        unsigned n = shm_resume(s);
        logmsg("resumed shared memory %s: %u partitions, generation %" PRIu32, D.shm_name, n, tidal_shm_generation(s));
    }
    if (fchmod(fd, 0660) != 0) logmsg("fchmod %s: %s", D.shm_name, strerror(errno));
    if (D.have_gid && fchown(fd, (uid_t)-1, D.gid) != 0)
        logmsg("chgrp %s %s: %s", D.group, D.shm_name, strerror(errno));
    atomic_store(&s->h.daemon_pid, (int32_t)getpid());
    /* a new daemon is a change: tenants that reconnect compare generations */
    tidal_shm_write_begin(s);
    tidal_shm_write_end(s);
    D.shm_fd = fd;
    D.shm = s;
    D.shm_created = created;
    return 0;
}

void close_shm(int failed)
{
    if (!D.shm) return;
    atomic_store(&D.shm->h.daemon_pid, 0);
    munmap(D.shm, TIDAL_SHM_SIZE);
    D.shm = NULL;
    if (failed && D.shm_created) shm_unlink(D.shm_name);
    close(D.shm_fd);
    D.shm_fd = -1;
}
