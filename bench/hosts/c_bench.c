/* The C ABI from a real C program (bench/scripts/hosts.sh).
 *
 *   c_bench TABLE.tgt N      (the runtime's answers in TABLE's .tools.tsv twin)
 *
 * Loads the table, makes the context every path times (config0, a user,
 * consumer k0), checks every decision and the unavailable list against the
 * runtime's answers (exit 1 on any difference), then prints ROW lines:
 * decide = toolgate_decide_packed by name over the names in stride order
 * (path c-many: toolgate_decide_many, 64 names a call, ns per name);
 * unavailable = toolgate_unavailable_reasons (one reason byte per tool)
 * turned into the host's list of (name, reason) entries, the buffer freed.
 * HOSTS_QUICK=1 shortens the loops. Built by hosts.sh with gcc -O2. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toolgate.h"

static const char *const REASONS[] = {"-", "notRegistered", "toolDisabled", "requiresAdmin",
                                      "notInProfile", "configurationGroup",
                                      "configurationExcluded", "trustZone"};

typedef struct {
    char *name;
    size_t len;
    int allowed;
    int reason; /* TOOLGATE_REASON_* */
    int listed;
} tool;

typedef struct {
    const char *name;
    size_t len;
    uint8_t reason;
} entry;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "c_bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void check(int32_t status, const char *call) {
    if (status != TOOLGATE_OK) {
        toolgate_buf msg = {NULL, 0};
        toolgate_last_error(&msg);
        fprintf(stderr, "c_bench: %s failed (%d): %s\n", call, status, msg.ptr ? (char *)msg.ptr : "");
        toolgate_buf_free(msg);
        exit(1);
    }
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0) die("cannot seek", path);
    long size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) die("cannot size", path);
    char *buf = malloc((size_t)size + 1);
    if (!buf) die("out of memory", NULL);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) die("cannot read", path);
    fclose(f);
    buf[size] = '\0';
    *len = (size_t)size;
    return buf;
}

static int reason_code(const char *s, const char *line) {
    for (int r = 0; r < 8; r++)
        if (strcmp(s, REASONS[r]) == 0) return r;
    die("unknown reason in the TSV", line);
    return -1;
}

/* name \t allowed \t reason \t listed, one line per tool in registry order. */
static tool *read_tools(const char *path, size_t n) {
    size_t len;
    char *text = read_file(path, &len);
    tool *tools = calloc(n, sizeof(tool));
    if (!tools) die("out of memory", NULL);
    size_t i = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (i == n) die("more tools than N in", path);
        char *f[4];
        char *rest = line;
        for (int k = 0; k < 4; k++) {
            f[k] = rest;
            rest = k < 3 ? strchr(rest, '\t') : NULL;
            if (k < 3) {
                if (!rest) die("not `name allowed reason listed`", line);
                *rest++ = '\0';
            }
        }
        tools[i].len = strlen(f[0]);
        tools[i].name = malloc(tools[i].len + 1); /* one allocation per name, as a host holds them */
        if (!tools[i].name) die("out of memory", NULL);
        memcpy(tools[i].name, f[0], tools[i].len + 1);
        tools[i].allowed = strcmp(f[1], "1") == 0;
        tools[i].reason = reason_code(f[2], f[0]);
        tools[i].listed = strcmp(f[3], "1") == 0;
        i++;
    }
    if (i != n) die("fewer tools than N in", path);
    free(text);
    return tools;
}

static int quick(void) {
    const char *q = getenv("HOSTS_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

static size_t iters(size_t full) {
    size_t k = quick() ? full / 20 : full;
    return k ? k : 1;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile int64_t sink;

/* The host's list: (name, reason) of every tool with a non-zero reason byte. */
static size_t unavailable_list(const toolgate_context *ctx, const tool *tools, size_t n, entry *out) {
    toolgate_buf b = {NULL, 0};
    check(toolgate_unavailable_reasons(ctx, &b), "toolgate_unavailable_reasons");
    if (b.len != n) die("toolgate_unavailable_reasons: not one byte per tool", NULL);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t r = b.ptr[i];
        if (r) {
            out[k].name = tools[i].name;
            out[k].len = tools[i].len;
            out[k].reason = r;
            k++;
        }
    }
    toolgate_buf_free(b);
    return k;
}

int main(int argc, char **argv) {
    if (argc != 3) die("usage: c_bench TABLE.tgt N", NULL);
    const char *table_path = argv[1];
    char *end = NULL;
    size_t n = strtoul(argv[2], &end, 10);
    if (!end || *end || n == 0) die("N is not a positive number", argv[2]);
    size_t plen = strlen(table_path);
    if (plen < 4 || strcmp(table_path + plen - 4, ".tgt") != 0) die("TABLE must end in .tgt", table_path);
    char *tsv = malloc(plen + 16);
    if (!tsv) die("out of memory", NULL);
    memcpy(tsv, table_path, plen - 4);
    strcpy(tsv + plen - 4, ".tools.tsv");
    tool *tools = read_tools(tsv, n);

    size_t len;
    char *bytes = read_file(table_path, &len);
    toolgate_table *table = NULL;
    check(toolgate_table_load(bytes, len, &table), "toolgate_table_load");
    free(bytes);
    toolgate_context *ctx = NULL;
    check(toolgate_context_new(table, "config0", 7, TOOLGATE_ROLE_USER, "k0", 2, NULL, NULL, 0, &ctx),
          "toolgate_context_new");

    /* Agreement with the runtime before anything is timed. */
    for (size_t i = 0; i < n; i++) {
        toolgate_decision d;
        check(toolgate_decide(ctx, tools[i].name, tools[i].len, &d), "toolgate_decide");
        int32_t p = toolgate_decide_packed(ctx, tools[i].name, tools[i].len);
        if (d.allowed != tools[i].allowed || d.reason != tools[i].reason || p < 0 ||
            (p & TOOLGATE_PACKED_ALLOWED) != tools[i].allowed ||
            ((p & TOOLGATE_PACKED_REASON_MASK) >> TOOLGATE_PACKED_REASON_SHIFT) != tools[i].reason)
            die("the C ABI disagrees with the runtime on", tools[i].name);
    }
    entry *list = malloc(n * sizeof(entry));
    if (!list) die("out of memory", NULL);
    size_t k = unavailable_list(ctx, tools, n, list), j = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tools[i].listed) continue;
        if (j >= k || list[j].name != tools[i].name || list[j].reason != tools[i].reason)
            die("the C ABI's unavailable list differs from the runtime's at", tools[i].name);
        j++;
    }
    if (j != k) die("the C ABI lists more tools than the runtime", NULL);

    /* The names in stride order, as every path asks them. */
    const tool **seq = malloc(n * sizeof(tool *));
    if (!seq) die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) seq[i] = &tools[((i + 1) * 7919) % n]; /* bench/src/lib.rs walk() */

    const int reps = quick() ? 5 : 7;
    double times[8];
    size_t target = iters(1000000), passes = (target + n - 1) / n;
    for (int r = -1; r < reps; r++) {
        double t = now_ns();
        int64_t acc = 0;
        for (size_t p = 0; p < passes; p++)
            for (size_t i = 0; i < n; i++) acc += toolgate_decide_packed(ctx, seq[i]->name, seq[i]->len);
        sink = acc;
        if (r >= 0) times[r] = (now_ns() - t) / (double)(passes * n);
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    printf("ROW path=c op=decide n=%zu ns=%.1f iters=%zu reps=%d\n", n, times[reps / 2], passes * n, reps);

    /* The same names 64 a call through toolgate_decide_many (a gateway's
     * tools/list), checked against the runtime first; ns per name. */
    enum { MANY = 64 };
    const char **many_names = malloc(n * sizeof(char *));
    size_t *many_lens = malloc(n * sizeof(size_t));
    toolgate_decision *many_out = malloc(MANY * sizeof(toolgate_decision));
    if (!many_names || !many_lens || !many_out) die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) {
        many_names[i] = seq[i]->name;
        many_lens[i] = seq[i]->len;
    }
    for (size_t i = 0; i < n; i += MANY) {
        size_t c = n - i < MANY ? n - i : MANY;
        check(toolgate_decide_many(ctx, many_names + i, many_lens + i, c, many_out), "toolgate_decide_many");
        for (size_t j = 0; j < c; j++)
            if (many_out[j].allowed != seq[i + j]->allowed || many_out[j].reason != seq[i + j]->reason)
                die("toolgate_decide_many disagrees with the runtime on", seq[i + j]->name);
    }
    for (int r = -1; r < reps; r++) {
        double t = now_ns();
        int64_t acc = 0;
        for (size_t p = 0; p < passes; p++)
            for (size_t i = 0; i < n; i += MANY) {
                size_t c = n - i < MANY ? n - i : MANY;
                acc += toolgate_decide_many(ctx, many_names + i, many_lens + i, c, many_out) + many_out[0].reason;
            }
        sink = acc;
        if (r >= 0) times[r] = (now_ns() - t) / (double)(passes * n);
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    printf("ROW path=c-many op=decide n=%zu ns=%.1f iters=%zu reps=%d\n", n, times[reps / 2], passes * n, reps);
    free(many_names);
    free(many_lens);
    free(many_out);

    size_t list_iters = iters(20000000 / n);
    for (int r = -1; r < reps; r++) {
        double t = now_ns();
        for (size_t i = 0; i < list_iters; i++) sink = (int64_t)unavailable_list(ctx, tools, n, list);
        if (r >= 0) times[r] = (now_ns() - t) / (double)list_iters;
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    printf("ROW path=c op=unavailable n=%zu ns=%.1f iters=%zu reps=%d\n", n, times[reps / 2], list_iters, reps);

    free(list);
    free(seq);
    for (size_t i = 0; i < n; i++) free(tools[i].name);
    free(tools);
    free(tsv);
    toolgate_context_free(ctx);
    toolgate_table_free(table);
    return 0;
}
