/* consumer.c — a program built against an installed libtidal (test/install/run.sh): by
 * pkg-config (tidal.pc) and by CMake (find_package(tidal), tidal::tidal). It needs no
 * GPU: SM sets are plain data. */
#include <stdio.h>
#include <string.h>

#include "tidal.h"
#include "tidal_abi.h"

int main(void)
{
    tidal_smset set;
    size_t errpos = 0;
    int rc = tidal_smset_parse("0-47, 64", &set, NULL, &errpos);
    if (rc != TIDAL_OK) {
        fprintf(stderr, "consumer: tidal_smset_parse: %s at %zu\n", tidal_strerror(rc), errpos);
        return 1;
    }
    char text[64];
    tidal_smset_format(&set, text, sizeof text);
    printf("consumer: tidal %d.%d, %s (%u SMs), %s\n", TIDAL_VERSION_MAJOR, TIDAL_VERSION_MINOR, text,
           tidal_smset_count(&set), tidal_strerror(TIDAL_ERR_NOT_FOUND));
    return strcmp(text, "0-47,64") != 0;
}
