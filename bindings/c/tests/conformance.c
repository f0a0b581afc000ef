/* The C host: replays the whole conformance corpus (conformance/, see
 * docs/conformance.md) through libtoolgate, tests the API's error paths, and
 * reloads a table while threads decide. Built and run under valgrind by
 * .ci/run; any leak, overrun or disagreement fails it.
 *
 *   cc -std=c11 -Wall -Wextra -Werror -Ibindings/c/include \
 *      bindings/c/tests/conformance.c -Ltarget/debug -ltoolgate -lpthread \
 *      -o conformance && ./conformance conformance
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

/* ------------------------------------------------------ a tiny JSON reader */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jv {
  jtype t;
  int b;
  double n;
  char *s; /* J_STR: decoded UTF-8, NUL-terminated; slen bytes */
  size_t slen;
  struct jv **items; /* J_ARR items, J_OBJ values */
  struct jv **keys;  /* J_OBJ keys (J_STR) */
  size_t len;
  const char *raw; /* the value's text in the source */
  size_t rawlen;
} jv;

typedef struct {
  const char *p, *end;
  int err;
} jparser;

static void jfree(jv *v) {
  if (!v) return;
  free(v->s);
  for (size_t i = 0; i < v->len; i++) {
    if (v->items) jfree(v->items[i]);
    if (v->keys) jfree(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v);
}

static void skip_ws(jparser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')) ps->p++;
}

static jv *jnew(jtype t) {
  jv *v = calloc(1, sizeof(jv));
  if (!v) abort();
  v->t = t;
  return v;
}

static int hex4(const char *p, unsigned *out) {
  unsigned x = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    x <<= 4;
    if (c >= '0' && c <= '9') x |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') x |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') x |= (unsigned)(c - 'A' + 10);
    else return 0;
  }
  *out = x;
  return 1;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

static jv *parse_string(jparser *ps) {
  /* at '"' */
  ps->p++;
  size_t cap = 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) abort();
  while (ps->p < ps->end && *ps->p != '"') {
    if (n + 8 >= cap) { cap *= 2; buf = realloc(buf, cap); if (!buf) abort(); }
    char c = *ps->p++;
    if (c != '\\') { buf[n++] = c; continue; }
    if (ps->p >= ps->end) { ps->err = 1; break; }
    char e = *ps->p++;
    switch (e) {
      case '"': buf[n++] = '"'; break;
      case '\\': buf[n++] = '\\'; break;
      case '/': buf[n++] = '/'; break;
      case 'b': buf[n++] = '\b'; break;
      case 'f': buf[n++] = '\f'; break;
      case 'n': buf[n++] = '\n'; break;
      case 'r': buf[n++] = '\r'; break;
      case 't': buf[n++] = '\t'; break;
      case 'u': {
        unsigned cp, lo;
        if (ps->end - ps->p < 4 || !hex4(ps->p, &cp)) { ps->err = 1; break; }
        ps->p += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u' &&
            hex4(ps->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
          ps->p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        n += put_utf8(buf + n, cp);
        break;
      }
      default: ps->err = 1;
    }
  }
  if (ps->p >= ps->end) ps->err = 1;
  else ps->p++;
  jv *v = jnew(J_STR);
  buf[n] = 0;
  v->s = buf;
  v->slen = n;
  return v;
}

static jv *parse_value(jparser *ps);

static void push(jv *v, jv *key, jv *item, size_t *cap) {
  if (v->len == *cap) {
    *cap = *cap ? *cap * 2 : 4;
    v->items = realloc(v->items, *cap * sizeof(jv *));
    if (!v->items) abort();
    if (v->t == J_OBJ) { v->keys = realloc(v->keys, *cap * sizeof(jv *)); if (!v->keys) abort(); }
  }
  if (v->t == J_OBJ) v->keys[v->len] = key;
  v->items[v->len++] = item;
}

static jv *parse_value(jparser *ps) {
  skip_ws(ps);
  if (ps->p >= ps->end) { ps->err = 1; return jnew(J_NULL); }
  const char *start = ps->p;
  jv *v;
  char c = *ps->p;
  if (c == '"') {
    v = parse_string(ps);
  } else if (c == '{' || c == '[') {
    v = jnew(c == '{' ? J_OBJ : J_ARR);
    char close = c == '{' ? '}' : ']';
    size_t cap = 0;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
    } else {
      for (;;) {
        jv *key = NULL;
        if (v->t == J_OBJ) {
          skip_ws(ps);
          if (ps->p >= ps->end || *ps->p != '"') { ps->err = 1; break; }
          key = parse_string(ps);
          skip_ws(ps);
          if (ps->p >= ps->end || *ps->p != ':') { ps->err = 1; jfree(key); break; }
          ps->p++;
        }
        push(v, key, parse_value(ps), &cap);
        if (ps->err) break;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
        ps->err = 1;
        break;
      }
    }
  } else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
    v = jnew(J_BOOL);
    v->b = c == 't';
    ps->p += v->b ? 4 : 5;
  } else if (!strncmp(ps->p, "null", 4)) {
    v = jnew(J_NULL);
    ps->p += 4;
  } else {
    char *endp;
    v = jnew(J_NUM);
    v->n = strtod(ps->p, &endp);
    if (endp == ps->p) ps->err = 1;
    ps->p = endp;
  }
  v->raw = start;
  v->rawlen = (size_t)(ps->p - start);
  return v;
}

static jv *jparse(const char *text, size_t len) {
  jparser ps = {text, text + len, 0};
  jv *v = parse_value(&ps);
  skip_ws(&ps);
  if (ps.err || ps.p != ps.end) { jfree(v); return NULL; }
  return v;
}

static jv *jget(const jv *o, const char *key) {
  if (!o || o->t != J_OBJ) return NULL;
  for (size_t i = 0; i < o->len; i++)
    if (!strcmp(o->keys[i]->s, key)) return o->items[i];
  return NULL;
}

static int jeq(const jv *a, const jv *b) {
  if (!a || !b) return a == b;
  if (a->t != b->t) return 0;
  switch (a->t) {
    case J_NULL: return 1;
    case J_BOOL: return a->b == b->b;
    case J_NUM: return a->n == b->n;
    case J_STR: return a->slen == b->slen && !memcmp(a->s, b->s, a->slen);
    case J_ARR:
      if (a->len != b->len) return 0;
      for (size_t i = 0; i < a->len; i++) if (!jeq(a->items[i], b->items[i])) return 0;
      return 1;
    case J_OBJ:
      if (a->len != b->len) return 0;
      for (size_t i = 0; i < a->len; i++) if (!jeq(a->items[i], jget(b, a->keys[i]->s))) return 0;
      return 1;
  }
  return 0;
}

/* --------------------------------------------------------------- helpers */

static long passed, failed;
static const char *current_case = "";

#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      if (failed < 30) {                                                 \
        fprintf(stderr, "FAIL %s (%s:%d): ", current_case, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                    \
        fprintf(stderr, "\n");                                           \
      }                                                                  \
      ok = 0;                                                            \
    }                                                                    \
  } while (0)

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) abort();
  size_t r;
  while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) { cap *= 2; buf = realloc(buf, cap); if (!buf) abort(); }
  }
  fclose(f);
  *len = n;
  return buf;
}

static char *path_join(const char *dir, const char *rel) {
  size_t n = strlen(dir) + strlen(rel) + 2;
  char *p = malloc(n);
  if (!p) abort();
  snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

static const char *corpus_dir;

/* The last error's message (owned by the caller). */
static char *last_error(int32_t *code) {
  toolgate_buf b;
  int32_t c = toolgate_last_error(&b);
  if (code) *code = c;
  char *s = malloc(b.len + 1);
  if (!s) abort();
  memcpy(s, b.ptr ? (const char *)b.ptr : "", b.len);
  s[b.len] = 0;
  toolgate_buf_free(b);
  return s;
}

/* Parse a returned buffer as JSON and free it. */
static jv *buf_json(toolgate_buf b) {
  jv *v = jparse((const char *)b.ptr, b.len);
  toolgate_buf_free(b);
  return v;
}

static int buf_eq_str(toolgate_buf b, const jv *want) {
  int eq = want && want->t == J_STR && b.len == want->slen && !memcmp(b.ptr, want->s, b.len);
  toolgate_buf_free(b);
  return eq;
}

static const char *const REASONS[8] = {NULL, "notRegistered", "toolDisabled", "requiresAdmin", "notInProfile",
                                       "configurationGroup", "configurationExcluded", "trustZone"};
static const char LETTERS[8] = {0, 'n', 'd', 'a', 'p', 'g', 'x', 'z'};
static char *messages[8];
static char *prompt_heading;

static char letter_of(toolgate_decision d) {
  if (d.allowed && d.reason == 0 && !d.observed_only) return d.needs_approval ? 'A' : 'Y';
  if (d.allowed && d.reason == TOOLGATE_REASON_TRUST_ZONE && d.observed_only) return d.needs_approval ? 'B' : 'O';
  if (!d.allowed && d.reason >= 1 && d.reason <= 7 && !d.observed_only) return LETTERS[d.reason];
  return '?';
}

static int reason_from_code(const jv *r) {
  if (!r || r->t == J_NULL) return 0;
  for (int i = 1; i < 8; i++) if (r->t == J_STR && !strcmp(r->s, REASONS[i])) return i;
  return -1;
}

static int decision_matches(toolgate_decision d, const jv *want) {
  const jv *a = jget(want, "allowed"), *o = jget(want, "observedOnly"), *n = jget(want, "needsApproval");
  return a && o && d.allowed == (uint8_t)a->b && d.observed_only == (uint8_t)o->b &&
         d.needs_approval == (uint8_t)(n && n->b) && (int)d.reason == reason_from_code(jget(want, "reason"));
}

static int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

static char *hex_decode(const jv *h, size_t *len) {
  *len = h->slen / 2;
  char *out = malloc(*len + 1);
  if (!out) abort();
  for (size_t i = 0; i < *len; i++) out[i] = (char)(hexval(h->s[2 * i]) << 4 | hexval(h->s[2 * i + 1]));
  return out;
}

/* Tables of the corpus, loaded once each. */
#define MAX_TABLES 512
static struct { char *path; toolgate_table *t; } tables[MAX_TABLES];
static size_t n_tables;

static toolgate_table *table_at(const char *rel) {
  for (size_t i = 0; i < n_tables; i++) if (!strcmp(tables[i].path, rel)) return tables[i].t;
  char *p = path_join(corpus_dir, rel);
  size_t len;
  char *bytes = read_file(p, &len);
  free(p);
  if (!bytes) return NULL;
  toolgate_table *t = NULL;
  if (toolgate_table_load(bytes, len, &t) != TOOLGATE_OK) t = NULL;
  free(bytes);
  if (!t || n_tables == MAX_TABLES) { toolgate_table_free(t); return NULL; }
  tables[n_tables].path = strdup(rel);
  tables[n_tables].t = t;
  n_tables++;
  return t;
}

static const char *s_or_null(const jv *v, size_t *len) {
  if (!v || v->t != J_STR) { *len = 0; return NULL; }
  *len = v->slen;
  return v->s;
}

static const char *load_error_name(int32_t s) {
  switch (s) {
    case TOOLGATE_ERR_LOAD_NOT_A_TABLE: return "notATable";
    case TOOLGATE_ERR_LOAD_VERSION: return "version";
    case TOOLGATE_ERR_LOAD_TRUNCATED: return "truncated";
    case TOOLGATE_ERR_LOAD_TRAILING_BYTES: return "trailingBytes";
    case TOOLGATE_ERR_LOAD_CHECKSUM: return "checksum";
    case TOOLGATE_ERR_LOAD_CORRUPT: return "corrupt";
    default: return "?";
  }
}

/* ----------------------------------------------------------------- cases */

static int case_load(const jv *c, const jv *e) {
  int ok = 1;
  size_t len;
  char *bytes;
  const jv *tp = jget(c, "table");
  if (tp) {
    char *p = path_join(corpus_dir, tp->s);
    bytes = read_file(p, &len);
    free(p);
  } else {
    bytes = hex_decode(jget(c, "bytesHex"), &len);
  }
  if (!bytes) { CHECK(0, "cannot read table"); return 0; }
  toolgate_table *t = NULL;
  int32_t s = toolgate_table_load(bytes, len, &t);
  free(bytes);
  if (jget(e, "ok")->b) {
    CHECK(s == TOOLGATE_OK && t, "load failed with %d", s);
    if (!t) return 0;
    toolgate_buf b;
    CHECK(toolgate_table_digest_hex(t, &b) == TOOLGATE_OK, "digest");
    CHECK(buf_eq_str(b, jget(e, "digest")), "digest differs");
    const jv *tools = jget(e, "tools");
    uint32_t n = 0;
    CHECK(toolgate_table_tool_count(t, &n) == TOOLGATE_OK && n == tools->len, "tool count %u", n);
    for (uint32_t i = 0; i < n && i < tools->len; i++) {
      CHECK(toolgate_table_tool_name(t, i, &b) == TOOLGATE_OK, "tool_name");
      CHECK(buf_eq_str(b, tools->items[i]), "tool %u name", i);
      uint32_t id = 0;
      CHECK(toolgate_table_tool_id(t, tools->items[i]->s, tools->items[i]->slen, &id) == TOOLGATE_OK && id == i,
            "tool_id of %s", tools->items[i]->s);
    }
    CHECK(toolgate_table_configurations_json(t, &b) == TOOLGATE_OK, "configurations");
    jv *cfgs = buf_json(b);
    CHECK(jeq(cfgs, jget(e, "configurations")), "configurations differ");
    jfree(cfgs);
    toolgate_table_free(t);
  } else {
    CHECK(t == NULL, "a bad table loaded");
    CHECK(!strcmp(load_error_name(s), jget(e, "error")->s), "error %d, want %s", s, jget(e, "error")->s);
    int32_t code;
    char *m = last_error(&code);
    CHECK(code == s && !strcmp(m, jget(e, "message")->s), "message %s", m);
    free(m);
    toolgate_table_free(t);
  }
  return ok;
}

static char *render_prompt(const jv *list) {
  size_t cap = 256, n = 0;
  char *out = malloc(cap);
  if (!out) abort();
  out[0] = 0;
  for (size_t i = 0; i < list->len; i++) {
    const jv *tool = jget(list->items[i], "tool");
    int r = reason_from_code(jget(list->items[i], "reason"));
    const char *msg = r > 0 ? messages[r] : "?";
    size_t need = strlen(prompt_heading) + tool->slen + strlen(msg) + 8;
    while (n + need >= cap) { cap *= 2; out = realloc(out, cap); if (!out) abort(); }
    if (i == 0) n += (size_t)sprintf(out + n, "%s\n", prompt_heading);
    n += (size_t)sprintf(out + n, "- %s: %s\n", tool->s, msg);
  }
  return out;
}

/* The context a case describes (`{"configuration", "role", "consumer",
 * "run", "enforcement"}`): toolgate_context_new's status. */
static int32_t context_of(toolgate_table *t, const jv *cx, toolgate_context **ctx) {
  size_t cfg_len, con_len, enf_len, run_len;
  const char *cfg = s_or_null(jget(cx, "configuration"), &cfg_len);
  const char *con = s_or_null(jget(cx, "consumer"), &con_len);
  const char *enf = s_or_null(jget(cx, "enforcement"), &enf_len);
  const char *run_text = s_or_null(jget(cx, "run"), &run_len);
  const char *role_s = jget(cx, "role")->s;
  int32_t role = !strcmp(role_s, "admin") ? TOOLGATE_ROLE_ADMIN : !strcmp(role_s, "user") ? TOOLGATE_ROLE_USER
                                                                                              : TOOLGATE_ROLE_NONE;
  toolgate_run *run = NULL;
  if (run_text && toolgate_run_from_json(run_text, run_len, &run) != TOOLGATE_OK) return -1;
  int32_t s = toolgate_context_new(t, cfg, cfg_len, role, con, con_len, run, enf, enf_len, ctx);
  toolgate_run_free(run);
  return s;
}

static int case_context(const jv *c, const jv *e) {
  int ok = 1;
  toolgate_table *t = table_at(jget(c, "table")->s);
  if (!t) { CHECK(0, "table"); return 0; }
  const char *cfg = jget(jget(c, "context"), "configuration")->s;
  toolgate_context *ctx = NULL;
  int32_t s = context_of(t, jget(c, "context"), &ctx);
  CHECK(s != -1, "run_from_json");
  const jv *err = jget(e, "error");
  if (err) {
    const char *code = jget(err, "code")->s;
    int32_t want = !strcmp(code, "unknownConsumer") ? TOOLGATE_ERR_UNKNOWN_CONSUMER : TOOLGATE_ERR_UNKNOWN_CONFIGURATION;
    CHECK(s == want && !ctx, "context made for %s (status %d, want %s)", cfg, s, code);
    char *m = last_error(NULL);
    CHECK(!strcmp(m, jget(err, "message")->s), "message %s", m);
    free(m);
    return ok;
  }
  CHECK(s == TOOLGATE_OK && ctx, "context_new %d", s);
  if (!ctx) return 0;

  /* Every tool by id, by name and packed. */
  const jv *by_id = jget(e, "decisionsById");
  uint32_t n = 0;
  toolgate_table_tool_count(t, &n);
  CHECK(n == by_id->slen, "tool count");
  for (uint32_t i = 0; i < n && i < by_id->slen; i++) {
    toolgate_decision d, dn;
    CHECK(toolgate_decide_id(ctx, i, &d) == TOOLGATE_OK, "decide_id");
    CHECK(letter_of(d) == by_id->s[i], "tool %u: %c, want %c", i, letter_of(d), by_id->s[i]);
    toolgate_buf name;
    toolgate_table_tool_name(t, i, &name);
    CHECK(toolgate_decide(ctx, (const char *)name.ptr, name.len, &dn) == TOOLGATE_OK, "decide");
    int32_t packed = toolgate_decide_packed(ctx, (const char *)name.ptr, name.len);
    toolgate_buf_free(name);
    CHECK(dn.allowed == d.allowed && dn.reason == d.reason && dn.observed_only == d.observed_only &&
              dn.needs_approval == d.needs_approval,
          "by name");
    CHECK(packed == (d.allowed | d.observed_only << 1 | d.reason << 2 | d.needs_approval << 5), "packed %d", packed);
  }
  toolgate_decision dummy;
  CHECK(toolgate_decide_id(ctx, n, &dummy) == TOOLGATE_ERR_OUT_OF_RANGE, "id out of range");

  /* Every tool and a stranger at once: what decide_id gives, one by one. */
  {
    toolgate_buf *bufs = calloc(n + 1, sizeof *bufs);
    const char **ptrs = calloc(n + 1, sizeof *ptrs);
    size_t *lens = calloc(n + 1, sizeof *lens);
    toolgate_decision *many = calloc(n + 1, sizeof *many);
    if (!bufs || !ptrs || !lens || !many) abort();
    for (uint32_t i = 0; i < n; i++) {
      toolgate_table_tool_name(t, i, &bufs[i]);
      ptrs[i] = (const char *)bufs[i].ptr;
      lens[i] = bufs[i].len;
    }
    ptrs[n] = "retired_zzz_tool";
    lens[n] = strlen(ptrs[n]);
    CHECK(toolgate_decide_many(ctx, ptrs, lens, n + 1, many) == TOOLGATE_OK, "decide_many");
    for (uint32_t i = 0; i < n && i < by_id->slen; i++)
      CHECK(letter_of(many[i]) == by_id->s[i], "many %u: %c, want %c", i, letter_of(many[i]), by_id->s[i]);
    CHECK(!many[n].allowed && many[n].reason == TOOLGATE_REASON_NOT_REGISTERED, "many: the stranger");
    /* The same names one after another in one buffer: each one's packed decision. */
    size_t total = 0;
    for (uint32_t i = 0; i <= n; i++) total += lens[i];
    char *text = malloc(total + 1);
    uint8_t *packed = calloc(n + 1, 1);
    if (!text || !packed) abort();
    size_t at = 0;
    for (uint32_t i = 0; i <= n; i++) {
      memcpy(text + at, ptrs[i], lens[i]);
      at += lens[i];
    }
    CHECK(toolgate_decide_many_packed(ctx, text, total, lens, n + 1, packed) == TOOLGATE_OK, "decide_many_packed");
    for (uint32_t i = 0; i <= n; i++)
      CHECK(packed[i] == (many[i].allowed | many[i].observed_only << 1 | many[i].reason << 2 | many[i].needs_approval << 5),
            "many packed %u: %d", i, packed[i]);
    free(text);
    free(packed);
    for (uint32_t i = 0; i < n; i++) toolgate_buf_free(bufs[i]);
    free(bufs);
    free(ptrs);
    free(lens);
    free(many);
  }

  const jv *names = jget(c, "decide"), *want = jget(e, "decisions");
  for (size_t i = 0; i < names->len; i++) {
    toolgate_buf b;
    CHECK(toolgate_decide_json(ctx, names->items[i]->s, names->items[i]->slen, &b) == TOOLGATE_OK, "decide_json");
    jv *got = buf_json(b);
    CHECK(jeq(got, want->items[i]), "decision of %s", names->items[i]->s);
    jfree(got);
    toolgate_decision d;
    CHECK(toolgate_decide(ctx, names->items[i]->s, names->items[i]->slen, &d) == TOOLGATE_OK, "decide");
    CHECK(decision_matches(d, want->items[i]), "decide %s", names->items[i]->s);
  }
  names = jget(c, "refuse");
  want = jget(e, "refusals");
  for (size_t i = 0; i < names->len; i++) {
    toolgate_buf b;
    CHECK(toolgate_refusal_json(ctx, names->items[i]->s, names->items[i]->slen, &b) == TOOLGATE_OK, "refusal");
    jv *got = buf_json(b);
    CHECK(jeq(got, want->items[i]), "refusal of %s", names->items[i]->s);
    jfree(got);
  }
  const jv *live = jget(c, "live");
  want = jget(e, "live");
  for (size_t i = 0; i < live->len; i++) {
    toolgate_decision d;
    CHECK(toolgate_decide_live(ctx, live->items[i]->raw, live->items[i]->rawlen, &d) == TOOLGATE_OK, "live");
    CHECK(decision_matches(d, want->items[i]), "live %zu", i);
    const jv *r = jget(want->items[i], "refusal");
    if (r) {
      toolgate_buf b;
      CHECK(toolgate_refusal_live_json(ctx, live->items[i]->raw, live->items[i]->rawlen, &b) == TOOLGATE_OK, "rl");
      jv *got = buf_json(b);
      CHECK(jeq(got, r), "live refusal %zu", i);
      jfree(got);
    }
  }
  /* Live tools whose names break the naming rule: refused with the exact message. */
  const jv *rejected = jget(c, "liveRejected");
  want = jget(e, "liveRejected");
  for (size_t i = 0; rejected && i < rejected->len; i++) {
    toolgate_decision d = {1, 1, 1, 1};
    CHECK(toolgate_decide_live(ctx, rejected->items[i]->raw, rejected->items[i]->rawlen, &d) == TOOLGATE_ERR_ARGUMENT,
          "rejected live %zu decided", i);
    char *m = last_error(NULL);
    CHECK(m && !strcmp(m, want->items[i]->s), "rejected live %zu: %s, want %s", i, m ? m : "", want->items[i]->s);
    free(m);
    toolgate_buf rb = {(uint8_t *)1, 1};
    CHECK(toolgate_refusal_live_json(ctx, rejected->items[i]->raw, rejected->items[i]->rawlen, &rb) ==
                  TOOLGATE_ERR_ARGUMENT && rb.ptr == NULL,
          "rejected live %zu refused", i);
  }
  toolgate_buf b;
  CHECK(toolgate_unavailable_json(ctx, &b) == TOOLGATE_OK, "unavailable");
  jv *unavailable = buf_json(b);
  CHECK(unavailable && unavailable->t == J_ARR, "unavailable is an array");
  /* The two-column form: names, a tab, codes; lines in the same order. */
  CHECK(toolgate_unavailable_columns(ctx, &b) == TOOLGATE_OK, "columns");
  if (unavailable) {
    size_t want = 0;
    for (size_t i = 0; i < unavailable->len; i++) {
      const jv *u = unavailable->items[i];
      want += jget(u, "tool")->slen + strlen(jget(u, "reason")->s) + 2;
    }
    if (want > 0) want--; /* no separator after the last code */
    CHECK(b.len == want, "columns length %zu, want %zu", b.len, want);
    const char *names = (const char *)b.ptr, *tab = b.len ? memchr(names, '\t', b.len) : NULL;
    const char *codes = tab ? tab + 1 : NULL;
    for (size_t i = 0; tab && i < unavailable->len; i++) {
      const jv *tool = jget(unavailable->items[i], "tool"), *reason = jget(unavailable->items[i], "reason");
      size_t rl = strlen(reason->s);
      CHECK(!memcmp(names, tool->s, tool->slen) && !memcmp(codes, reason->s, rl), "column %zu", i);
      names += tool->slen + 1;
      codes += rl + 1;
    }
  }
  toolgate_buf_free(b);
  /* By id: one reason byte per tool, the list's entries at their ids, 0 elsewhere. */
  CHECK(toolgate_unavailable_reasons(ctx, &b) == TOOLGATE_OK, "reasons");
  CHECK(b.len == n && b.ptr && b.ptr[n] == 0, "reasons length %zu, want %u", b.len, n);
  if (unavailable && b.len == n) {
    char *want = malloc(n + 1);
    if (!want) abort();
    memset(want, 0, n + 1);
    for (size_t i = 0; i < unavailable->len; i++) {
      const jv *tool = jget(unavailable->items[i], "tool");
      uint32_t id = n;
      CHECK(toolgate_table_tool_id(t, tool->s, tool->slen, &id) == TOOLGATE_OK && id < n, "id");
      int r = reason_from_code(jget(unavailable->items[i], "reason"));
      if (id < n && r > 0) want[id] = (char)r;
    }
    CHECK(!memcmp(b.ptr, want, n), "reasons by id");
    const jv *marks = jget(e, "unavailableById");
    for (uint32_t i = 0; marks && marks->slen == n && i < n; i++) {
      char m = b.ptr[i] == 0 ? '.' : b.ptr[i] <= 7 ? LETTERS[b.ptr[i]] : '?';
      CHECK(m == marks->s[i], "reason byte of tool %u: %c, want %c", i, m, marks->s[i]);
    }
    free(want);
  }
  toolgate_buf_free(b);
  CHECK(toolgate_unavailable_reasons(NULL, &b) == TOOLGATE_ERR_NULL && b.ptr == NULL && b.len == 0, "reasons NULL");
  if (live->len > 0 && unavailable) {
    CHECK(toolgate_unavailable_with_live_json(ctx, live->raw, live->rawlen, &b) == TOOLGATE_OK, "with live");
    jv *with = buf_json(b);
    const jv *full = jget(e, "unavailableWithLive"), *tail = jget(e, "unavailableWithLiveTail");
    if (full) CHECK(jeq(with, full), "unavailable with live");
    if (tail && with) {
      CHECK(with->len == unavailable->len + tail->len, "tail length");
      for (size_t i = 0; i < tail->len && unavailable->len + i < with->len; i++)
        CHECK(jeq(with->items[unavailable->len + i], tail->items[i]), "tail %zu", i);
    }
    jfree(with);
    const jv *prompt_live = jget(e, "promptWithLive");
    if (prompt_live) {
      CHECK(toolgate_unavailable_prompt_with_live(ctx, live->raw, live->rawlen, &b) == TOOLGATE_OK, "prompt live");
      CHECK(buf_eq_str(b, prompt_live), "prompt with live tools");
    }
  }
  CHECK(toolgate_offered_json(ctx, &b) == TOOLGATE_OK, "offered");
  jv *offered = buf_json(b);
  CHECK(toolgate_unavailable_prompt(ctx, &b) == TOOLGATE_OK, "prompt");
  if (jget(e, "unavailableById")) {
    /* Compact: the lists by id, the prompt rendered from the list. */
    const jv *marks = jget(e, "unavailableById");
    char *got = calloc(n + 1, 1);
    if (!got) abort();
    memset(got, '.', n);
    for (size_t i = 0; unavailable && i < unavailable->len; i++) {
      const jv *tool = jget(unavailable->items[i], "tool");
      uint32_t id = 0;
      CHECK(toolgate_table_tool_id(t, tool->s, tool->slen, &id) == TOOLGATE_OK && id < n, "id");
      int r = reason_from_code(jget(unavailable->items[i], "reason"));
      if (id < n && r > 0) got[id] = LETTERS[r];
    }
    CHECK(marks->slen == n && !memcmp(got, marks->s, n), "unavailable by id %s, want %s", got, marks->s);
    free(got);
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!strchr("YOAB", by_id->s[i])) continue;
      uint32_t id = n;
      if (offered && k < offered->len)
        toolgate_table_tool_id(t, offered->items[k]->s, offered->items[k]->slen, &id);
      CHECK(id == i, "offered %zu", k);
      k++;
    }
    CHECK(offered && k == offered->len, "offered count");
    char *p = unavailable ? render_prompt(unavailable) : strdup("");
    CHECK(b.len == strlen(p) && !memcmp(b.ptr ? (const char *)b.ptr : "", p, b.len), "prompt");
    free(p);
    toolgate_buf_free(b);
  } else {
    CHECK(jeq(offered, jget(e, "offered")), "offered");
    CHECK(jeq(unavailable, jget(e, "unavailable")), "unavailable");
    CHECK(buf_eq_str(b, jget(e, "prompt")), "prompt");
  }
  jfree(offered);
  jfree(unavailable);
  toolgate_context_free(ctx);
  return ok;
}

/* A call checked with a grant, call after call in one context: the
 * decision, and the refusal (null: the call may run). The grants' ids are
 * this case's own, so this process's ledger of used grants answers as the
 * case's. */
static int case_call_granted(const jv *c, const jv *e) {
  int ok = 1;
  toolgate_table *t = table_at(jget(c, "table")->s);
  if (!t) { CHECK(0, "table"); return 0; }
  toolgate_context *ctx = NULL;
  CHECK(context_of(t, jget(c, "context"), &ctx) == TOOLGATE_OK && ctx, "context");
  if (!ctx) return 0;
  const jv *calls = jget(c, "calls"), *want = jget(e, "calls");
  CHECK(calls->len == want->len, "call count");
  for (size_t i = 0; i < calls->len && i < want->len; i++) {
    const jv *call = calls->items[i], *w = want->items[i];
    size_t args_len, grant_len, keys_len;
    const char *args = s_or_null(jget(call, "argumentsJson"), &args_len);
    const char *grant = s_or_null(jget(call, "grant"), &grant_len);
    const char *keys = s_or_null(jget(call, "approverKeys"), &keys_len);
    const jv *tool = jget(call, "tool");
    toolgate_decision d;
    toolgate_buf b;
    int32_t s = toolgate_check_call_granted(ctx, tool->s, tool->slen, args, args_len, grant, grant_len, keys, keys_len,
                                            (uint64_t)jget(call, "now")->n, &d, &b);
    CHECK(s == TOOLGATE_OK, "call %zu: status %d", i, s);
    if (s != TOOLGATE_OK) continue;
    CHECK(decision_matches(d, jget(w, "decision")), "call %zu: decision", i);
    jv *refusal = buf_json(b);
    CHECK(refusal && jeq(refusal, jget(w, "refusal")), "call %zu: refusal", i);
    jfree(refusal);
    CHECK(toolgate_approval_request_json(ctx, tool->s, tool->slen, args, args_len, "request-1", 9, &b) == TOOLGATE_OK,
          "call %zu: approval request", i);
    jv *request = buf_json(b);
    CHECK(request && jeq(request, jget(w, "approvalRequest")), "call %zu: approval request", i);
    jfree(request);
  }
  toolgate_context_free(ctx);
  return ok;
}

static int case_classify(const jv *c, const jv *e) {
  int ok = 1;
  const jv *tp = jget(c, "table");
  toolgate_table *t = tp && tp->t == J_STR ? table_at(tp->s) : NULL;
  const jv *a = jget(c, "answer");
  size_t body_len, origin_len, tool_len;
  char *body;
  const jv *hex = jget(a, "bodyHex");
  if (hex) {
    body = hex_decode(hex, &body_len);
  } else {
    const jv *bj = jget(a, "body");
    body_len = bj->slen;
    body = malloc(body_len + 1);
    if (!body) abort();
    memcpy(body, bj->s, body_len + 1);
  }
  const jv *st = jget(a, "httpStatus");
  int32_t status = st && st->t == J_NUM ? (int32_t)st->n : -1;
  const char *origin = s_or_null(jget(a, "origin"), &origin_len);
  const char *tool = s_or_null(jget(a, "tool"), &tool_len);
  toolgate_buf b;
  CHECK(toolgate_classify_json(t, body, body_len, status, origin, origin_len, tool, tool_len, &b) == TOOLGATE_OK,
        "classify");
  free(body);
  jv *got = buf_json(b);
  CHECK(jeq(got, e), "classification");
  jfree(got);
  return ok;
}

static int run_json_is(toolgate_run *r, const jv *want) {
  toolgate_buf b;
  if (toolgate_run_to_json(r, &b) != TOOLGATE_OK) return 0;
  return buf_eq_str(b, want);
}

static int case_run(const char *kind, const jv *c, const jv *e) {
  int ok = 1;
  if (!strcmp(kind, "runStart")) {
    toolgate_table *t = table_at(jget(c, "table")->s);
    const jv *cfg = jget(c, "configuration"), *skills = jget(c, "skills");
    toolgate_run *r = NULL;
    int32_t s = toolgate_run_start(t, cfg->s, cfg->slen, skills->raw, skills->rawlen, &r);
    if (jget(e, "ok")->b) {
      CHECK(s == TOOLGATE_OK && run_json_is(r, jget(e, "run")), "run start");
    } else {
      const char *code = jget(e, "error")->s;
      CHECK(s == (!strcmp(code, "unknownSkill") ? TOOLGATE_ERR_UNKNOWN_SKILL : TOOLGATE_ERR_UNKNOWN_CONFIGURATION) &&
                !r,
            "run start error %d", s);
      char *m = last_error(NULL);
      CHECK(!strcmp(m, jget(e, "message")->s), "message %s", m);
      free(m);
    }
    toolgate_run_free(r);
  } else {
    const jv *stored = jget(c, "stored"), *live = jget(c, "live");
    toolgate_run *s = NULL, *l = NULL, *r = NULL;
    CHECK(toolgate_run_from_json(stored->s, stored->slen, &s) == TOOLGATE_OK, "stored");
    if (live) {
      CHECK(toolgate_run_from_json(live->s, live->slen, &l) == TOOLGATE_OK, "live");
      CHECK(toolgate_run_resume(s, l, &r) == TOOLGATE_OK, "resume");
      CHECK(run_json_is(r, jget(e, "run")), "resumed");
    } else {
      CHECK(run_json_is(s, jget(e, "run")), "read back");
    }
    toolgate_run_free(s);
    toolgate_run_free(l);
    toolgate_run_free(r);
  }
  return ok;
}

/* ----------------------------------------------- the API's own error paths */

static int api_errors(void) {
  int ok = 1;
  current_case = "api-errors";
  CHECK(toolgate_abi_version() == TOOLGATE_ABI_VERSION, "abi version");
  toolgate_table *t = (toolgate_table *)1;
  CHECK(toolgate_table_load(NULL, 5, &t) == TOOLGATE_ERR_NULL && t == NULL, "NULL bytes");
  CHECK(toolgate_table_load("x", 1, NULL) == TOOLGATE_ERR_NULL, "NULL out");
  t = table_at("tables/acceptance-edit.tgt");
  toolgate_context *ctx = NULL;
  CHECK(toolgate_context_new(t, "other", 5, 7, NULL, 0, NULL, NULL, 0, &ctx) == TOOLGATE_ERR_ARGUMENT && !ctx, "role");
  CHECK(toolgate_context_new(NULL, "other", 5, 0, NULL, 0, NULL, NULL, 0, &ctx) == TOOLGATE_ERR_NULL, "table");
  CHECK(toolgate_context_new(t, "oth\xff", 4, 0, NULL, 0, NULL, NULL, 0, &ctx) == TOOLGATE_ERR_UTF8, "utf8");
  char *m = last_error(NULL);
  CHECK(strstr(m, "not UTF-8") != NULL, "utf8 message %s", m);
  free(m);
  CHECK(toolgate_context_new(t, "other", 5, TOOLGATE_ROLE_USER, NULL, 0, NULL, NULL, 0, &ctx) == TOOLGATE_OK, "ok");
  toolgate_decision d = {1, 1, 1, 1};
  CHECK(toolgate_decide(ctx, "\xc3", 1, &d) == TOOLGATE_ERR_UTF8, "name utf8");
  CHECK(toolgate_decide_packed(ctx, "\xc3", 1) == -TOOLGATE_ERR_UTF8, "packed utf8");
  CHECK(toolgate_decide_packed(NULL, "a", 1) == -TOOLGATE_ERR_NULL, "packed NULL");
  CHECK(toolgate_decide_packed(ctx, NULL, 0) == (TOOLGATE_REASON_NOT_REGISTERED << 2), "empty name");
  {
    const char *two[2] = {"a", "\xff"};
    size_t two_lens[2] = {1, 1};
    toolgate_decision two_out[2] = {{1, 1, 1, 1}, {1, 1, 1, 1}};
    CHECK(toolgate_decide_many(ctx, two, two_lens, 2, two_out) == TOOLGATE_ERR_UTF8, "many utf8");
    CHECK(!two_out[0].allowed && !two_out[1].allowed && !two_out[0].reason, "many utf8 refuses all");
    CHECK(toolgate_decide_many(ctx, NULL, two_lens, 2, two_out) == TOOLGATE_ERR_NULL, "many NULL names");
    CHECK(toolgate_decide_many(ctx, NULL, NULL, 0, NULL) == TOOLGATE_OK, "many none");
    uint8_t packed_out[2] = {7, 7};
    CHECK(toolgate_decide_many_packed(ctx, "ab", 2, two_lens, 2, packed_out) == TOOLGATE_OK, "packed two");
    CHECK(toolgate_decide_many_packed(ctx, "abc", 3, two_lens, 2, packed_out) == TOOLGATE_ERR_ARGUMENT,
          "packed lengths short of the buffer");
    CHECK(packed_out[0] == 0 && packed_out[1] == 0, "packed error refuses all");
    CHECK(toolgate_decide_many_packed(ctx, "a\xff", 2, two_lens, 2, packed_out) == TOOLGATE_ERR_UTF8, "packed utf8");
    CHECK(toolgate_decide_many_packed(ctx, NULL, 0, NULL, 0, NULL) == TOOLGATE_OK, "packed none");
  }
  CHECK(toolgate_decide_live(ctx, "{\"name\":\"x\",\"group\":\"editing\"}", 30, &d) == TOOLGATE_ERR_ARGUMENT,
        "live without enabled");
  const char *extra = "{\"name\":\"x\",\"group\":\"g\",\"remote\":false,\"enabled\":true,\"adminOnly\":false,"
                      "\"class\":null,\"trusted\":true}";
  CHECK(toolgate_decide_live(ctx, extra, strlen(extra), &d) == TOOLGATE_ERR_ARGUMENT, "unknown live field");
  toolgate_buf b = {(uint8_t *)1, 1};
  CHECK(toolgate_unavailable_with_live_json(ctx, "{}", 2, &b) == TOOLGATE_ERR_ARGUMENT && b.ptr == NULL, "live[]");
  CHECK(toolgate_classify_json(NULL, "{}", 2, 70000, NULL, 0, NULL, 0, &b) == TOOLGATE_ERR_ARGUMENT, "status");
  CHECK(toolgate_table_tool_name(t, 99, &b) == TOOLGATE_ERR_OUT_OF_RANGE && b.ptr == NULL, "name id");
  uint32_t id = 7;
  CHECK(toolgate_table_tool_id(t, "nope", 4, &id) == TOOLGATE_ERR_NOT_FOUND, "tool id");
  toolgate_run *r = NULL;
  toolgate_table *own_check = NULL;
  CHECK(toolgate_run_start(t, "other", 5, "[1]", 3, &r) == TOOLGATE_ERR_ARGUMENT && !r, "skills json");
  CHECK(toolgate_run_resume(NULL, NULL, &r) == TOOLGATE_ERR_NULL, "resume NULL");
  /* An optional string passed as NULL with a length is an error, never "absent". */
  toolgate_context *bad = (toolgate_context *)1;
  CHECK(toolgate_context_new(t, "editor-chat", 11, TOOLGATE_ROLE_USER, NULL, 11, NULL, NULL, 0, &bad) ==
                TOOLGATE_ERR_NULL && bad == NULL,
        "consumer NULL with a length");
  CHECK(toolgate_context_new(t, "editor-chat", 11, TOOLGATE_ROLE_USER, NULL, 0, NULL, NULL, 7, &bad) ==
                TOOLGATE_ERR_NULL && bad == NULL,
        "enforcement NULL with a length");
  CHECK(toolgate_table_load("x", (size_t)-1, &own_check) == TOOLGATE_ERR_ARGUMENT && own_check == NULL,
        "a length past isize::MAX");
  toolgate_context_free(ctx);
  toolgate_context_free(NULL);
  toolgate_table_free(NULL);
  toolgate_run_free(NULL);
  toolgate_handle_free(NULL);
  toolgate_buf_free((toolgate_buf){NULL, 0});
  /* A context outlives the table handle it was made from. */
  size_t len;
  char *p = path_join(corpus_dir, "tables/acceptance-edit.tgt");
  char *bytes = read_file(p, &len);
  free(p);
  toolgate_table *own = NULL;
  CHECK(toolgate_table_load(bytes, len, &own) == TOOLGATE_OK, "load");
  free(bytes);
  CHECK(toolgate_context_new(own, "editor-chat", 11, TOOLGATE_ROLE_USER, NULL, 0, NULL, NULL, 0, &ctx) == TOOLGATE_OK,
        "ctx");
  toolgate_table_free(own);
  CHECK(toolgate_decide_packed(ctx, "delete_record", 13) == (TOOLGATE_REASON_CONFIGURATION_EXCLUDED << 2), "after");
  toolgate_context_free(ctx);
  return ok;
}

/* ----------------------------------------------------------- hot reload */

typedef struct {
  toolgate_handle *h;
  long decisions, bad;
} reader;

static void *read_loop(void *arg) {
  reader *r = arg;
  for (int i = 0; i < 3000; i++) {
    toolgate_table *t = NULL;
    toolgate_context *ctx = NULL;
    if (toolgate_handle_current(r->h, &t) != TOOLGATE_OK) { r->bad++; continue; }
    if (toolgate_context_new(t, "editor-chat", 11, TOOLGATE_ROLE_USER, NULL, 0, NULL, NULL, 0, &ctx) != TOOLGATE_OK) {
      r->bad++;
      toolgate_table_free(t);
      continue;
    }
    /* The answer must be the one of the table the context holds. */
    toolgate_buf digest;
    toolgate_table_digest_hex(t, &digest);
    int32_t p = toolgate_decide_packed(ctx, "delete_record", 13);
    uint32_t n = 0;
    toolgate_table_tool_count(t, &n);
    int excluded_table = p == (TOOLGATE_REASON_CONFIGURATION_EXCLUDED << 2);
    if (!(excluded_table || p == 1)) r->bad++;
    toolgate_buf_free(digest);
    r->decisions++;
    toolgate_context_free(ctx);
    toolgate_table_free(t);
  }
  return NULL;
}

static int hot_reload(void) {
  int ok = 1;
  current_case = "hot-reload";
  size_t la, lb;
  char *pa = path_join(corpus_dir, "tables/acceptance-edit.tgt");
  char *pb = path_join(corpus_dir, "tables/acceptance-edit-exclusion-removed.tgt");
  char *a = read_file(pa, &la), *b = read_file(pb, &lb);
  free(pa);
  free(pb);
  toolgate_handle *h = NULL;
  CHECK(a && b && toolgate_handle_new(a, la, &h) == TOOLGATE_OK, "handle");
  if (!h) { free(a); free(b); return 0; }
  reader rs[2] = {{h, 0, 0}, {h, 0, 0}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, read_loop, &rs[i]);
  for (int i = 0; i < 400; i++) {
    CHECK(toolgate_handle_reload(h, i % 2 ? a : b, i % 2 ? la : lb) == TOOLGATE_OK, "reload");
    /* A corrupt update never replaces the table. */
    b[lb / 2] ^= 1;
    CHECK(toolgate_handle_reload(h, b, lb) == TOOLGATE_ERR_LOAD_CHECKSUM, "corrupt reload");
    b[lb / 2] ^= 1;
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CHECK(rs[0].bad == 0 && rs[1].bad == 0, "bad answers %ld %ld", rs[0].bad, rs[1].bad);
  CHECK(rs[0].decisions == 3000 && rs[1].decisions == 3000, "decisions");
  /* After the last reload (i = 399: table a) the exclusion holds. */
  toolgate_table *t = NULL;
  toolgate_context *ctx = NULL;
  toolgate_handle_current(h, &t);
  toolgate_context_new(t, "editor-chat", 11, TOOLGATE_ROLE_USER, NULL, 0, NULL, NULL, 0, &ctx);
  CHECK(toolgate_decide_packed(ctx, "delete_record", 13) == (TOOLGATE_REASON_CONFIGURATION_EXCLUDED << 2), "last");
  toolgate_context_free(ctx);
  toolgate_table_free(t);
  toolgate_handle_free(h);
  free(a);
  free(b);
  return ok;
}

/* toolgate_check_call_granted's own error paths: nothing is checked, the
 * decision is a refusal, the buffer empty. */
static int grant_errors(void) {
  int ok = 1;
  current_case = "grant-errors";
  toolgate_table *t = table_at("tables/approvals.tgt");
  toolgate_context *ctx = NULL;
  CHECK(t && toolgate_context_new(t, "support-desk", 12, TOOLGATE_ROLE_USER, NULL, 0, NULL, NULL, 0, &ctx) ==
                 TOOLGATE_OK,
        "context");
  if (!ctx) return 0;
  toolgate_decision d = {1, 1, 1, 1};
  toolgate_buf b = {(uint8_t *)1, 1};
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, "[1]", 3, "{}", 2, NULL, 0, 1, &d, &b) ==
                TOOLGATE_ERR_ARGUMENT && !d.allowed && !d.reason && !d.needs_approval && b.ptr == NULL && b.len == 0,
        "arguments not an object");
  char *m = last_error(NULL);
  CHECK(!strcmp(m, "arguments: expected a JSON object, got an array"), "message %s", m);
  free(m);
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, "{\"a\":1,\"a\":2}", 13, NULL, 0, NULL, 0, 1, &d, &b) ==
            TOOLGATE_ERR_ARGUMENT,
        "a key given twice");
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, "{", 1, NULL, 0, NULL, 0, 1, &d, &b) == TOOLGATE_ERR_ARGUMENT,
        "arguments not JSON");
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, NULL, 0, "{}", 2, "x", 1, 1, &d, &b) == TOOLGATE_ERR_KEYS,
        "keys not PEM");
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, NULL, 0, NULL, 3, NULL, 0, 1, &d, &b) == TOOLGATE_ERR_NULL,
        "grant NULL with a length");
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, NULL, 4, NULL, 0, NULL, 0, 1, &d, &b) == TOOLGATE_ERR_NULL,
        "arguments NULL with a length");
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, NULL, 0, NULL, 0, NULL, 0, 1, NULL, &b) ==
                TOOLGATE_ERR_NULL && b.ptr == NULL,
        "NULL decision");
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, NULL, 0, NULL, 0, NULL, 0, 1, &d, NULL) ==
                TOOLGATE_ERR_NULL && !d.allowed,
        "NULL refusal");
  CHECK(toolgate_check_call_granted(NULL, "refund.issue", 12, NULL, 0, NULL, 0, NULL, 0, 1, &d, &b) == TOOLGATE_ERR_NULL,
        "NULL context");
  CHECK(toolgate_approval_request_json(ctx, "refund.issue", 12, "[1]", 3, NULL, 0, &b) == TOOLGATE_ERR_ARGUMENT &&
            b.ptr == NULL && b.len == 0,
        "approval request: arguments not an object");
  CHECK(toolgate_approval_request_json(ctx, "refund.issue", 12, NULL, 0, NULL, 2, &b) == TOOLGATE_ERR_NULL,
        "approval request: request id NULL with a length");
  CHECK(toolgate_approval_request_json(ctx, "refund.issue", 12, NULL, 0, NULL, 0, NULL) == TOOLGATE_ERR_NULL,
        "approval request: NULL out");
  CHECK(toolgate_check_call_granted(ctx, "refund\xff", 7, NULL, 0, NULL, 0, NULL, 0, 1, &d, &b) == TOOLGATE_ERR_UTF8,
        "name not UTF-8");
  /* No grant, the system clock (now 0): asked for approval, no grant error. */
  CHECK(toolgate_check_call_granted(ctx, "refund.issue", 12, NULL, 0, NULL, 0, NULL, 0, 0, &d, &b) == TOOLGATE_OK &&
            d.allowed && d.needs_approval,
        "no grant");
  jv *r = buf_json(b);
  CHECK(r && !strcmp(jget(r, "kind")->s, "approvalRequired") && jget(r, "grantError") == NULL, "approvalRequired");
  jfree(r);
  /* A tool that needs no approval runs: its grant is not read. */
  CHECK(toolgate_check_call_granted(ctx, "payment.status", 14, NULL, 0, "x", 1, NULL, 0, 0, &d, &b) == TOOLGATE_OK &&
            d.allowed && !d.needs_approval && b.len == 4 && !memcmp(b.ptr, "null", 4),
        "no approval needed");
  toolgate_buf_free(b);
  toolgate_context_free(ctx);
  return ok;
}

/* ----------------------------------------------------------------- main */

static void count(int ok) {
  if (ok) passed++;
  else failed++;
}

/* Requiring a signature: conformance/signed/ (expect.json gives each file's
 * outcome under trusted.pub), then a verified handle keeps its table when a
 * reload is refused. */
static int signatures(void) {
  int ok = 1;
  current_case = "signatures";
  size_t kl, el;
  char *kp = path_join(corpus_dir, "signed/trusted.pub"), *ep = path_join(corpus_dir, "signed/expect.json");
  char *keys = read_file(kp, &kl), *etext = read_file(ep, &el);
  free(kp);
  free(ep);
  jv *expect = etext ? jparse(etext, el) : NULL;
  CHECK(keys && expect && expect->len == 6, "signed fixtures");
  if (!keys || !expect) { free(keys); free(etext); jfree(expect); return 0; }
  static const char *errors[] = {"unsigned", "untrustedKey", "badSignature", "checksum"};
  static const int32_t codes[] = {TOOLGATE_ERR_LOAD_UNSIGNED, TOOLGATE_ERR_LOAD_UNTRUSTED_KEY,
                                  TOOLGATE_ERR_LOAD_BAD_SIGNATURE, TOOLGATE_ERR_LOAD_CHECKSUM};
  for (size_t i = 0; i < expect->len; i++) {
    const char *name = expect->keys[i]->s;
    const jv *e = expect->items[i];
    char *p = path_join(corpus_dir, "signed"), *fp = path_join(p, name);
    size_t len;
    char *bytes = read_file(fp, &len);
    free(p);
    free(fp);
    CHECK(bytes != NULL, "read %s", name);
    if (!bytes) continue;
    toolgate_table *t = NULL;
    int32_t s = toolgate_table_load_verified(bytes, len, keys, kl, &t);
    free(bytes);
    if (jget(e, "ok")->b) {
      CHECK(s == TOOLGATE_OK && t, "%s: %d", name, s);
      toolgate_buf b;
      if (t && toolgate_table_digest_hex(t, &b) == TOOLGATE_OK) CHECK(buf_eq_str(b, jget(e, "digest")), "%s digest", name);
    } else {
      int32_t want = -1;
      for (size_t k = 0; k < 4; k++) if (!strcmp(jget(e, "error")->s, errors[k])) want = codes[k];
      int32_t code = 0;
      char *m = last_error(&code);
      CHECK(s == want && code == want && !t, "%s: status %d, expected %d", name, s, want);
      CHECK(m && !strcmp(m, jget(e, "message")->s), "%s: message %s", name, m ? m : "(none)");
      free(m);
    }
    toolgate_table_free(t);
  }
  /* A verified handle: refused reloads keep the table, a signed one swaps. */
  size_t la, lu, ln;
  char *pa = path_join(corpus_dir, "signed/signed.tgt"), *pu = path_join(corpus_dir, "signed/unsigned.tgt"),
       *pn = path_join(corpus_dir, "signed/signed-next.tgt");
  char *a = read_file(pa, &la), *u = read_file(pu, &lu), *n = read_file(pn, &ln);
  free(pa);
  free(pu);
  free(pn);
  toolgate_handle *h = NULL;
  CHECK(a && u && n && toolgate_handle_new_verified(a, la, keys, kl, &h) == TOOLGATE_OK, "verified handle");
  if (h) {
    CHECK(toolgate_handle_reload(h, u, lu) == TOOLGATE_ERR_LOAD_UNSIGNED, "unsigned reload refused");
    toolgate_table *t = NULL;
    toolgate_buf b;
    toolgate_handle_current(h, &t);
    toolgate_table_digest_hex(t, &b);
    CHECK(buf_eq_str(b, jget(jget(expect, "signed.tgt"), "digest")), "current kept");
    toolgate_table_free(t);
    CHECK(toolgate_handle_reload(h, n, ln) == TOOLGATE_OK, "signed reload");
    toolgate_handle_current(h, &t);
    toolgate_table_digest_hex(t, &b);
    CHECK(buf_eq_str(b, jget(jget(expect, "signed-next.tgt"), "digest")), "swapped");
    toolgate_table_free(t);
    toolgate_handle_free(h);
  }
  /* Keys that are not public keys. */
  toolgate_table *t = NULL;
  CHECK(toolgate_table_load_verified(a, la, "x", 1, &t) == TOOLGATE_ERR_KEYS && !t, "bad keys");
  free(a);
  free(u);
  free(n);
  free(keys);
  free(etext);
  jfree(expect);
  return ok;
}

int main(int argc, char **argv) {
  corpus_dir = argc > 1 ? argv[1] : "conformance";
  size_t len;
  char *mp = path_join(corpus_dir, "manifest.json");
  char *mtext = read_file(mp, &len);
  free(mp);
  if (!mtext) { fprintf(stderr, "cannot read %s/manifest.json: %s\n", corpus_dir, strerror(errno)); return 2; }
  jv *manifest = jparse(mtext, len);
  if (!manifest) { fprintf(stderr, "manifest is not JSON\n"); return 2; }
  const jv *gates = jget(manifest, "gates");
  for (size_t i = 0; i < gates->len && i < 7; i++) {
    messages[i + 1] = strdup(jget(gates->items[i], "message")->s);
    if (strcmp(jget(gates->items[i], "code")->s, REASONS[i + 1])) { fprintf(stderr, "gate order\n"); return 2; }
  }
  /* The gate list is the library's: the corpus' and this host's tables agree with it. */
  toolgate_buf cb;
  if (toolgate_codes_json(&cb) != TOOLGATE_OK) { fprintf(stderr, "toolgate_codes_json\n"); return 2; }
  jv *codes = buf_json(cb);
  const jv *lib_gates = codes ? jget(codes, "gates") : NULL;
  if (!lib_gates || !jeq(lib_gates, gates)) { fprintf(stderr, "the manifest's gates are not the library's\n"); return 2; }
  for (size_t i = 0; i < lib_gates->len; i++) {
    const jv *g = lib_gates->items[i];
    if (jget(g, "number")->n != (double)(i + 1) || strcmp(jget(g, "code")->s, REASONS[i + 1]) ||
        jget(g, "letter")->s[0] != LETTERS[i + 1]) {
      fprintf(stderr, "gate %zu of the library differs from this host's tables\n", i);
      return 2;
    }
  }
  jfree(codes);
  prompt_heading = strdup(jget(manifest, "promptHeading")->s);
  const jv *suites = jget(manifest, "suites");
  for (size_t si = 0; si < suites->len; si++) {
    const jv *sp = jget(suites->items[si], "path");
    char *p = path_join(corpus_dir, sp->s);
    char *text = read_file(p, &len);
    free(p);
    jv *suite = text ? jparse(text, len) : NULL;
    if (!suite) { fprintf(stderr, "cannot read suite %s\n", sp->s); failed++; free(text); continue; }
    const jv *cases = jget(suite, "cases");
    if ((double)cases->len != jget(suites->items[si], "cases")->n) { fprintf(stderr, "%s: case count\n", sp->s); failed++; }
    for (size_t ci = 0; ci < cases->len; ci++) {
      const jv *c = cases->items[ci], *e = jget(c, "expect");
      current_case = jget(c, "id")->s;
      const char *kind = jget(c, "kind")->s;
      if (!strcmp(kind, "load")) count(case_load(c, e));
      else if (!strcmp(kind, "context")) count(case_context(c, e));
      else if (!strcmp(kind, "classify")) count(case_classify(c, e));
      else if (!strcmp(kind, "callGranted")) count(case_call_granted(c, e));
      else if (!strncmp(kind, "run", 3)) count(case_run(kind, c, e));
      else { fprintf(stderr, "unknown kind %s\n", kind); failed++; }
    }
    jfree(suite);
    free(text);
  }
  count(api_errors());
  count(hot_reload());
  count(signatures());
  count(grant_errors());
  for (size_t i = 0; i < n_tables; i++) { toolgate_table_free(tables[i].t); free(tables[i].path); }
  for (int i = 1; i < 8; i++) free(messages[i]);
  free(prompt_heading);
  jfree(manifest);
  free(mtext);
  printf("C-host: %ld passed, %ld failed\n", passed, failed);
  return failed ? 1 : 0;
}
