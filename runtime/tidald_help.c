/* tidald: the usage line and the man-style `tidald --help` text. */
#include <stdio.h>

#include "tidald_internal.h"

void usage_short(FILE *f)
{
    fprintf(f, "usage: tidald [--socket PATH] [--shm NAME] [--group GROUP] [--reset] [--stats-timeout MS]\n"
               "              [--spin]\n"
               "       tidald --help | --version\n");
}

void help(void)
{
    printf(
        "NAME\n"
        "    tidald - tidal's partition daemon: SM masks shared by every process on the GPU\n"
        "\n"
        "SYNOPSIS\n"
        "    tidald [--foreground] [--socket PATH] [--shm NAME] [--group GROUP] [--reset]\n"
        "           [--stats-timeout MS] [--spin]\n"
        "    tidald --help | --version\n"
        "\n"
        "DESCRIPTION\n"
        "    tidald owns the partitions (named SM sets) that processes using libtidal (tenants)\n"
        "    run their rewritten kernels on. It publishes them in a POSIX shared-memory segment\n"
        "    that tenants map read-only, takes requests from tidalctl(1) on a UNIX socket, tells\n"
        "    every connected tenant about each change (\"gen N\") and, for `tidalctl hist`,\n"
        "    collects and sums the tenants' per-SM block counters.\n"
        "\n"
        "    tidald runs in the foreground and logs to standard error (systemd runs it: see\n"
        "    tidald.service). On SIGTERM or SIGINT it removes its socket and exits; the\n"
        "    shared memory stays, so tenants keep their masks and the next tidald resumes with\n"
        "    the same partitions. tidald refuses to start when another tidald answers on the\n"
        "    socket or holds the segment; a stale socket file is replaced.\n"
        "\n"
        "    tidald does not know any GPU's SM count: SM ids are checked against 256, \"all\" is\n"
        "    stored as 0-255, and every tenant clips masks to its own device.\n"
        "\n"
        "OPTIONS\n"
        "    --foreground       accepted for compatibility; tidald always runs in the foreground\n"
        "    --socket PATH      control socket (default: see ENVIRONMENT)\n"
        "    --shm NAME         shared-memory name, \"/\" then [A-Za-z0-9_.-] (default: see ENVIRONMENT)\n"
        "    --group GROUP      give the socket, its directory and the segment to GROUP (mode 0660):\n"
        "                       members of GROUP may run tenants and tidalctl\n"
        "    --reset            start with no partitions (replace the existing segment)\n"
        "    --stats-timeout MS how long `hist` and `tenants --stats` wait for tenants (default %d)\n"
        "    --spin             poll the sockets without sleeping: one CPU core stays busy, and a\n"
        "                       request does not wait for tidald's thread to wake up (with\n"
        "                       TIDAL_WATCH=spin in the tenants, the lowest reaction time;\n"
        "                       docs/performance.md)\n"
        "    --help             this text\n"
        "    --version          tidal's version and the shared-memory layout version\n"
        "\n"
        "ENVIRONMENT\n"
        "    TIDAL_SOCKET       control socket; else $XDG_RUNTIME_DIR/tidal/tidald.sock when\n"
        "                       XDG_RUNTIME_DIR is set, else /tmp/tidal-UID/tidald.sock\n"
        "                       (tidalctl and libtidal use the same rule)\n"
        "    TIDAL_SHM          shared-memory name; else /tidal-UID (UID of tidald). Tenants\n"
        "                       learn it from tidald when they connect.\n"
        "\n"
        "FILES\n"
        "    /dev/shm/tidal-UID                 the segment (layout: runtime/tidal_shm.h)\n"
        "    $XDG_RUNTIME_DIR/tidal/tidald.sock, /tmp/tidal-UID/tidald.sock   the socket\n"
        "\n"
        "EXIT STATUS\n"
        "    0  stopped by SIGTERM or SIGINT\n"
        "    1  could not start (another tidald, segment of another layout, socket errors); the\n"
        "       socket path is checked and bound before the segment is made, and a failed start\n"
        "       removes the socket, directory and segment it made\n"
        "    2  usage error\n"
        "\n"
        "EXAMPLES\n"
        "    tidald &                              # as yourself, default paths\n"
        "    tidalctl create ls 0-47 && tidalctl create be 48-131\n"
        "    TIDAL_SOCKET=/run/tidal/tidald.sock tidald --group tidal --shm /tidal\n"
        "    tidald --reset                        # forget every partition\n",
        TIDAL_PROTO_STATS_MS);
}
