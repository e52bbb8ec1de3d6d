/* tidald: the listening UNIX socket: its directory, a stale socket replaced, another
 * tidald detected, mode and group. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tidald_internal.h"

/* 1 when a tidald answers on the socket path. */
int daemon_answers(const char *path)
{
    int fd = tidal_control_connect(path, 0);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

static int make_parent_dir(const char *path)
{
    char dir[TIDAL_SOCKET_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    struct stat st;
    if (lstat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            logmsg("%s is not a directory", dir);
            return -1;
        }
        return 0;
    }
    /* the default directories (…/tidal, /tmp/tidal-UID) are created here, one level */
    if (mkdir(dir, D.have_gid ? 0750 : 0700) == 0) {
        D.made_dir = 1;
    } else if (errno != EEXIST) {
        logmsg("mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        logmsg("%s is not a directory owned by uid %u", dir, (unsigned)geteuid());
        return -1;
    }
    if (D.have_gid) {
        if (chown(dir, (uid_t)-1, D.gid) != 0) logmsg("chgrp %s %s: %s", D.group, dir, strerror(errno));
        if (chmod(dir, 0750) != 0) logmsg("chmod %s: %s", dir, strerror(errno));
    }
    return 0;
}

/* The directory of the socket path, if open_socket made it (empty again by now). */
static void remove_made_dir(void)
{
    if (!D.made_dir) return;
    char dir[TIDAL_SOCKET_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", D.socket_path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (rmdir(dir) != 0) logmsg("rmdir %s: %s", dir, strerror(errno));
    }
    D.made_dir = 0;
}

void close_socket(int failed)
{
    struct stat st;
    if (D.sock_bound && lstat(D.socket_path, &st) == 0 && st.st_dev == D.sock_dev && st.st_ino == D.sock_ino)
        unlink(D.socket_path);
    D.sock_bound = 0;
    if (D.listen_fd >= 0) close(D.listen_fd);
    D.listen_fd = -1;
    if (failed) remove_made_dir();
}

int open_socket(void)
{
    struct stat st;
    if (lstat(D.socket_path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            logmsg("%s exists and is not a socket; not touching it", D.socket_path);
            return -1;
        }
        if (daemon_answers(D.socket_path)) {
            logmsg("another tidald answers on %s; not starting", D.socket_path);
            return -1;
        }
        logmsg("replacing stale socket %s", D.socket_path);
        unlink(D.socket_path);
    } else if (make_parent_dir(D.socket_path) != 0) {
        remove_made_dir();
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        logmsg("socket: %s", strerror(errno));
        remove_made_dir();
        return -1;
    }
    struct sockaddr_un a;
    tidal_control_sockaddr(&a, D.socket_path); /* fits: D.socket_path is TIDAL_SOCKET_PATH_MAX */
    mode_t old = umask(0117);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc != 0) {
        logmsg("bind %s: %s", D.socket_path, strerror(errno));
        close(fd);
        remove_made_dir();
        return -1;
    }
    D.listen_fd = fd;
    D.sock_bound = 1;
    if (stat(D.socket_path, &st) == 0) {
        D.sock_dev = st.st_dev;
        D.sock_ino = st.st_ino;
    }
    if (chmod(D.socket_path, 0660) != 0) logmsg("chmod %s: %s", D.socket_path, strerror(errno));
    if (D.have_gid && chown(D.socket_path, (uid_t)-1, D.gid) != 0)
        logmsg("chgrp %s %s: %s", D.group, D.socket_path, strerror(errno));
    if (listen(fd, 128) != 0) {
        logmsg("listen: %s", strerror(errno));
        close_socket(1);
        return -1;
    }
    return 0;
}
