/* tidalctl_policy.c — `tidalctl policy FILE`: a policy's live state, as libtidal writes it
 * (tidal_policy_config.state_path / TIDAL_POLICY_STATE; runtime/policy.c's write_state).
 * Policies live in their serving process, not in tidald, so the state comes from a file. */
#define _GNU_SOURCE
#ifndef TIDALCTL_NO_CJSON
#include <cjson/cJSON.h>
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tidalctl_policy.h"

static char *slurp(const char *path, const char **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *err = strerror(errno);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1) break;
        char *grown = realloc(buf, cap *= 2);
        if (!grown) free(buf);
        buf = grown;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        *err = buf ? "read error" : "out of memory";
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

#ifndef TIDALCTL_NO_CJSON
/* line and column of offset off in text, 1-based */
static void position(const char *text, size_t off, unsigned *line, unsigned *col)
{
    *line = 1, *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *k, int *ok)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v)) *ok = 0;
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

#endif

int tidalctl_policy(const char *path, int json)
{
    const char *err = NULL;
    char *text = slurp(path, &err);
    if (!text) {
        fprintf(stderr,
                "tidalctl: error: %s: %s (no policy writes its state there: see state_path / "
                "TIDAL_POLICY_STATE)\n",
                path, err);
        return 1;
    }
#ifdef TIDALCTL_NO_CJSON
    /* a build without cJSON (test/gpu/runtime/run.sh on a machine without it): the JSON only */
    int state = !strncmp(text, "{\"policy\":", 10);
    if (state && json) fputs(text, stdout);
    if (!state) fprintf(stderr, "%s:1:1: error: not a policy state (it starts with {\"policy\":)\n", path);
    if (state && !json)
        fputs("tidalctl: error: this tidalctl was built without cJSON: only 'policy --json FILE'\n", stderr);
    free(text);
    return state && json ? 0 : 1;
#else
    cJSON *root = cJSON_ParseWithOpts(text, NULL, 0);
    int rc = 0, ok = 1;
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        unsigned line, col;
        position(text, at && at >= text ? (size_t)(at - text) : 0, &line, &col);
        fprintf(stderr, "%s:%u:%u: error: not a policy state (bad JSON)\n", path, line, col);
        free(text);
        return 1;
    }
    const cJSON *svcs = cJSON_GetObjectItemCaseSensitive(root, "services");
    const char *kind = str(root, "policy");
    double sms = num(root, "sms", &ok), grain = num(root, "grain", &ok), dec = num(root, "decisions", &ok);
    if (!kind || !cJSON_IsArray(svcs) || !ok) {
        fprintf(stderr,
                "%s:1:1: error: not a policy state (want \"policy\", \"sms\", \"grain\", \"decisions\" and "
                "\"services\")\n",
                path);
        rc = 1;
    } else if (json) {
        fputs(text, stdout);
    } else {
        struct stat st;
        double age = stat(path, &st) == 0 ? difftime(time(NULL), st.st_mtime) : -1;
        printf("policy %s: %.0f SMs at a grain of %.0f, %.0f decisions (%s, written %.0f s ago)\n", kind, sms, grain,
               dec, path, age);
        printf("%-16s %-5s %4s  %-24s %8s %10s %5s %10s  %s\n", "SERVICE", "CLASS", "SMS", "MASK", "INFLIGHT",
               "REQUESTS", "BATCH", "SLO_US", "MODEL (us)");
        const cJSON *s;
        cJSON_ArrayForEach(s, svcs)
        {
            int sok = 1;
            const char *name = str(s, "name"), *cls = str(s, "class"), *mask = str(s, "mask");
            double n = num(s, "sms", &sok), infl = num(s, "inflight", &sok), req = num(s, "requests", &sok),
                   batch = num(s, "batch", &sok);
            if (!name || !cls || !mask || !sok) {
                fprintf(stderr,
                        "%s:1:1: error: a service without name, class, mask, sms, inflight, requests or "
                        "batch\n",
                        path);
                rc = 1;
                break;
            }
            int has_slo = 1, has_model = 1;
            double slo = num(s, "slo_us", &has_slo);
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(s, "model");
            double a = cJSON_IsObject(m) ? num(m, "a_us", &has_model) : 0,
                   b = cJSON_IsObject(m) ? num(m, "b_us", &has_model) : 0;
            int online = 0;
            if (cJSON_IsObject(m)) online = (int)num(m, "online", &has_model);
            char slo_s[32] = "-", model_s[64] = "-";
            if (has_slo) snprintf(slo_s, sizeof slo_s, "%.1f", slo);
            if (cJSON_IsObject(m) && has_model)
                snprintf(model_s, sizeof model_s, "%.1f/n + %.1f%s", a, b, online ? " (online)" : "");
            printf("%-16s %-5s %4.0f  %-24s %8.0f %10.0f %5.0f %10s  %s\n", name, cls, n, *mask ? mask : "none", infl,
                   req, batch, slo_s, model_s);
        }
    }
    cJSON_Delete(root);
    free(text);
    return rc;
#endif
}
